-- 001: the outbox table of chapter 15. An event is written here in the same transaction as the
-- business change it describes; the relay publishes it later and marks it 'sent'.
-- Times are INTEGER milliseconds since the Unix epoch, passed in by the caller.
-- ('failed' is new: rows given up on, on their way to the dead letters of chapter 17.)
CREATE TABLE outbox (
    id           INTEGER PRIMARY KEY,
    aggregate_id INTEGER NOT NULL,            -- the order the event is about
    event_type   TEXT    NOT NULL,            -- 'OrderPlaced'
    payload      TEXT    NOT NULL,            -- the event's body, as JSON
    status       TEXT    NOT NULL DEFAULT 'pending'
                         CHECK (status IN ('pending', 'sent', 'failed')),
    created_at   INTEGER NOT NULL,
    sent_at      INTEGER                      -- NULL until the broker acknowledged the event
);
