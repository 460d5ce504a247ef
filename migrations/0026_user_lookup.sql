-- 0026_user_lookup.sql: finding the user to share with by name (issue 48).
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0025.
--
-- Sharing (a ferry.sync_members rule's member table) takes a user id, and an
-- app's user knows the other person by the name they typed. ferry.lookup_user
-- answers GET /v1/users/lookup?name=: the id of the user with exactly that
-- name, for a signed-in caller only.
--
-- Why not a search, and why it is rationed: a route that says whether a name
-- exists is an oracle for which accounts exist. Ferry keeps it narrow:
--   * exact match only (no prefix, no pattern, no listing), so each question
--     tests one guess;
--   * only for a signed-in user, and each user may ask 30 times in 10
--     minutes (every question counts, found or not; the count is kept here,
--     so every instance shares it); past that, 429 with Retry-After;
--   * a user who exists but may not be found (see ferry.user_findable, which
--     later files extend) answers exactly as a name nobody has.
-- A JWT user has no name (0016), so cannot be found by one.

-- The lookups each user made in the current window.
CREATE TABLE ferry.user_lookups (
    user_id      uuid        PRIMARY KEY REFERENCES ferry.users ON DELETE CASCADE,
    window_start timestamptz NOT NULL,
    lookups      int         NOT NULL
);
COMMENT ON TABLE ferry.user_lookups IS
    'How many times each user called ferry.lookup_user in its current 10-minute window (the ration of GET /v1/users/lookup).';

-- Whether a user may be found by lookup. Every user for now; 0027 leaves out disabled users.
CREATE FUNCTION ferry.user_findable(p_user ferry.users) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path = pg_catalog, ferry, pg_temp
RETURN true;

-- The user named exactly p_name, for the calling user (ferry.current_user_id(),
-- else FR401): one row, (id, name, NULL) when found, (NULL, NULL, NULL) when
-- not (or not findable), (NULL, NULL, seconds) when the caller's ration is
-- spent. Never raises for a miss, so the count of the question commits.
CREATE FUNCTION ferry.lookup_user(p_name text)
    RETURNS TABLE (id uuid, name text, retry_after_seconds int)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    c_window constant interval := interval '10 minutes';
    c_ration constant int := 30;
    v_caller uuid := ferry.current_user_id();
    v_start timestamptz;
    v_count int;
    v_id uuid;
    v_name text;
BEGIN
    IF v_caller IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'FR401', MESSAGE = 'invalid token';
    END IF;
    INSERT INTO ferry.user_lookups AS l (user_id, window_start, lookups) VALUES (v_caller, now(), 1)
    ON CONFLICT (user_id) DO UPDATE
        SET window_start = CASE WHEN l.window_start <= now() - c_window THEN now() ELSE l.window_start END,
            lookups = CASE WHEN l.window_start <= now() - c_window THEN 1 ELSE l.lookups + 1 END
    RETURNING l.window_start, l.lookups INTO v_start, v_count;
    IF v_count > c_ration THEN
        RETURN QUERY SELECT NULL::uuid, NULL::text,
            greatest(1, ceil(extract(epoch FROM v_start + c_window - now())))::int;
        RETURN;
    END IF;
    SELECT u.id, u.name INTO v_id, v_name FROM ferry.users u WHERE u.name = p_name AND ferry.user_findable(u);
    RETURN QUERY SELECT v_id, v_name, NULL::int;
END
$$;

REVOKE EXECUTE ON FUNCTION ferry.lookup_user(text), ferry.user_findable(ferry.users) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.lookup_user(text) TO ferry_app;
