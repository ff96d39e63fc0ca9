//! Shared by the checks of chapter 18: the two databases behind one interface (`Db`), rows seeded
//! with plain SQL (never through the learner's code), the learner's store methods called with
//! panics and errors turned into readable failures, and times shown relative to `T0`.
//! No checks live here.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use exercise::{Millis, OutboxRow, OutboxStore, PostgresStore, SqliteStore, Status};

use super::support::catch;

/// 2026-01-01 00:00:00 UTC: "now" at the start of every check.
pub const T0: Millis = 1_767_225_600_000;
pub const MS: Millis = 1;
pub const SECOND: Millis = 1_000;
pub const MINUTE: Millis = 60 * SECOND;

/// The lease the sequential checks claim with.
pub const LEASE: Millis = 30 * SECOND;

/// A moment relative to `T0`: `T0`, `T0 + 30 s`, `T0 - 1 ms`.
pub fn at(moment: Millis) -> String {
    match moment - T0 {
        0 => "T0".to_owned(),
        d if d > 0 => format!("T0 + {}", span(d)),
        d => format!("T0 - {}", span(-d)),
    }
}

/// A number of milliseconds, readable: `250 ms`, `30 s`, `29.999 s`, `2 min`.
pub fn span(ms: Millis) -> String {
    if ms.abs() < SECOND {
        format!("{ms} ms")
    } else if ms % MINUTE == 0 {
        format!("{} min", ms / MINUTE)
    } else if ms % SECOND == 0 {
        format!("{} s", ms / SECOND)
    } else {
        format!("{:.3} s", ms as f64 / SECOND as f64)
    }
}

/// An optional moment: `NULL` or `T0 + 30 s`.
pub fn at_opt(moment: Option<Millis>) -> String {
    moment.map_or_else(|| "NULL".to_owned(), at)
}

/// A list of ids for a message: `[1, 2, 3]`, shortened after ten.
pub fn ids(list: &[i64]) -> String {
    let mut parts: Vec<String> = list.iter().take(10).map(i64::to_string).collect();
    if list.len() > 10 {
        parts.push(format!("… ({} in all)", list.len()));
    }
    format!("[{}]", parts.join(", "))
}

/// The ids of some rows, in the order given.
pub fn ids_of(rows: &[OutboxRow]) -> Vec<i64> {
    rows.iter().map(|row| row.id).collect()
}

/// One row as a check seeds it, with plain SQL.
#[derive(Clone, Debug)]
pub struct Seed {
    pub id: i64,
    pub status: Status,
    pub created_at: Millis,
    pub attempts: u32,
    pub next_retry_at: Option<Millis>,
    pub locked_by: Option<&'static str>,
    pub locked_until: Option<Millis>,
}

impl Seed {
    /// A pending row never tried, created at `created_at`: due at once.
    pub fn new(id: i64, created_at: Millis) -> Self {
        Self {
            id,
            status: Status::Pending,
            created_at,
            attempts: 0,
            next_retry_at: None,
            locked_by: None,
            locked_until: None,
        }
    }

    /// A pending row that failed `attempts` times and may be tried from `next_retry_at` on.
    pub fn retry_at(id: i64, created_at: Millis, attempts: u32, next_retry_at: Millis) -> Self {
        Self {
            attempts,
            next_retry_at: Some(next_retry_at),
            ..Self::new(id, created_at)
        }
    }

    pub fn with_status(self, status: Status) -> Self {
        Self { status, ..self }
    }

    /// The row under a lease of `worker` that ends at `until`.
    pub fn leased(self, worker: &'static str, until: Millis) -> Self {
        Self {
            locked_by: Some(worker),
            locked_until: Some(until),
            ..self
        }
    }
}

/// `count` pending rows, ids 1 to `count`, the oldest first, all due at `T0`.
pub fn many_rows(count: i64) -> Vec<Seed> {
    (1..=count)
        .map(|id| Seed::new(id, T0 - MINUTE + id))
        .collect()
}

