-- A fixture of the live hints' SQL tests (22, 26), which include it with
-- `\ir _live_hints.sql` after the prelude: run.sh runs only NN_*.sql files.
--
-- pg_temp.hints(): the hints this transaction collected (ferry.hints), without
--   their stamps, one a line, in the order they were collected.
-- pg_temp.collect_as_new_user(prefix): a new user, in whose name the rest of
--   the transaction writes in Ferry's collect mode (as the server's writes do).

CREATE FUNCTION pg_temp.hints() RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(regexp_replace(l, '^[0-9]+ ', '') ORDER BY n), '{}')
      FROM unnest(string_to_array(rtrim(coalesce(current_setting('ferry.hints', true), ''), E'\n'), E'\n')) WITH ORDINALITY AS h(l, n)
     WHERE l <> ''
$$;

CREATE FUNCTION pg_temp.collect_as_new_user(p_prefix text) RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE u uuid := ferry.create_user(p_prefix || gen_random_uuid(), 'hints-password-1');
BEGIN
    -- Transaction-local: they last until the caller's transaction ends.
    PERFORM set_config('ferry.user_id', u::text, true), set_config('ferry.hint_mode', 'collect', true);
    RETURN u;
END $$;
