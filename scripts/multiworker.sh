#!/usr/bin/env bash
# What the multi-process server test needs (issue 12, "beyond one machine"): Redis from Debian's
# packages on 127.0.0.1 (a free port, no persistence) and the MIT-licensed Postgres+Redis runtime
# for the stock LangGraph server (langgraph-runtime-pg with its `langhost` CLI). That runtime pins
# an older langgraph-api than the in-memory dev server, so it lives in its own venv, .venv-langhost.
# PostgreSQL comes from scripts/postgres.sh. Prints shell `export` lines on stdout.
#
# Usage:
#   eval "$(bash scripts/multiworker.sh start [--install])"  # sets TOOLWEAVE_TEST_REDIS_URL,
#                                                            # TOOLWEAVE_LANGHOST, TOOLWEAVE_REDIS_PID
#   bash scripts/multiworker.sh stop "$TOOLWEAVE_REDIS_PID"
set -euo pipefail
cd "$(dirname "$0")/.."
log() { echo "multiworker.sh: $*" >&2; }
RUNTIME="langgraph-runtime-pg==0.11.1.post1 langhost==0.11.1.post1"

quiet_pip() {  # pip's output on stderr, without its notes about unused local indexes
  .venv-langhost/bin/pip install -q --disable-pip-version-check "$@" 2>&1 \
    | { grep -v "^WARNING: Location '" || true; } >&2
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start() {
  if ! command -v redis-server >/dev/null 2>&1; then
    if [ "${1:-}" != --install ] || [ "$(id -u)" -ne 0 ]; then
      log "redis-server is missing: apt-get install redis-server (or pass --install as root)"; exit 1
    fi
    log "installing Redis from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends redis-server >&2 </dev/null
  fi
  if [ ! -x .venv-langhost/bin/langhost ]; then
    log "installing $RUNTIME into .venv-langhost"
    python3 -m venv .venv-langhost
    quiet_pip $RUNTIME
    quiet_pip -e .
  fi
  if ! .venv-langhost/bin/python -c "import toolweave_korhaz" 2>/dev/null; then
    log "installing the example domain (examples/korhaz) into .venv-langhost"
    quiet_pip --no-deps -e examples/korhaz
  fi
  local port dir
  port=$(free_port)
  dir=$(mktemp -d /tmp/toolweave-redis.XXXXXX)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --dir "$dir" --pidfile "$dir/redis.pid" >&2
  for _ in $(seq 1 50); do [ -s "$dir/redis.pid" ] && break; sleep 0.1; done
  log "Redis on 127.0.0.1:$port"
  echo "export TOOLWEAVE_TEST_REDIS_URL='redis://127.0.0.1:$port'"
  echo "export TOOLWEAVE_LANGHOST='$PWD/.venv-langhost/bin/langhost'"
  echo "export TOOLWEAVE_REDIS_PID='$dir/redis.pid'"
}

stop() {
  local pidfile=$1
  if [ -s "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
  rm -rf "$(dirname "$pidfile")"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) stop "${2:?pid file}" ;;
  *) log "usage: multiworker.sh start [--install] | stop PIDFILE"; exit 2 ;;
esac
