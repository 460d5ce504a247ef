#!/usr/bin/env bash
# docker-compose's PostgreSQL init hook: Ferry's two roles and its database.
#   ferry_owner  owns the database and the schemas; `ferry migrate` runs as it.
#   ferry_app    what `ferry serve` logs in as; subject to Row Level Security.
# The migrations grant ferry_app exactly what it needs (see deploy/README.md).
set -euo pipefail
psql -v ON_ERROR_STOP=1 -U postgres -d postgres \
  -v owner_password="$FERRY_OWNER_PASSWORD" -v app_password="$FERRY_APP_PASSWORD" <<'SQL'
CREATE ROLE ferry_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE ferry_app LOGIN NOBYPASSRLS PASSWORD :'app_password';
CREATE DATABASE ferry OWNER ferry_owner;
REVOKE ALL ON DATABASE ferry FROM PUBLIC;
GRANT CONNECT ON DATABASE ferry TO ferry_app;
SQL
