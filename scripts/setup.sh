#!/usr/bin/env bash
# Make the checkout's virtual environment (.venv) and install minifx into it
# with its development tools and torch, the oracle the tests compare against.
# torch is pinned to 2.13.0 exactly: that is the CPU build these machines hold;
# a looser spec would pull a CUDA build of several gigabytes.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,torch]"
