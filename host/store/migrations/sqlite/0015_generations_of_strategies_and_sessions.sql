-- strategies (issue 41): the uploaded strategies and their versions. The
-- strategies listing keeps each account's view in memory and reads it
-- again only when this counter moves (an upload, a share, a switch of the
-- running version, a delete, by any replica or the CLI).
INSERT INTO generations (name, value) VALUES ('strategies', 0);
CREATE TRIGGER generations_authored_insert AFTER INSERT ON authored_strategies
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'strategies'; END;
CREATE TRIGGER generations_authored_update AFTER UPDATE ON authored_strategies
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'strategies'; END;
CREATE TRIGGER generations_authored_delete AFTER DELETE ON authored_strategies
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'strategies'; END;
CREATE TRIGGER generations_uploads_insert AFTER INSERT ON strategy_uploads
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'strategies'; END;
CREATE TRIGGER generations_uploads_update AFTER UPDATE ON strategy_uploads
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'strategies'; END;
CREATE TRIGGER generations_uploads_delete AFTER DELETE ON strategy_uploads
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'strategies'; END;

-- auth also moves when a session ends (a sign-out, a purge): the web
-- app's sessions are remembered in memory while it has not moved.
CREATE TRIGGER generations_session_delete AFTER DELETE ON sessions
BEGIN UPDATE generations SET value = value + 1 WHERE name = 'auth'; END;