/// A database behind the learner's store: SQLite or PostgreSQL. The checks are written once,
/// against this trait, and run on both.
pub trait Db: Sync {
    type Store: OutboxStore + Send;

    /// "SQLite" or "PostgreSQL", for messages.
    fn name(&self) -> &'static str;

    /// The check's own connection: it seeds and reads rows, and plays every worker of the
    /// sequential checks (a worker is only a name).
    fn main(&self) -> MutexGuard<'_, Self::Store>;

    /// A new connection, for one more worker that runs on a thread of its own.
    fn connect(&self) -> Self::Store;

    /// Inserts the rows with plain SQL, in one transaction.
    fn seed_with(store: &mut Self::Store, rows: &[Seed]);

    /// Every row, by id, read with plain SQL.
    fn rows_with(store: &mut Self::Store) -> Vec<OutboxRow>;

    /// How many rows are still pending.
    fn pending_with(store: &mut Self::Store) -> i64;

    /// Runs the store's `claim_sql()` itself, with its documented parameters (worker, end of
    /// the lease, now, limit), and returns the rows it gave back, or its error or panic as text.
    fn run_claim_sql(
        store: &mut Self::Store,
        worker: &str,
        until: Millis,
        now: Millis,
        limit: i64,
    ) -> Result<Vec<OutboxRow>, String>;

    fn seed(&self, rows: &[Seed]) {
        Self::seed_with(&mut self.main(), rows);
    }

    fn rows(&self) -> Vec<OutboxRow> {
        Self::rows_with(&mut self.main())
    }

    fn row(&self, id: i64) -> OutboxRow {
        self.rows()
            .into_iter()
            .find(|row| row.id == id)
            .unwrap_or_else(|| panic!("row {id} is missing from the {} outbox", self.name()))
    }
}

/// Row `id` as `store`'s connection reads it, with plain SQL.
pub fn row_in<D: Db>(store: &mut D::Store, id: i64) -> OutboxRow {
    D::rows_with(store)
        .into_iter()
        .find(|row| row.id == id)
        .unwrap_or_else(|| panic!("row {id} is missing from the outbox"))
}

/// `store.claim_due(…)`, with a panic or an error turned into a failure that names the call.
pub fn claim<S: OutboxStore>(
    store: &mut S,
    worker: &str,
    now: Millis,
    lease_ms: Millis,
    limit: usize,
) -> Vec<OutboxRow> {
    let call = format!(
        "claim_due(worker = {worker:?}, now = {}, lease_ms = {}, limit = {limit})",
        at(now),
        span(lease_ms)
    );
    match catch(|| store.claim_due(worker, now, lease_ms, limit)) {
        Ok(Ok(rows)) => rows,
        Ok(Err(error)) => panic!("{call} returned an error: {error}"),
        Err(message) => panic!("{call} panicked: {message}"),
    }
}

/// `store.mark_sent(…)`, with a panic or an error turned into a failure that names the call.
pub fn mark_sent<S: OutboxStore>(store: &mut S, id: i64, worker: &str, now: Millis) -> bool {
    let call = format!(
        "mark_sent(id = {id}, worker = {worker:?}, now = {})",
        at(now)
    );
    match catch(|| store.mark_sent(id, worker, now)) {
        Ok(Ok(done)) => done,
        Ok(Err(error)) => panic!("{call} returned an error: {error}"),
        Err(message) => panic!("{call} panicked: {message}"),
    }
}

/// `store.reschedule(…)`, with a panic or an error turned into a failure that names the call.
pub fn reschedule<S: OutboxStore>(
    store: &mut S,
    id: i64,
    worker: &str,
    now: Millis,
    next_retry_at: Millis,
    error: &str,
) -> bool {
    let call = format!(
        "reschedule(id = {id}, worker = {worker:?}, now = {}, next_retry_at = {}, error = {error:?})",
        at(now),
        at(next_retry_at)
    );
    match catch(|| store.reschedule(id, worker, now, next_retry_at, error)) {
        Ok(Ok(done)) => done,
        Ok(Err(failure)) => panic!("{call} returned an error: {failure}"),
        Err(message) => panic!("{call} panicked: {message}"),
    }
}

