-- 0021_term_length_domains.sql: a term's length rules as domains, not table CHECKs.
--
-- The rules do not change: a word and a definition of at most 10,000
-- characters, a rank of 1 to 1,024 (compared bytewise). Where they are kept does.
-- PostgreSQL 15 reads a table's CHECK constraints from the catalog and plans
-- them again for every statement that writes the table: the three on terms cost
-- each PATCH of a term about 110,000 instructions, 7 % of its whole transaction
-- in PostgreSQL (bench/feed/README.md, "What is left of a PATCH's
-- instructions"). A domain's CHECK is planned once per session. terms is the
-- table the app writes most, so its rules move; the other tables keep theirs.
--
-- Ferry types a domain column by its base type (the JSON it takes, filters,
-- OpenAPI, `ferry generate swift`), and a value a domain's CHECK refuses is a
-- 422 `check_violation` naming the field. One domain a column: PostgreSQL's
-- error names the domain, not the column, so a domain that two columns share
-- would name both (docs/API.md). A domain's CHECK runs as the value is read,
-- before the write's other checks: a too-long word sent with a stale revision
-- is refused as too long (422) before its conflict (409) is found.
--
-- Changing a column from text to a domain over text rewrites no row; each
-- row's value is checked once, and the rank index is built again.

CREATE DOMAIN app.term_word AS text CONSTRAINT term_word_length CHECK (length(VALUE) <= 10000);
CREATE DOMAIN app.term_definition AS text CONSTRAINT term_definition_length CHECK (length(VALUE) <= 10000);
-- Fractional index, compared bytewise; FerryRank validates the alphabet.
CREATE DOMAIN app.term_rank AS text COLLATE "C" CONSTRAINT term_rank_length CHECK (length(VALUE) BETWEEN 1 AND 1024);

ALTER TABLE app.terms
    DROP CONSTRAINT terms_word_length,
    DROP CONSTRAINT terms_definition_length,
    DROP CONSTRAINT terms_rank_length,
    ALTER COLUMN word TYPE app.term_word,
    ALTER COLUMN definition TYPE app.term_definition,
    ALTER COLUMN rank TYPE app.term_rank;
