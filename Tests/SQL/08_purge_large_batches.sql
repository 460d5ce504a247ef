-- role: owner
-- On a large table one purge call deletes at most its batch (0006): the
-- victims are chosen once, not by a subquery the planner may re-run.

SELECT pg_sleep(0.01);
SELECT ferry.purge_tombstones(0, 1000000);

CREATE SCHEMA purgelarge;
CREATE TABLE purgelarge.items (id int PRIMARY KEY, x text);
SELECT ferry.enable_sync('purgelarge.items');
INSERT INTO purgelarge.items (id, x) SELECT g, 'x' FROM generate_series(1, 60000) g;
DELETE FROM purgelarge.items WHERE id % 20 = 0;   -- 3,000 tombstones spread over the table
ANALYZE purgelarge.items;
SELECT pg_sleep(0.01);

DO $$
BEGIN
    PERFORM pg_temp.check(ferry.purge_tombstones(0, 1000) = 1000, 'first call reports one batch');
    PERFORM pg_temp.check((SELECT count(*) FROM purgelarge.items WHERE is_deleted) = 2000, 'exactly one batch deleted');
    PERFORM pg_temp.check(ferry.purge_tombstones(0, 1000) = 1000, 'second batch');
    PERFORM pg_temp.check(ferry.purge_tombstones(0, 5000) = 1000, 'the rest');
    PERFORM pg_temp.check((SELECT count(*) FROM purgelarge.items) = 57000, 'live rows untouched');
END $$;

DROP SCHEMA purgelarge CASCADE;
DELETE FROM ferry.synced_tables WHERE schema_name = 'purgelarge';
SELECT 'PASS 08_purge_large_batches';