/// A row's lease, for messages: `leased to "a" until T0 + 30 s`, or `no lease`.
pub fn lease(row: &OutboxRow) -> String {
    match (&row.locked_by, row.locked_until) {
        (None, None) => "no lease".to_owned(),
        (by, until) => format!(
            "locked_by = {}, locked_until = {}",
            by.as_deref()
                .map_or("NULL".to_owned(), |w| format!("{w:?}")),
            at_opt(until)
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// SQLite: a database file in the check's scratch folder, shared by every connection.

/// A SQLite outbox for one check: in memory for the checks that need one connection, a file in
/// the check's scratch folder (removed when the check ends) for those that need several.
pub struct SqliteDb {
    path: Option<PathBuf>,
    main: Mutex<SqliteStore>,
}

impl SqliteDb {
    /// A private in-memory database with the given schema: one connection only.
    pub fn in_memory() -> Self {
        let store = match catch(SqliteStore::open_in_memory) {
            Ok(Ok(store)) => store,
            Ok(Err(error)) => panic!("SqliteStore::open_in_memory() failed: {error}"),
            Err(message) => panic!("SqliteStore::open_in_memory() panicked: {message}"),
        };
        Self {
            path: None,
            main: Mutex::new(store),
        }
    }

    /// A fresh database file named after the check, with the given schema applied, that any
    /// number of connections can share.
    pub fn file(check: &str) -> Self {
        let path = std::env::temp_dir().join(format!("ch18-{check}-{}.db", std::process::id()));
        remove_database_files(&path);
        // Small pages keep the write-ahead log small: a check commits a few thousand times, and
        // a check process may write no file larger than 8 MiB.
        let created = rusqlite::Connection::open(&path).and_then(|conn| {
            conn.pragma_update(None, "page_size", 1024)?;
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
        });
        if let Err(error) = created {
            panic!(
                "creating the SQLite database {} failed: {error}",
                path.display()
            );
        }
        let store = match catch(|| SqliteStore::open(&path)) {
            Ok(Ok(store)) => store,
            Ok(Err(error)) => panic!("SqliteStore::open({}) failed: {error}", path.display()),
            Err(message) => panic!("SqliteStore::open panicked: {message}"),
        };
        Self {
            path: Some(path),
            main: Mutex::new(store),
        }
    }
}

impl Drop for SqliteDb {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            remove_database_files(path);
        }
    }
}

fn remove_database_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        let _ = std::fs::remove_file(file);
    }
}

impl Db for SqliteDb {
    type Store = SqliteStore;

