#!/usr/bin/env bash
# The test command: every chapter's tests, every lesson, the site build and
# the browser check; then the kernel tests once more on the kernels layer
# alone (TENSOR_FAST=0: the numba backend the book teaches must compute
# everything right without the fast layer).
#
# With no arguments the work is shared between the two cores: tests/learn
# (the learner's tools: check's attribution of planted bugs, the sampled
# mutants, the milestones; each one a chain of single-threaded child
# processes) runs in a second pytest beside the rest, and its output is shown
# after the rest's. Extra arguments go to pytest (e.g. `-m ch03`), and then
# only that one run is made.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/ruff check .
if [ "$#" -gt 0 ]; then
    exec .venv/bin/python -m pytest -q "$@"
fi
learn_log="$(mktemp "${TMPDIR:-/tmp}/minifx-learn-tests-XXXXXX")"
trap 'kill "$learn_pid" 2>/dev/null || true; rm -f "$learn_log"' EXIT
.venv/bin/python -m pytest -q tests/learn >"$learn_log" 2>&1 &
learn_pid=$!
status=0
.venv/bin/python -m pytest -q --ignore=tests/learn || status=1
TENSOR_FAST=0 .venv/bin/python -m pytest -q tests -m "ch00 and not fast_layer" || status=1
echo "test.sh: tests/learn, run beside the rest:"
learn_status=0
wait "$learn_pid" || learn_status=1
cat "$learn_log"
if [ "$status" != 0 ] || [ "$learn_status" != 0 ]; then
    echo "test.sh: failed (see the runs above)" >&2
    exit 1
fi
