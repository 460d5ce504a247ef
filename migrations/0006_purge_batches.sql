-- Ferry 0006: tombstone purge deletes at most one batch per call.
--
-- 0001's ferry.purge_tombstones chose its victims with `id IN (SELECT ...
-- LIMIT n)`. On large tables the planner could re-run that subquery, and one
-- call then deleted more than the batch (seen: 2,500 deleted by a call asked
-- for 1,000), making the purge's transactions longer than intended. The body
-- is otherwise unchanged; CREATE OR REPLACE keeps its owner and grants.

CREATE OR REPLACE FUNCTION ferry.purge_tombstones(p_older_than_ms bigint, p_batch int) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_was_purging text := current_setting('ferry.purging', true);
    v_cutoff bigint;
    v_table regclass;
    v_n bigint;
    v_total bigint := 0;
    v_max text;
BEGIN
    IF p_older_than_ms IS NULL OR p_older_than_ms < 0 OR p_batch IS NULL OR p_batch < 1 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'purge_tombstones needs a non-negative age and a positive batch size';
    END IF;
    v_cutoff := ferry.now_ms() - p_older_than_ms;
    -- Transaction-local, and put back before returning. (A function's SET
    -- clause cannot name a placeholder setting without superuser in PG15.)
    PERFORM set_config('ferry.purging', 'on', true);
    PERFORM set_config('ferry.purged_xid', '', true);

    FOR v_table IN SELECT table_oid FROM ferry.sync_resources ORDER BY schema_name, table_name LOOP
        EXIT WHEN v_total >= p_batch;
        -- The victims are picked once (MATERIALIZED): as an IN (subquery) the
        -- LIMIT could be re-evaluated per scan and delete more than a batch.
        EXECUTE format($f$
            WITH victims AS MATERIALIZED (
                SELECT id FROM %1$s
                 WHERE is_deleted AND last_modified < $1
                 LIMIT $2 FOR UPDATE SKIP LOCKED),
            d AS (
                DELETE FROM %1$s t USING victims v
                 WHERE t.id = v.id
                RETURNING 1)
            SELECT count(*) FROM d
        $f$, v_table) INTO v_n USING v_cutoff, p_batch - v_total;
        v_total := v_total + v_n;
    END LOOP;

    v_max := NULLIF(current_setting('ferry.purged_xid', true), '');
    IF v_max IS NOT NULL THEN
        UPDATE ferry.purge_horizon
           SET horizon_xid = greatest(horizon_xid, v_max::xid8), purged_at = now();
    END IF;
    PERFORM set_config('ferry.purged_xid', '', true);
    PERFORM set_config('ferry.purging', coalesce(v_was_purging, ''), true);

    DELETE FROM ferry.tokens WHERE expires_at < now() OR revoked;
    DELETE FROM ferry.idempotency_keys WHERE expires_at < now();
    DELETE FROM ferry.login_failures
     WHERE greatest(last_failure, coalesce(locked_until, last_failure)) < now() - interval '1 day';
    RETURN v_total;
END
$$;
