#!/usr/bin/env bash
# The whole product on several server processes over one PostgreSQL database (SPEC Y1), on
# GraphHarbor (MIT; `graphharbor` + `graphharbor-runtime` on PyPI): API processes that also
# serve the chat page (langgraph.json's `http.app`), run-executing worker processes with
# leases (a killed worker's run is requeued and finished by another), Redis for the queue
# and the streams. Why GraphHarbor and not Aegra or langhost: docs/deploy/servers.md.
#
# It lives in its own venv, .venv-graphharbor (it pins langgraph 1.2.11). Redis comes from
# Debian's packages, one throwaway instance per deployment; PostgreSQL is yours (or
# scripts/postgres.sh's). GraphHarbor loads graphs and the custom app from file paths, so
# the module paths of langgraph.json are rewritten into a derived config under
# .multiworker/ (same graphs, serde allowlist and env); langgraph.json itself is unchanged.
#
# Usage:
#   bash scripts/multiworker.sh install                 # .venv-graphharbor (+ Redis as root)
#   eval "$(bash scripts/multiworker.sh start [--install] [--servers N] [--workers M]
#             [--jobs J] [--port P] [--config FILE] [--database-uri URI | --fresh-database])"
#       # exports TOOLWEAVE_MW_URLS (one URL per API process: API + /chat page),
#       # TOOLWEAVE_MW_DIR (pids, logs) and TOOLWEAVE_MW_DATABASE_URL
#   bash scripts/multiworker.sh stop "$TOOLWEAVE_MW_DIR"
#
# Defaults: 2 API processes on ports 8123, 8124 (0 picks free ports), 2 workers of 4
# concurrent runs each (--jobs), the repo's
# langgraph.json, the database in $TOOLWEAVE_DATABASE_URL (--fresh-database: a new database
# on the server of $TOOLWEAVE_TEST_DATABASE_URL, as CI does).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=.venv-graphharbor
RUNTIME="graphharbor==0.13.0.post45 graphharbor-runtime==0.13.0.post45"
STARTUP_TIMEOUT_S=${TOOLWEAVE_MW_STARTUP_TIMEOUT_S:-180}
log() { echo "multiworker.sh: $*" >&2; }

