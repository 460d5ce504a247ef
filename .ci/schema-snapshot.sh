#!/usr/bin/env bash
# Writes migrations/schema.snapshot.sql again: the schema (tables, functions with their
# bodies, triggers, policies of schema ferry) of a fresh database migrated by this tree,
# read by SchemaSnapshot (Sources/FerryMigrations). Run it after changing a file of
# migrations/ and commit the result; SchemaSnapshotTests fails while the file is stale.
# Needs the test database (FERRY_TEST_OWNER_URL, as for `swift test`) and a test build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
FERRY_WRITE_SCHEMA_SNAPSHOT=1 swift test --filter 'SchemaSnapshotTests/theSnapshotFileIsTheSchemaOfAFreshDatabase' 2>&1 \
  | grep -E "error|recorded an issue|Test run with" || true
git diff --stat -- migrations/schema.snapshot.sql
