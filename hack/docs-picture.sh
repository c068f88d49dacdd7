#!/usr/bin/env bash
# docs/images/*.dot -> *.svg with Graphviz's dot (Debian: apt-get install graphviz). The
# source's sha256 goes into the SVG, so tests/test_docs.py sees a source edited without
# regenerating its picture, with no Graphviz needed to run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v dot >/dev/null || { echo "docs-picture: needs Graphviz's dot (apt-get install graphviz)" >&2; exit 1; }
for src in docs/images/*.dot; do
  svg="${src%.dot}.svg"
  hash=$(sha256sum "$src" | cut -d' ' -f1)
  dot -Tsvg "$src" | sed "0,/^<svg/s//<!-- source: $(basename "$src") sha256:${hash} -->\n<svg/" > "$svg.tmp"
  mv "$svg.tmp" "$svg"
  echo "wrote $svg"
done
