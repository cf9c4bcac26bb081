#!/usr/bin/env bash
# Build the documentation (mkdocs + mkdocstrings) with --strict, so a broken reference or
# a docstring mkdocstrings cannot read fails the build.
# Usage: bash scripts/docs.sh [serve] [mkdocs options]; the site goes to build/site.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/package-tree.sh build/docs-src
command=build
if [ "${1:-}" = serve ]; then command=serve; shift; fi
# mkdocs --quiet raises the log level above WARNING, and then --strict never sees the
# warnings it should abort on (a broken link passes). So --quiet here means: build
# normally, print the log only when the build fails.
quiet=no
args=()
for arg in "$@"; do
  if [ "$arg" = --quiet ] || [ "$arg" = -q ]; then quiet=yes; else args+=("$arg"); fi
done
if [ "$quiet" = yes ] && [ "$command" = build ]; then
  if ! log=$(.venv/bin/mkdocs build ${args[@]+"${args[@]}"} 2>&1); then
    printf '%s\n' "$log" >&2
    exit 1
  fi
  exit 0
fi
exec .venv/bin/mkdocs "$command" ${args[@]+"${args[@]}"}
