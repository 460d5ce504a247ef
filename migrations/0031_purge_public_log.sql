-- 0031_purge_public_log.sql: the public logs are purged like the access logs
-- (issue 46: "public grants and revocations are not purged").
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction, after 0030.
--
-- ferry.public_grants and ferry.public_revocations (0025) record a scope row
-- becoming public or private, for its streams' pages, as ferry.access_grants
-- and ferry.access_revocations (0004) do for a user. Until now nothing ever
-- deleted them. ferry.purge_access_log now forgets entries of all four logs
-- older than the retention, in that order, within one batch budget, and
-- raises the purge horizon to the highest xid it forgot, as before: a cursor
-- from before a forgotten entry gets 410 and syncs again. Each log gets an
-- index on created_at, so a purge reads what it deletes, not the whole log.
-- Same signature, grants and callers (`ferry purge`, the server's purger).

CREATE INDEX public_grants_created_at_idx ON ferry.public_grants (created_at);
CREATE INDEX public_revocations_created_at_idx ON ferry.public_revocations (created_at);

CREATE OR REPLACE FUNCTION ferry.purge_access_log(p_older_than_ms bigint, p_batch int) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_cutoff timestamptz;
    v_log text;
    v_max xid8;
    v_n bigint;
    v_total bigint := 0;
BEGIN
    IF p_older_than_ms IS NULL OR p_older_than_ms < 0 OR p_batch IS NULL OR p_batch < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'purge_access_log needs a non-negative age and a positive batch size';
    END IF;
    v_cutoff := clock_timestamp() - make_interval(secs => p_older_than_ms / 1000.0);
    -- The logs' names are this function's own constants, never input.
    FOREACH v_log IN ARRAY ARRAY['access_grants', 'access_revocations', 'public_grants', 'public_revocations'] LOOP
        EXIT WHEN v_total >= p_batch;
        -- The victims are picked once (MATERIALIZED): see 0004.
        EXECUTE format(
            'WITH v AS MATERIALIZED (SELECT ctid FROM ferry.%1$I WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED),
                  d AS (DELETE FROM ferry.%1$I a USING v WHERE a.ctid = v.ctid RETURNING a.xid)
             SELECT count(*), max(xid) FROM d', v_log)
            INTO v_n, v_max USING v_cutoff, p_batch - v_total;
        v_total := v_total + v_n;
        IF v_max IS NOT NULL THEN
            UPDATE ferry.purge_horizon SET horizon_xid = greatest(horizon_xid, v_max), purged_at = now();
        END IF;
    END LOOP;
    RETURN v_total;
END
$$;
