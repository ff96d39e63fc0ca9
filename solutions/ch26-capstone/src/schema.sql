-- The order service's tables (chapters 15 and 16): orders, and the outbox written with them.
-- The orchestrator's table: the inbox of the events it consumed.
-- Times are INTEGER milliseconds of the simulation's virtual clock.
CREATE TABLE orders (
    id           INTEGER PRIMARY KEY,
    customer     TEXT    NOT NULL,
    amount_cents INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
);

CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY,
    aggregate_id    INTEGER NOT NULL REFERENCES orders (id),
    event_type      TEXT    NOT NULL,
    payload         TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sent', 'failed')),
    created_at      INTEGER NOT NULL,
    sent_at         INTEGER,
    attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_retry_at   INTEGER,
    last_attempt_at INTEGER,
    last_error      TEXT
);

-- The due-row index of chapter 16: only pending rows, in the order the relay takes them.
CREATE INDEX outbox_due
    ON outbox (COALESCE(next_retry_at, created_at), created_at)
    WHERE status = 'pending';

-- One row per event the orchestrator consumed: its id is the outbox row's id.
CREATE TABLE inbox (
    event_id    INTEGER PRIMARY KEY,
    order_id    INTEGER NOT NULL,
    received_at INTEGER NOT NULL
);
