-- 0030_stream_fan_out.sql: one feed check answers the waiters of many users
-- on one stream (issue 46, "One query per change, whatever the number of
-- readers").
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0029.
--
-- When a commit to a stream wakes the long polls and event streams of many
-- users, one of them runs its check and the others take its page, each only
-- if nothing in the page could differ for them (docs/changes-feed.md,
-- "Fan-out"). A page of a stream differs between two of its readers only by
-- their own access grants and revocations (0004, 0025): so the check asks
-- which users have any since the cursor, and those check for themselves.
-- The serve role reads only its caller's entries of those logs (RLS, 0004),
-- hence this function, which reads everyone's user ids and nothing else.
--
-- It reads the logs by xid (the window after a cursor: seconds, in a live
-- feed), hence the two indexes: without them, the scan would grow with the
-- logs, which hold every grant of the retention period.

CREATE INDEX access_grants_xid_idx ON ferry.access_grants (xid);
CREATE INDEX access_revocations_xid_idx ON ferry.access_revocations (xid);

-- The users with an access grant or revocation at or after p_after; NULL
-- when the logs hold p_limit entries or more there ("too many to tell": the
-- caller shares with nobody). At most p_limit entries are read, so a cursor
-- from last week costs what one from a second ago does.
CREATE FUNCTION ferry.access_changed_users(p_after xid8, p_limit integer) RETURNS uuid[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT CASE WHEN count(*) >= p_limit THEN NULL ELSE coalesce(array_agg(DISTINCT u.user_id), '{}') END
      FROM (SELECT g.user_id FROM ferry.access_grants g WHERE g.xid >= p_after
            UNION ALL
            SELECT r.user_id FROM ferry.access_revocations r WHERE r.xid >= p_after
            LIMIT p_limit) u
$$;
COMMENT ON FUNCTION ferry.access_changed_users(xid8, integer) IS
    'Users with an access grant or revocation at or after p_after (NULL for p_limit entries or more): they are answered by their own feed check.';
REVOKE ALL ON FUNCTION ferry.access_changed_users(xid8, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.access_changed_users(xid8, integer) TO ferry_app;
