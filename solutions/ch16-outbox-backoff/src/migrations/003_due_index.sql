-- 003: the index that serves the due-row query (DUE_QUERY in src/lib.rs).
-- Partial: it holds only the pending rows, the only ones the relay ever looks for, so sent and
-- failed rows cost it nothing. Its key is the query's ORDER BY, so SQLite reads the rows in
-- the order the relay wants them, with no sort; and because DUE_QUERY bounds that key
-- (COALESCE(next_retry_at, created_at) <= now), it reads only the due entries (a SEARCH).
CREATE INDEX outbox_due
    ON outbox (COALESCE(next_retry_at, created_at), created_at)
    WHERE status = 'pending';
