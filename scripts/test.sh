#!/usr/bin/env bash
# The test command: every chapter's tests, every lesson, the site build and
# the browser check. Extra arguments go to pytest (e.g. `-m ch03`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check .
.venv/bin/python -m pytest -q "$@"
