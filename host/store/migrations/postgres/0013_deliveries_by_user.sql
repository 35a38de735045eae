-- The outbox claims at most one delivery per account at a time (issue 40,
-- finding 5): it looks up an account's pending and in-flight deliveries.
CREATE INDEX deliveries_user ON deliveries (user_id, status, next_at);
