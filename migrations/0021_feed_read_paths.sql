-- 0021_feed_read_paths.sql: the changes feed reads a ruled table through what
-- the caller may see, not through everyone's changes (issue 34, item 4).
--
-- Applied by `ferry migrate` as the OWNER role, in one transaction.
--
-- Until now each table's part of the feed walked its (_ferry_xid, id) index
-- from the cursor and let Row Level Security drop the rows the caller may not
-- read: a poll after a million changes of other users read a million rows to
-- return none. A table under a declarative sync rule (0019) says exactly who
-- reads it, so the feed can start from that instead:
--   owned    rows whose owner column is the caller, and the rows whose id is
--            among the caller's scope ids (each members rule sharing the table);
--   child    rows whose parent column is the id of a parent row the caller
--            may read (the parent's own paths, recursively);
--   members  rows whose member column is the caller, and rows whose scope
--            column is the id of a scope row the caller may read.
-- Each path walks an index on (column, _ferry_xid, id) from the cursor, which
-- this file creates for every rule: one probe per key the caller holds.
-- Row Level Security still applies to every row the feed reads; the paths only
-- choose where to look, and they cover the rule's read policy exactly.
--
-- A table that also has a permissive read policy of its own (beside the
-- ferry_rules_* ones) may be readable beyond its rule: ferry.read_paths
-- reports it, and the feed walks such a table, and its children, as before.

-- The foreign-key indexes 0019 creates keep their function under a new name;
-- ferry.rules_index_references (which ferry.rules_apply calls) now creates both.
ALTER FUNCTION ferry.rules_index_references(regclass) RENAME TO rules_index_foreign_keys;

-- Creates the (column, _ferry_xid, id) index of each of p_table's read paths
-- that no index leads with already. Takes no lock when there is nothing to do.
CREATE FUNCTION ferry.rules_feed_indexes(p_table regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
DECLARE
    v_column name;
    v_attnums int2[];
BEGIN
    FOR v_column IN
        SELECT c FROM ferry.sync_rules r, unnest(ARRAY[r.rule_column, r.member_column]) c
         WHERE r.table_oid = p_table AND c IS NOT NULL
    LOOP
        SELECT array_agg(a.attnum ORDER BY k.n) INTO v_attnums
          FROM unnest(ARRAY[v_column, '_ferry_xid'::name]) WITH ORDINALITY k(name, n)
          JOIN pg_attribute a ON a.attrelid = p_table AND a.attname = k.name AND NOT a.attisdropped;
        CONTINUE WHEN cardinality(v_attnums) < 2 OR EXISTS (
            SELECT 1 FROM pg_index i
             WHERE i.indrelid = p_table AND i.indpred IS NULL AND (i.indkey::int2[])[0:1] = v_attnums);
        EXECUTE format('CREATE INDEX %I ON %s (%I, _ferry_xid, id)',
                       left((SELECT c.relname FROM pg_class c WHERE c.oid = p_table) || '_' || v_column, 54) || '_feed_idx',
                       p_table, v_column);
    END LOOP;
END
$$;

CREATE FUNCTION ferry.rules_index_references(p_table regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
BEGIN
    PERFORM ferry.rules_index_foreign_keys(p_table);
    PERFORM ferry.rules_feed_indexes(p_table);
END
$$;

-- The read paths of p_schema's ruled tables, for the serve role (which may not
-- read ferry.sync_rules): one row per rule, with the table it reads through
-- (child, members), the members rule's scope-ids function, and whether the
-- rule's policies are the only permissive read policies of the table.
CREATE FUNCTION ferry.read_paths(p_schema name)
    RETURNS TABLE (table_name name, kind text, rule_column name, target_name name, member_column name,
                   scope_ids_function text, rules_only boolean)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, ferry, pg_temp
AS $$
    SELECT c.relname, r.kind, r.rule_column, t.relname, r.member_column,
           CASE WHEN r.kind = 'members' THEN ferry.rules_scope_ids_function(r.table_oid) END,
           c.relrowsecurity AND NOT EXISTS (
               SELECT 1 FROM pg_policy p
                WHERE p.polrelid = r.table_oid AND p.polpermissive AND p.polcmd IN ('r', '*')
                  AND p.polname NOT LIKE 'ferry\_rules\_%')
      FROM ferry.sync_rules r
      JOIN pg_class c ON c.oid = r.table_oid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_class t ON t.oid = r.target_table
     WHERE n.nspname = p_schema
       AND (t.oid IS NULL OR t.relnamespace = c.relnamespace)
     ORDER BY 1
$$;
REVOKE EXECUTE ON FUNCTION ferry.read_paths(name) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ferry.read_paths(name) TO ferry_app;
