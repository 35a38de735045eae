-- The matcher's catalog embeddings (issue 15): one vector per asset and
-- model, with the hash of the text it was computed from, so a catalog
-- change re-embeds only the entries whose text changed and every replica
-- and restart reuses the rest. `vector` is little-endian f32s.
CREATE TABLE asset_embeddings (
    model         TEXT    NOT NULL,
    asset_id      INTEGER NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
    content_hash  TEXT    NOT NULL,
    vector        BLOB    NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (model, asset_id)
);
