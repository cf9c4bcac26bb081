#!/usr/bin/env bash
# Lay the package out as it installs (toolweave/ plus graph/, tools/, llm/, coordinators/
# and state/ mapped to toolweave.graph, ...; setuptools package-dir) as a symlink tree, for
# tools that read the source statically and cannot follow the editable-install finder
# (mypy, mkdocstrings); the example domain package toolweave_korhaz (examples/korhaz) sits
# beside it. Usage: bash scripts/package-tree.sh DEST
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tree=$1
rm -rf "$tree" && mkdir -p "$tree"
cp -rs "$root/toolweave" "$tree/toolweave"
for sub in graph tools coordinators state llm; do
  ln -s "$root/$sub" "$tree/toolweave/$sub"
done
ln -s "$root/examples/korhaz/toolweave_korhaz" "$tree/toolweave_korhaz"
ln -s "$root/examples/pomoc/toolweave_pomoc" "$tree/toolweave_pomoc"
