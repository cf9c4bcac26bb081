#!/usr/bin/env bash
# A throwaway PostgreSQL for tests and development: its own cluster in a temp dir,
# listening on 127.0.0.1 only, on a free port. Prints shell `export` lines on stdout.
#
# Usage:
#   eval "$(bash scripts/postgres.sh start)"          # sets TOOLWEAVE_TEST_DATABASE_URL, TOOLWEAVE_PG_DIR
#   eval "$(bash scripts/postgres.sh start --install)" # apt-get install postgresql first if missing (root)
#   bash scripts/postgres.sh stop "$TOOLWEAVE_PG_DIR"  # stop the server and delete its dir
#
# As root the cluster runs as the `postgres` user (initdb refuses root). Needs Debian's
# `postgresql` package (binaries under /usr/lib/postgresql/*/bin) or pg_ctl on PATH.
set -euo pipefail

log() { echo "postgres.sh: $*" >&2; }

find_bindir() {
  if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return
  fi
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$dir" ] && [ -x "$dir/pg_ctl" ]; then
    echo "$dir"
  fi
}

install_postgres() {
  if [ -n "$(find_bindir)" ]; then
    return
  fi
  if [ "$(id -u)" -ne 0 ]; then
    log "PostgreSQL is not installed and we are not root: apt-get install postgresql first"
    exit 1
  fi
  log "installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends postgresql >&2 </dev/null
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Run a PostgreSQL binary as the cluster owner (postgres when we are root).
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

start() {
  if [ "${1:-}" = "--install" ]; then
    install_postgres
  fi
  local bindir
  bindir=$(find_bindir)
  if [ -z "$bindir" ]; then
    log "no PostgreSQL binaries found; run with --install (as root) or apt-get install postgresql"
    exit 1
  fi
  local dir port password user=toolweave db=toolweave_test
  local parent=${TMPDIR:-/tmp}
  if [ "$(id -u)" -eq 0 ]; then
    parent=/tmp  # the postgres user must reach it
  fi
  dir=$(mktemp -d "$parent/toolweave-pg.XXXXXX")
  STARTING_DIR=$dir  # removed by the EXIT trap unless start gets to the end
  port=$(free_port)
  password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  printf '%s\n' "$password" >"$dir/pwfile"
  if [ "$(id -u)" -eq 0 ]; then
    chown -R postgres: "$dir"
  fi
  as_owner "$bindir/initdb" -D "$dir/data" -U "$user" --pwfile="$dir/pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  rm -f "$dir/pwfile"
  as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=300" \
    >&2 || { cat "$dir/server.log" >&2; exit 1; }
  as_owner "$bindir/psql" -h "$dir" -p "$port" -U "$user" -d postgres -qAt \
    -c "CREATE DATABASE $db" >&2
  STARTING_DIR=
  log "PostgreSQL $("$bindir/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port ($dir)"
  echo "export TOOLWEAVE_PG_DIR='$dir'"
  echo "export TOOLWEAVE_TEST_DATABASE_URL='postgresql://$user:$password@127.0.0.1:$port/$db'"
}

stop() {
  local dir=${1:-${TOOLWEAVE_PG_DIR:-}}
  if [ -z "$dir" ] || [ ! -d "$dir" ]; then
    log "nothing to stop (no cluster dir given and TOOLWEAVE_PG_DIR unset)"
    return 0
  fi
  case "$(basename "$dir")" in
    toolweave-pg.*) ;;
    *) log "refusing to remove $dir: not a dir made by this script"; return 1 ;;
  esac
  local bindir
  bindir=$(find_bindir)
  if [ -n "$bindir" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
  fi
  rm -rf "$dir"
  log "stopped and removed $dir"
}

STARTING_DIR=
trap '[ -z "$STARTING_DIR" ] || stop "$STARTING_DIR" >/dev/null 2>&1 || true' EXIT

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: $0 start [--install] | stop [DIR]" >&2; exit 2 ;;
esac
