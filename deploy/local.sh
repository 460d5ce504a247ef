#!/usr/bin/env bash
# Manages a project-local PostgreSQL 15 and memcached for development and CI.
#
#   deploy/local.sh install   apt-get everything development and CI need (idempotent):
#                             the build and runtime libraries, PostgreSQL, memcached, and the
#                             tools the tests run (systemd-analyze, nginx, pgbouncer, tmux, chromium, tsc and node
#                             and openapi-spec-validator from PyPI)
#   deploy/local.sh install build     only what compiling Ferry needs (the Dockerfile's builder stage)
#   deploy/local.sh install runtime   only what running Ferry needs (the Dockerfile's runtime stage)
#   deploy/local.sh install services  PostgreSQL, memcached and the build libraries (what start installs)
#   deploy/local.sh start     install services, initdb if needed, start both, create roles and the database
#   deploy/local.sh stop      stop both
#   deploy/local.sh status    say what runs; exit 0 only when both answer
#   deploy/local.sh env       print the URLs as shell exports (PostgreSQL over 127.0.0.1)
#   deploy/local.sh env --socket   the same, PostgreSQL over its Unix socket (what run.sh
#                             serves with: a same-host database costs less CPU per query
#                             that way, bench/api/README.md)
#
# Everything lives under $FERRY_LOCAL_DIR (default: <repo>/.local). PostgreSQL
# listens on 127.0.0.1:$FERRY_PG_PORT (default 54329) and a unix socket in that
# directory only; memcached on 127.0.0.1:$FERRY_MC_PORT (default 11299). Set the
# same variables for every command (start, env, stop) to move them, e.g. when another
# checkout's services hold the defaults; `ferry init` reads them too. Running it
# twice is safe: start skips what already runs. Two starts at once take turns (a lock
# in that directory), so the second finds both running.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCAL=${FERRY_LOCAL_DIR:-$ROOT/.local}
PG_PORT=${FERRY_PG_PORT:-54329}
MC_PORT=${FERRY_MC_PORT:-11299}
PGDATA=$LOCAL/pgdata
SOCK=$LOCAL/run
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)

# Development credentials only; production roles are set up as deploy/README.md says.
OWNER_PASSWORD=${FERRY_OWNER_PASSWORD:-ferry_owner}
APP_PASSWORD=${FERRY_APP_PASSWORD:-ferry_app}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

apt_install() {
  [ $# -gt 0 ] || return 0
  echo "installing: $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing_packages() {
  local package
  for package in "$@"; do dpkg -s "$package" >/dev/null 2>&1 || echo "$package"; done
}

# The same package sets serve CI (`install`) and the Docker image (`install build|runtime`),
# so the image's install steps are the ones CI exercises.
install() {
  case "${1:-all}" in
    build) apt_install $(missing_packages libpq-dev libmemcached-dev libsqlite3-dev zlib1g-dev libcurl4-openssl-dev) ;;
    # libmemcachedutil2 comes from libmemcached's source package; Ferry links it. libcurl4:
    # CCurlFetch, which fetches JWT providers' key sets over HTTPS (and Foundation's networking);
    # ca-certificates: the authorities it verifies a provider's certificate against.
    runtime) apt_install $(missing_packages libpq5 libmemcached11 libmemcachedutil2 zlib1g libcurl4 ca-certificates) ;;
    # What `start` needs, and deploy/run.sh's build and demo: the two services and the
    # libraries Ferry builds against; not the test tools of `all` (a browser, nginx, ...).
    services)
      local need=()
      [ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] || need+=(postgresql postgresql-contrib)
      command -v memcached >/dev/null || need+=(memcached)
      need+=($(missing_packages libpq-dev libmemcached-dev libsqlite3-dev zlib1g-dev libcurl4-openssl-dev libpq5 libmemcached11 libmemcachedutil2 zlib1g libcurl4))
      apt_install "${need[@]}"
      PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
      ;;
    all)
      local need=()
      [ -n "$PGBIN" ] && [ -x "$PGBIN/initdb" ] || need+=(postgresql postgresql-contrib)
      command -v memcached >/dev/null || need+=(memcached)
      command -v systemd-analyze >/dev/null || need+=(systemd)
      command -v nginx >/dev/null || need+=(nginx-light)
      command -v pgbouncer >/dev/null || need+=(pgbouncer)
      # ferry-notes' terminal test types into two tmux sessions and reads their screens.
      command -v tmux >/dev/null || need+=(tmux)
      # The console's browser tests drive headless Chromium (Tests/FerryTests/Console).
      command -v chromium >/dev/null || need+=(chromium)
      # FerryWeb (clients/web) compiles with Debian's TypeScript and tests under Node.
      command -v tsc >/dev/null || need+=(node-typescript)
      command -v node >/dev/null || need+=(nodejs)
      # deploy/test-watchdog.sh: a hung test's process tree (pgrep) and its threads' stacks (gdb).
      command -v pgrep >/dev/null || need+=(procps)
      command -v gdb >/dev/null || need+=(gdb)
      python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
      need+=($(missing_packages libpq-dev libmemcached-dev libsqlite3-dev zlib1g-dev libcurl4-openssl-dev libpq5 libmemcached11 libmemcachedutil2 zlib1g libcurl4 openssl))
      apt_install "${need[@]}"
      PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
      if ! python3 -m openapi_spec_validator --help >/dev/null 2>&1; then
        echo "installing: openapi-spec-validator (PyPI)"
        # Debian's python is "externally managed"; the validator is a test tool only.
        python3 -m pip install -q openapi-spec-validator 2>/dev/null \
          || python3 -m pip install -q --break-system-packages openapi-spec-validator
      fi
      ;;
    *) echo "usage: $0 install [all|services|build|runtime]" >&2; exit 2 ;;
  esac
}

