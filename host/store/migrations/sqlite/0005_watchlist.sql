-- A signed-in user's watchlist (issue 13): the assets they hold or follow,
-- chosen at onboarding, in the order they chose them.
CREATE TABLE watchlist (
    user_id   TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    asset_id  INTEGER NOT NULL REFERENCES assets (id),
    added_at  INTEGER NOT NULL,
    PRIMARY KEY (user_id, position),
    UNIQUE (user_id, asset_id)
);