quiet_pip() {  # pip's output on stderr, without its notes about unused local indexes
  "$VENV/bin/pip" install -q --disable-pip-version-check "$@" 2>&1 \
    | { grep -v "^WARNING: Location '" || true; } >&2
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

install() {
  if ! command -v redis-server >/dev/null 2>&1; then
    if [ "$(id -u)" -ne 0 ]; then
      log "redis-server is missing: apt-get install redis-server (or run this as root)"; exit 1
    fi
    log "installing Redis from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends redis-server >&2 </dev/null
  fi
  if [ ! -x "$VENV/bin/graphharbor" ]; then
    log "installing $RUNTIME into $VENV"
    python3 -m venv "$VENV"
    quiet_pip $RUNTIME
    quiet_pip -e .
  fi
  if ! "$VENV/bin/python" -c "import toolweave_korhaz" 2>/dev/null; then
    log "installing the example domain (examples/korhaz) into $VENV"
    quiet_pip --no-deps -e examples/korhaz
  fi
}

# langgraph.json with module paths ("pkg.mod:attr") turned into file paths relative to the
# repository, which GraphHarbor requires; written to .multiworker/NAME.json (its parent,
# the repo, is the base directory GraphHarbor resolves them against).
derive_config() {
  "$VENV/bin/python" - "$1" "$2" <<'EOF'
import importlib.util, json, pathlib, sys
source, target = map(pathlib.Path, sys.argv[1:3])
root = pathlib.Path.cwd()
config = json.loads(source.read_text(encoding="utf-8"))
def file_path(spec):
    where, _, attr = spec.partition(":")
    if where.endswith(".py") or "/" in where:
        path = (source.parent / where).resolve()
    else:
        found = importlib.util.find_spec(where)
        if found is None or not found.origin:
            sys.exit(f"multiworker.sh: cannot find module {where} ({spec})")
        path = pathlib.Path(found.origin).resolve()
    return f"./{path.relative_to(root)}:{attr}"
for name, graph in config.get("graphs", {}).items():
    if isinstance(graph, dict):
        graph["path"] = file_path(graph["path"])
    else:
        config["graphs"][name] = file_path(graph)
if config.get("http", {}).get("app"):
    config["http"]["app"] = file_path(config["http"]["app"])
target.write_text(json.dumps(config, indent=2), encoding="utf-8")
EOF
}

fresh_database() {  # a new database on the server of $1; prints its URL
  "$VENV/bin/python" - "$1" <<'EOF'
import sys, uuid, psycopg
url = sys.argv[1]
name = f"toolweave_mw_{uuid.uuid4().hex[:10]}"
with psycopg.connect(url, autocommit=True) as conn:
    conn.execute(f'CREATE DATABASE "{name}"')
print(url.rsplit("/", 1)[0] + "/" + name)
EOF
}

wait_ok() {  # $1 port, $2 pid, $3 log
  local deadline=$((SECONDS + STARTUP_TIMEOUT_S))
  while [ $SECONDS -lt $deadline ]; do
    if ! kill -0 "$2" 2>/dev/null; then
      log "server on port $1 exited:"; tail -n 40 "$3" >&2; return 1
    fi
    if python3 -c 'import sys, urllib.request as u; u.urlopen(sys.argv[1], timeout=2)' \
      "http://127.0.0.1:$1/ok" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  log "server on port $1 did not answer /ok within ${STARTUP_TIMEOUT_S}s"; tail -n 40 "$3" >&2; return 1
}

start() {
  local servers=2 workers=2 jobs=4 port=8123 config=langgraph.json database=${TOOLWEAVE_DATABASE_URL:-}
  local fresh=0 do_install=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --install) do_install=1 ;;
      --servers) servers=$2; shift ;;
      --workers) workers=$2; shift ;;
      --jobs) jobs=$2; shift ;;
      --port) port=$2; shift ;;
      --config) config=$2; shift ;;
      --database-uri) database=$2; shift ;;
      --fresh-database) fresh=1 ;;
      *) log "unknown option $1"; exit 2 ;;
    esac
    shift
  done
  if [ "$do_install" = 1 ]; then install; fi
  if [ ! -x "$VENV/bin/graphharbor" ]; then log "run: bash scripts/multiworker.sh install"; exit 1; fi
  if [ "$fresh" = 1 ]; then
    database=$(fresh_database "${TOOLWEAVE_TEST_DATABASE_URL:?--fresh-database needs TOOLWEAVE_TEST_DATABASE_URL}")
  fi
  if [ -z "$database" ]; then log "no database: pass --database-uri or set TOOLWEAVE_DATABASE_URL"; exit 1; fi
  local dir redis_port
  dir=$(mktemp -d /tmp/toolweave-mw.XXXXXX)
  STARTING_DIR=$dir
  mkdir -p .multiworker
  derive_config "$config" ".multiworker/$(basename "$dir").json"
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --dir "$dir" --pidfile "$dir/redis.pid" >&2
  for _ in $(seq 1 50); do [ -s "$dir/redis.pid" ] && break; sleep 0.1; done
  local redis="redis://127.0.0.1:$redis_port"
  export LANGSMITH_TRACING=${LANGSMITH_TRACING:-false} LANGGRAPH_CLI_NO_ANALYTICS=1
  # runs/wait answers 503 after this long in the queue (GraphHarbor's default: 60 s)
  export GRAPHHARBOR_RUN_WAIT_TIMEOUT=${GRAPHHARBOR_RUN_WAIT_TIMEOUT:-600}
  # PostgreSQL connections per process (GraphHarbor's default: 20 + 20 overflow)
  export PG_POOL_SIZE=${PG_POOL_SIZE:-5} PG_MAX_OVERFLOW=${PG_MAX_OVERFLOW:-5}
  DATABASE_URI=$database "$VENV/bin/graphharbor" migrate upgrade >"$dir/migrate.log" 2>&1 \
    || { cat "$dir/migrate.log" >&2; exit 1; }
  local gh=$ROOT/$VENV/bin/graphharbor derived=.multiworker/$(basename "$dir").json urls="" n p pid
  for n in $(seq 1 "$workers"); do
    setsid "$gh" worker --config "$derived" --database-uri "$database" --redis-uri "$redis" \
      --n-jobs-per-worker "$jobs" >"$dir/worker$n.log" 2>&1 </dev/null &
    echo "worker $!" >>"$dir/pids"
  done
  for n in $(seq 1 "$servers"); do
    if [ "$port" = 0 ]; then p=$(free_port); else p=$((port + n - 1)); fi
    setsid "$gh" serve -c "$derived" --port "$p" --database-uri "$database" --redis-uri "$redis" \
      --no-browser >"$dir/server$n.log" 2>&1 </dev/null &
    pid=$!
    echo "server $pid $p" >>"$dir/pids"
    wait_ok "$p" "$pid" "$dir/server$n.log"
    urls="$urls http://127.0.0.1:$p"
  done
  STARTING_DIR=
  log "$servers API processes (API + /chat):$urls; $workers workers; logs in $dir"
  echo "export TOOLWEAVE_MW_DIR='$dir'"
  echo "export TOOLWEAVE_MW_URLS='${urls# }'"
  echo "export TOOLWEAVE_MW_DATABASE_URL='$database'"
}

stop() {
  local dir=$1 role pid _
  case "$(basename "$dir")" in
    toolweave-mw.*) ;;
    *) log "refusing to stop $dir: not a dir made by this script"; return 1 ;;
  esac
  if [ -f "$dir/pids" ]; then
    while read -r role pid _; do kill "$pid" 2>/dev/null || true; done <"$dir/pids"
    for _ in $(seq 1 40); do
      local alive=0
      while read -r role pid _; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$dir/pids"
      [ "$alive" = 0 ] && break
      sleep 0.25
    done
    while read -r role pid _; do kill -9 "$pid" 2>/dev/null || true; done <"$dir/pids"
  fi
  if [ -s "$dir/redis.pid" ]; then kill "$(cat "$dir/redis.pid")" 2>/dev/null || true; fi
  rm -f ".multiworker/$(basename "$dir").json"
  rm -rf "$dir"
}

STARTING_DIR=
trap '[ -z "$STARTING_DIR" ] || stop "$STARTING_DIR" >/dev/null 2>&1 || true' EXIT

case "${1:-}" in
  install) install ;;
  start) shift; start "$@" ;;
  stop) stop "${2:?the TOOLWEAVE_MW_DIR printed by start}" ;;
  *) log "usage: multiworker.sh install | start [options] | stop DIR"; exit 2 ;;
esac
