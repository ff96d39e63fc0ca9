-- The outbox of chapters 15 to 17, with the lease of chapter 18, for SQLite.
-- Times are INTEGER milliseconds on the caller's clock (the `now` every function takes):
-- SQLite never reads a clock here.

CREATE TABLE IF NOT EXISTS outbox (
    id              INTEGER PRIMARY KEY,
    aggregate_id    INTEGER NOT NULL,             -- the order the event is about
    event_type      TEXT    NOT NULL,             -- 'OrderPlaced'
    payload         TEXT    NOT NULL,             -- the event's body, as JSON
    status          TEXT    NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'sent', 'failed')),
    created_at      INTEGER NOT NULL,
    sent_at         INTEGER,                      -- NULL until the broker acknowledged the event
    -- Chapter 16: the retry schedule.
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_retry_at   INTEGER,                      -- NULL: never tried, due at once
    last_attempt_at INTEGER,
    last_error      TEXT,
    -- Chapter 18: the lease. A worker that claims a row writes its name and the end of its
    -- lease; until then no other worker may claim the row. Both NULL: nobody holds it.
    locked_by       TEXT,
    locked_until    INTEGER
);

-- Serves the claim: the pending rows in the order they are due, and, when the claim bounds the
-- key (COALESCE(next_retry_at, created_at) <= now), only the due ones: a range SEARCH. The lease
-- condition is checked on the rows the index yields; a row under lease is skipped, not waited for.
CREATE INDEX IF NOT EXISTS outbox_due
    ON outbox (COALESCE(next_retry_at, created_at), created_at, id)
    WHERE status = 'pending';
