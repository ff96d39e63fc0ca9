-- The schema of chapter 19: the outbox of chapters 15 to 18 and the dead letters of chapter 17,
-- with the indexes the dashboard's queries run on. `db::open_in_memory` and `db::open` run it.
-- Times are INTEGER milliseconds on the caller's clock (the `now` every function takes).

CREATE TABLE IF NOT EXISTS outbox (
    -- AUTOINCREMENT: an id is never handed out twice, even after its row moved to dead_letters.
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    aggregate_id    TEXT    NOT NULL,             -- the order the event is about
    event_type      TEXT    NOT NULL,             -- 'OrderPlaced'
    payload         TEXT    NOT NULL,             -- the event's body, as JSON
    status          TEXT    NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'sent', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,   -- failed publish attempts so far
    next_retry_at   INTEGER,                      -- NULL: never tried, so due at once
    last_attempt_at INTEGER,
    last_error      TEXT,
    created_at      INTEGER NOT NULL
);

-- Due now and waiting: the pending rows, in next_retry_at order (NULLs first).
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, next_retry_at);

-- Oldest pending age: the pending rows, in created_at order.
CREATE INDEX IF NOT EXISTS outbox_age ON outbox (status, created_at);

-- Chapter 17's dead-letter table, column for column.
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

-- Dead letters of the last hour.
CREATE INDEX IF NOT EXISTS dead_letters_failed_at ON dead_letters (failed_at);
