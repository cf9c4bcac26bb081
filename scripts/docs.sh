#!/usr/bin/env bash
# Build the documentation (mkdocs + mkdocstrings) with --strict, so a broken reference or
# a docstring mkdocstrings cannot read fails the build.
# Usage: bash scripts/docs.sh [serve] [mkdocs options]; the site goes to build/site.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/package-tree.sh build/docs-src
command=build
if [ "${1:-}" = serve ]; then command=serve; shift; fi
exec .venv/bin/mkdocs "$command" "$@"
