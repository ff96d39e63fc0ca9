-- 002: the retry columns of chapter 16. A row that failed to publish remembers how often it was
-- tried, when, why it failed last, and when the relay may try it again.
ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0);
-- NULL: never tried, so due at once. Otherwise the earliest moment of the next attempt.
ALTER TABLE outbox ADD COLUMN next_retry_at INTEGER;
ALTER TABLE outbox ADD COLUMN last_attempt_at INTEGER;
-- Short: a summary for people and dashboards, not a stack trace.
ALTER TABLE outbox ADD COLUMN last_error TEXT;