# Something already answers on 127.0.0.1:PORT (another checkout's services, a system
# PostgreSQL): say which port and which variable moves it, rather than pg_ctl's bare
# "could not start server".
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
refuse_taken() {
  local what=$1 port=$2 variable=$3
  echo "deploy/local.sh: cannot start $what: port $port on 127.0.0.1 is taken by another process" \
       "(another checkout's deploy/local.sh?). Choose a free one with $variable=<port>," \
       "the same for every deploy/local.sh command (start, env, stop) and for ferry init." >&2
  exit 1
}

pg_running() { [ -f "$PGDATA/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; }
mc_running() { [ -f "$LOCAL/mc/memcached.pid" ] && kill -0 "$(cat "$LOCAL/mc/memcached.pid")" 2>/dev/null; }

start() {
  install services
  mkdir -p "$LOCAL" "$SOCK" "$PGDATA" "$LOCAL/mc"
  if [ "$(id -u)" = 0 ]; then
    chown postgres:postgres "$SOCK" "$PGDATA"
    chmod 700 "$PGDATA"
    chown nobody "$LOCAL/mc"
  fi
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    as_pg "$PGBIN/initdb" -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  fi
  if ! pg_running; then
    port_taken "$PG_PORT" && refuse_taken PostgreSQL "$PG_PORT" FERRY_PG_PORT
    if ! as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -l "$SOCK/postgres.log" -w -o \
      "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$SOCK -c max_connections=300 -c shared_buffers=256MB -c fsync=${FERRY_PG_FSYNC:-on}" start >/dev/null; then
      echo "deploy/local.sh: PostgreSQL did not start on port $PG_PORT (FERRY_PG_PORT moves it); the end of $SOCK/postgres.log:" >&2
      tail -n 5 "$SOCK/postgres.log" >&2 || true
      exit 1
    fi
  fi
  psql_su() { as_pg psql -h "$SOCK" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA "$@"; }
  psql_su <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ferry_owner') THEN
    CREATE ROLE ferry_owner LOGIN CREATEDB PASSWORD '$OWNER_PASSWORD';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ferry_app') THEN
    CREATE ROLE ferry_app LOGIN NOBYPASSRLS PASSWORD '$APP_PASSWORD';
  END IF;
  -- Lets tests drop their scratch databases even while a pool is still connected.
  IF NOT pg_has_role('ferry_owner', 'pg_signal_backend', 'MEMBER') THEN
    GRANT pg_signal_backend TO ferry_owner;
  END IF;
  -- Lets the console name the session that holds the changes feed back (docs/CONSOLE.md).
  IF NOT pg_has_role('ferry_owner', 'pg_read_all_stats', 'MEMBER') THEN
    GRANT pg_read_all_stats TO ferry_owner;
  END IF;
END \$\$;
SQL
  if [ "$(psql_su -c "SELECT count(*) FROM pg_database WHERE datname = 'ferry'")" = 0 ]; then
    psql_su -c "CREATE DATABASE ferry OWNER ferry_owner"
  fi
  if ! mc_running; then
    port_taken "$MC_PORT" && refuse_taken memcached "$MC_PORT" FERRY_MC_PORT
    local user_flag=()
    [ "$(id -u)" = 0 ] && user_flag=(-u nobody)
    memcached -d -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 256 -c 4096 -P "$LOCAL/mc/memcached.pid" "${user_flag[@]}"
    for _ in $(seq 50); do mc_running && break; sleep 0.1; done
    mc_running || { echo "deploy/local.sh: memcached did not start on port $MC_PORT (FERRY_MC_PORT moves it)" >&2; exit 1; }
  fi
  status
}

stop() {
  if pg_running; then as_pg "$PGBIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null; fi
  if mc_running; then kill "$(cat "$LOCAL/mc/memcached.pid")"; rm -f "$LOCAL/mc/memcached.pid"; fi
  echo "stopped"
}

status() {
  local ok=0
  if pg_running; then echo "postgresql: running on 127.0.0.1:$PG_PORT (socket $SOCK)"; else echo "postgresql: stopped"; ok=1; fi
  if mc_running; then echo "memcached: running on 127.0.0.1:$MC_PORT"; else echo "memcached: stopped"; ok=1; fi
  return $ok
}

env_exports() {
  local host=127.0.0.1
  if [ "${1:-}" = --socket ]; then
    # A socket directory goes in a URL's host part percent-encoded (libpq decodes it).
    host=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$SOCK")
  fi
  echo "export FERRY_DATABASE_URL='postgresql://ferry_app:$APP_PASSWORD@$host:$PG_PORT/ferry'"
  echo "export FERRY_DATABASE_MIGRATION_URL='postgresql://ferry_owner:$OWNER_PASSWORD@$host:$PG_PORT/ferry'"
  echo "export FERRY_MEMCACHED_SERVERS='127.0.0.1:$MC_PORT'"
}

case "${1:-}" in
  install) install "${2:-all}" ;;
  start)
    # One start at a time: two at once (CI's side-by-side schemathesis runs) raced in initdb
    # and pg_ctl. flock -o keeps the lock in flock itself, so the daemons this start leaves
    # running never inherit it.
    if [ -z "${FERRY_LOCAL_START_LOCKED:-}" ]; then
      mkdir -p "$LOCAL"
      FERRY_LOCAL_START_LOCKED=1 exec flock -o "$LOCAL/start.lock" bash "${BASH_SOURCE[0]}" start
    fi
    start ;;
  stop) stop ;;
  status) status ;;
  env) env_exports "${2:-}" ;;
  *) echo "usage: $0 install|start|stop|status|env" >&2; exit 2 ;;
esac
