-- Chapter 15: the business table and the outbox beside it, in the same database.
-- Times are integers: milliseconds since the Unix epoch, passed in by the caller.

CREATE TABLE IF NOT EXISTS orders (
    id           INTEGER PRIMARY KEY,
    customer     TEXT    NOT NULL,
    amount_cents INTEGER NOT NULL,
    created_at   INTEGER NOT NULL
);

-- One row per event to publish. A row is written in the same transaction as the change it
-- describes, starts 'pending', and becomes 'sent' once the broker has acknowledged it.
-- Sent rows are kept: they are the record of what was published, and when.
CREATE TABLE IF NOT EXISTS outbox (
    id           INTEGER PRIMARY KEY,
    aggregate_id INTEGER NOT NULL,            -- the order the event is about
    event_type   TEXT    NOT NULL,            -- 'OrderPlaced'
    payload      TEXT    NOT NULL,            -- the event's body, as JSON
    status       TEXT    NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'sent')),
    created_at   INTEGER NOT NULL,
    sent_at      INTEGER                      -- NULL until the broker acknowledged the event
);

-- The relay's question, "the oldest pending rows", answered from an index.
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (status, created_at, id);
