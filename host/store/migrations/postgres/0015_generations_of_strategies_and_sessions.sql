-- strategies (issue 41): the uploaded strategies and their versions. The
-- strategies listing keeps each account's view in memory and reads it
-- again only when this counter moves (an upload, a share, a switch of the
-- running version, a delete, by any replica or the CLI).
INSERT INTO generations (name, value) VALUES ('strategies', 0);
CREATE CONSTRAINT TRIGGER generations_authored AFTER INSERT OR UPDATE OR DELETE ON authored_strategies
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('strategies');
CREATE CONSTRAINT TRIGGER generations_uploads AFTER INSERT OR UPDATE OR DELETE ON strategy_uploads
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('strategies');

-- auth also moves when a session ends (a sign-out, a purge): the web
-- app's sessions are remembered in memory while it has not moved.
CREATE CONSTRAINT TRIGGER generations_session_delete AFTER DELETE ON sessions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_generation('auth');
