-- The schema of chapter 17: the outbox of chapters 15 and 16, and the dead-letter table.
-- `db::open` and `db::open_in_memory` run this file with `execute_batch`.
-- Times are integers: milliseconds on the caller's clock (the `now` every function takes).
-- SQLite never reads a clock here.

CREATE TABLE IF NOT EXISTS outbox (
    -- AUTOINCREMENT: an id is never handed out twice, not even after its row has moved to
    -- dead_letters. Without it SQLite may reuse the largest id once that row is deleted.
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    aggregate_id    TEXT    NOT NULL,
    event_type      TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'sent', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,  -- failed attempts so far
    next_retry_at   INTEGER,                     -- NULL: due at once
    last_attempt_at INTEGER,
    last_error      TEXT,
    created_at      INTEGER NOT NULL
);

-- Serves the due-row query of chapter 16: the pending rows in the order they became due, read
-- as a range that ends at now (a SEARCH, chapter 16 §16.6).
CREATE INDEX IF NOT EXISTS outbox_due
    ON outbox (COALESCE(next_retry_at, created_at), created_at, id)
    WHERE status = 'pending';

CREATE TABLE IF NOT EXISTS dead_letters (
    id           INTEGER PRIMARY KEY,  -- the event's id in the outbox: one id for life
    aggregate_id TEXT    NOT NULL,
    event_type   TEXT    NOT NULL,
    payload      TEXT    NOT NULL,
    attempts     INTEGER NOT NULL,     -- how many attempts it took to give up
    last_error   TEXT,                 -- what the broker said last
    reason       TEXT    NOT NULL,     -- why it is here: 'rejected' or 'exhausted'
    created_at   INTEGER NOT NULL,     -- when the event was written to the outbox
    failed_at    INTEGER NOT NULL      -- when it was moved here
);

-- Serves the alerting queries: how many dead letters arrived since a given time.
CREATE INDEX IF NOT EXISTS dead_letters_failed_at ON dead_letters (failed_at);