    fn name(&self) -> &'static str {
        "SQLite"
    }

    fn main(&self) -> MutexGuard<'_, SqliteStore> {
        self.main
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn connect(&self) -> SqliteStore {
        let path = self
            .path
            .as_ref()
            .expect("an in-memory database has one connection only");
        let mut store = SqliteStore::open(path)
            .unwrap_or_else(|error| panic!("opening another SQLite connection failed: {error}"));
        // SQLite's busy timeout sleeps at least a millisecond between tries; four workers that
        // take turns at the write lock thousands of times would sleep for most of a second.
        // The checks' connections yield their time slice instead, for as long as the timeout.
        store
            .connection_mut()
            .busy_handler(Some(|tries: i32| {
                std::thread::yield_now();
                tries < 1_000_000
            }))
            .unwrap_or_else(|error| panic!("installing a busy handler failed: {error}"));
        store
    }

    fn seed_with(store: &mut SqliteStore, rows: &[Seed]) {
        let seeded = (|| -> rusqlite::Result<()> {
            let transaction = store.connection_mut().transaction()?;
            {
                let mut insert = transaction.prepare(
                    "INSERT INTO outbox (id, aggregate_id, event_type, payload, status,
                         created_at, attempts, next_retry_at, locked_by, locked_until)
                     VALUES (?1, ?1, 'OrderPlaced', ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )?;
                for row in rows {
                    insert.execute(rusqlite::params![
                        row.id,
                        format!("{{\"order\":{}}}", row.id),
                        row.status.as_str(),
                        row.created_at,
                        row.attempts,
                        row.next_retry_at,
                        row.locked_by,
                        row.locked_until,
                    ])?;
                }
            }
            transaction.commit()
        })();
        seeded.unwrap_or_else(|error| panic!("seeding the SQLite outbox failed: {error}"));
    }

    fn rows_with(store: &mut SqliteStore) -> Vec<OutboxRow> {
        store
            .all_rows()
            .unwrap_or_else(|error| panic!("reading the SQLite outbox failed: {error}"))
    }

    fn run_claim_sql(
        store: &mut SqliteStore,
        worker: &str,
        until: Millis,
        now: Millis,
        limit: i64,
    ) -> Result<Vec<OutboxRow>, String> {
        let sql = catch(SqliteStore::claim_sql)
            .map_err(|message| format!("SqliteStore::claim_sql() panicked: {message}"))?;
        let connection = store.connection();
        let mut statement = connection
            .prepare(sql)
            .map_err(|error| format!("preparing it failed: {error}"))?;
        statement
            .query_map(
                rusqlite::params![worker, until, now, limit],
                OutboxRow::from_sqlite,
            )
            .and_then(|rows| rows.collect())
            .map_err(|error| format!("running it failed: {error}"))
    }

    fn pending_with(store: &mut SqliteStore) -> i64 {
        store
            .connection()
            .query_row(
                "SELECT COUNT(*) FROM outbox WHERE status = 'pending'",
                [],
                |row| row.get(0),
            )
            .unwrap_or_else(|error| panic!("counting pending rows failed: {error}"))
    }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a schema of its own for each check, dropped when the check ends.

/// A PostgreSQL outbox for one check: a schema named after the check and the process.
pub struct PostgresDb {
    url: String,
    schema: String,
    main: Mutex<PostgresStore>,
}

impl PostgresDb {
    pub fn new(url: String, check: &str) -> Self {
        let schema = format!("ch18_{}_{check}", std::process::id());
        let mut store = match catch(|| PostgresStore::connect(&url, &schema)) {
            Ok(Ok(store)) => store,
            Ok(Err(error)) => panic!(
                "could not connect to PostgreSQL at {url} ({error}); start the server, or unset \
                 WORKBOOK_POSTGRES_URL to skip the PostgreSQL track"
            ),
            Err(message) => panic!("PostgresStore::connect panicked: {message}"),
        };
        let _ = store
            .client()
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        without_flush(&mut store);
        if let Err(error) = store.migrate() {
            panic!("creating the schema {schema} failed: {error}");
        }
        Self {
            url,
            schema,
            main: Mutex::new(store),
        }
    }
}

/// A commit of the checks' connections does not wait for the server to flush its log to disk:
/// a thousand commits would otherwise wait for a thousand disk flushes. The scratch schema needs
/// no durability.
fn without_flush(store: &mut PostgresStore) {
    if let Err(error) = store.client().batch_execute("SET synchronous_commit = off") {
        panic!("setting synchronous_commit failed: {error}");
    }
}

impl Drop for PostgresDb {
    fn drop(&mut self) {
        let schema = self.schema.clone();
        let _ = self
            .main()
            .client()
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
    }
}

