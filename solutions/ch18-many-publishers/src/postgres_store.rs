//! Given: the PostgreSQL store's connection. Connecting, working inside a schema of your own,
//! the migration, and a few plain statements for examples and tests. The claim and the lease are
//! yours, in `src/lib.rs`.
//!
//! The PostgreSQL track runs when the environment variable [`URL_VARIABLE`] holds a connection
//! URL, for example `postgres://workbook:workbook@127.0.0.1:5432/workbook`.

use postgres::{Client, NoTls};

use crate::model::{Millis, ORDER_PLACED, OutboxRow};
use crate::store::{Result, StoreError};

/// The schema: `src/sql/postgres.sql`.
pub const SCHEMA: &str = include_str!("sql/postgres.sql");

/// The environment variable that holds the PostgreSQL URL.
pub const URL_VARIABLE: &str = "WORKBOOK_POSTGRES_URL";

/// One worker's connection to a PostgreSQL outbox.
pub struct PostgresStore {
    pub(crate) client: Client,
    schema: String,
}

impl PostgresStore {
    /// The URL in [`URL_VARIABLE`], if it is set and not empty.
    pub fn url_from_env() -> Option<String> {
        std::env::var(URL_VARIABLE)
            .ok()
            .filter(|url| !url.trim().is_empty())
    }

    /// Connects to `url` and works inside the database schema `schema` (its `search_path`), so
    /// that tests running side by side each have an outbox of their own. `schema` is made of
    /// lowercase letters, digits and `_`. Run [`PostgresStore::migrate`] once to create it.
    pub fn connect(url: &str, schema: &str) -> Result<Self> {
        let valid = !schema.is_empty()
            && schema
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            return Err(StoreError::Corrupt(format!(
                "invalid schema name {schema:?}"
            )));
        }
        let mut client = Client::connect(url, NoTls)?;
        client.batch_execute(&format!("SET search_path TO {schema}"))?;
        Ok(Self {
            client,
            schema: schema.to_owned(),
        })
    }

    /// Creates the schema and the outbox table in it, if they do not exist yet.
    pub fn migrate(&mut self) -> Result<()> {
        self.client
            .batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {}", self.schema))?;
        self.client.batch_execute(SCHEMA)?;
        Ok(())
    }

    /// The schema this store works in.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The connection, to run statements of your own.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// Writes a new pending `OrderPlaced` event about `aggregate_id`, created at `now`, and
    /// returns its id.
    pub fn insert_event(&mut self, aggregate_id: i64, payload: &str, now: Millis) -> Result<i64> {
        let row = self.client.query_one(
            "INSERT INTO outbox (aggregate_id, event_type, payload, created_at)
             VALUES ($1, $2, $3, $4) RETURNING id",
            &[&aggregate_id, &ORDER_PLACED, &payload, &now],
        )?;
        Ok(row.try_get(0)?)
    }

    /// The row with this id.
    pub fn load(&mut self, id: i64) -> Result<OutboxRow> {
        let row = self
            .client
            .query_one("SELECT * FROM outbox WHERE id = $1", &[&id])?;
        OutboxRow::from_postgres(&row)
    }

    /// Every row, by id.
    pub fn all_rows(&mut self) -> Result<Vec<OutboxRow>> {
        let rows = self.client.query("SELECT * FROM outbox ORDER BY id", &[])?;
        rows.iter().map(OutboxRow::from_postgres).collect()
    }
}
