#!/usr/bin/env bash
# The main job: run every lesson end to end (each code block, its printed
# output checked) and build the site with `mkdocs build --strict` into site/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh lessons
.venv/bin/python -m pytest lessons -q
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict
echo "site built: $(pwd)/site/index.html"
