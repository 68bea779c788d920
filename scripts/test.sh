#!/usr/bin/env bash
# The test command: every chapter's tests, every lesson, the site build and
# the browser check; then the kernel tests once more on the kernels layer
# alone (TENSOR_FAST=0: the numba backend the book teaches must compute
# everything right without the fast layer). Extra arguments go to pytest
# (e.g. `-m ch03`), and then only that one run is made.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check .
.venv/bin/python -m pytest -q "$@"
if [ "$#" -eq 0 ]; then
    TENSOR_FAST=0 .venv/bin/python -m pytest -q tests -m "ch00 and not fast_layer"
fi