/// Runs `scenario` against a real PostgreSQL when `WORKBOOK_POSTGRES_URL` is set. Without it,
/// the check is skipped: it earns nothing, and never passes on the text of the SQL.
pub fn with_postgres(check: &str, scenario: impl FnOnce(&PostgresDb)) {
    match PostgresStore::url_from_env() {
        Some(url) => scenario(&PostgresDb::new(url, check)),
        None => skip_postgres(),
    }
}

/// What a PostgreSQL check does without a server: it is skipped, earns nothing, and says how to
/// run it.
pub fn skip_postgres() -> ! {
    super::support::skip(
        "no PostgreSQL here: set WORKBOOK_POSTGRES_URL (e.g. \
         postgres://postgres@localhost/postgres) to run the PostgreSQL track (book §18.9)",
    )
}

impl Db for PostgresDb {
    type Store = PostgresStore;

    fn name(&self) -> &'static str {
        "PostgreSQL"
    }

    fn main(&self) -> MutexGuard<'_, PostgresStore> {
        self.main
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn connect(&self) -> PostgresStore {
        let mut store = PostgresStore::connect(&self.url, &self.schema).unwrap_or_else(|error| {
            panic!("opening another PostgreSQL connection failed: {error}")
        });
        without_flush(&mut store);
        store
    }

    fn seed_with(store: &mut PostgresStore, rows: &[Seed]) {
        let column = |f: &dyn Fn(&Seed) -> Option<i64>| rows.iter().map(f).collect::<Vec<_>>();
        let ids = column(&|row| Some(row.id));
        let created = column(&|row| Some(row.created_at));
        let attempts: Vec<i32> = rows.iter().map(|row| row.attempts as i32).collect();
        let next = column(&|row| row.next_retry_at);
        let until = column(&|row| row.locked_until);
        let status: Vec<&str> = rows.iter().map(|row| row.status.as_str()).collect();
        let by: Vec<Option<&str>> = rows.iter().map(|row| row.locked_by).collect();
        store
            .client()
            .execute(
                "INSERT INTO outbox (id, aggregate_id, event_type, payload, status, created_at,
                     attempts, next_retry_at, locked_by, locked_until)
                 SELECT id, id, 'OrderPlaced', '{\"order\":' || id || '}', status, created_at,
                     attempts, next_retry_at, locked_by, locked_until
                   FROM UNNEST($1::bigint[], $2::text[], $3::bigint[], $4::int[], $5::bigint[],
                               $6::text[], $7::bigint[])
                     AS seed (id, status, created_at, attempts, next_retry_at, locked_by,
                              locked_until)",
                &[&ids, &status, &created, &attempts, &next, &by, &until],
            )
            .unwrap_or_else(|error| panic!("seeding the PostgreSQL outbox failed: {error:?}"));
    }

    fn rows_with(store: &mut PostgresStore) -> Vec<OutboxRow> {
        store
            .all_rows()
            .unwrap_or_else(|error| panic!("reading the PostgreSQL outbox failed: {error}"))
    }

    fn run_claim_sql(
        store: &mut PostgresStore,
        worker: &str,
        until: Millis,
        now: Millis,
        limit: i64,
    ) -> Result<Vec<OutboxRow>, String> {
        let sql = catch(PostgresStore::claim_sql)
            .map_err(|message| format!("PostgresStore::claim_sql() panicked: {message}"))?;
        let rows = store
            .client()
            .query(sql, &[&worker, &until, &now, &limit])
            .map_err(|error| format!("running it failed: {error:?}"))?;
        rows.iter()
            .map(|row| {
                OutboxRow::from_postgres(row)
                    .map_err(|error| format!("reading a row it returned failed: {error}"))
            })
            .collect()
    }

    fn pending_with(store: &mut PostgresStore) -> i64 {
        store
            .client()
            .query_one("SELECT COUNT(*) FROM outbox WHERE status = 'pending'", &[])
            .and_then(|row| row.try_get(0))
            .unwrap_or_else(|error| panic!("counting pending rows failed: {error}"))
    }
}
