#!/usr/bin/env bash
# Set up a checkout on a bare machine: first the system packages the project
# needs, then the virtual environment `.venv` with minifx, its development
# tools and torch, the oracle the tests compare against.
#
#   bash scripts/setup.sh [lessons|test] [--system-only]
#
# `lessons` needs Graphviz (its `dot` program draws the lessons' graphs);
# `test` (the default) also needs Chromium and chromedriver, which run the
# site's browser test; on Debian, making .venv also needs python3-venv. The set may also come from MINIFX_SETUP_FOR. A missing
# package is installed with apt-get, as root or through sudo; where that is
# not possible, the script stops before doing anything else, with one line
# naming the command to run. `--system-only` stops after the system packages
# (the tests of this script use it).
#
# torch is pinned to 2.13.0 exactly: that is the CPU build these machines
# hold; a looser spec would pull a CUDA build of several gigabytes.
set -euo pipefail
cd "$(dirname "$0")/.."

want="${MINIFX_SETUP_FOR:-test}"
system_only=0
for arg in "$@"; do
    case "$arg" in
        lessons|test) want="$arg" ;;
        --system-only) system_only=1 ;;
        *) echo "setup.sh: unknown argument '$arg' (expected lessons, test or --system-only)" >&2
           exit 2 ;;
    esac
done
case "$want" in
    lessons|test) ;;
    *) echo "setup.sh: MINIFX_SETUP_FOR must be lessons or test, not '$want'" >&2; exit 2 ;;
esac

# -- system packages: (Debian package, a command it provides) ----------------
packages=(graphviz)
commands=(dot)
if [ "$want" = test ]; then
    packages+=(chromium chromium-driver)
    commands+=("chromium|chromium-browser" chromedriver)
fi

provides() {  # is one of the '|'-separated commands on PATH?
    local program
    IFS='|' read -r -a alternatives <<< "$1"
    for program in "${alternatives[@]}"; do
        if command -v "$program" >/dev/null 2>&1; then return 0; fi
    done
    return 1
}

missing=()
for i in "${!packages[@]}"; do
    provides "${commands[$i]}" || missing+=("${packages[$i]}")
done
# Debian's python3 makes no virtual environment without its venv package.
if [ ! -x .venv/bin/python ]; then
    if ! command -v python3 >/dev/null 2>&1; then
        echo "setup.sh: python3 is not on PATH; install Python 3.10 or newer first" >&2
        exit 1
    fi
    if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
        missing+=(python3-venv)
    fi
fi

if [ "${#missing[@]}" -gt 0 ]; then
    install="apt-get install -y ${missing[*]}"
    runner=()
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup.sh: missing system packages; install ${missing[*]} (Debian names) with your package manager, then run this again" >&2
        exit 1
    elif [ "$(id -u)" = 0 ]; then
        runner=()
    elif command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
        runner=(sudo)
    else
        echo "setup.sh: missing system packages; run: sudo apt-get update && sudo $install" >&2
        exit 1
    fi
    echo "setup.sh: installing system packages: ${missing[*]}"
    # sudo resets the environment, so the setting goes in through env.
    ${runner[@]+"${runner[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -q
    ${runner[@]+"${runner[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    for i in "${!packages[@]}"; do
        if ! provides "${commands[$i]}"; then
            echo "setup.sh: ${packages[$i]} was installed but '${commands[$i]}' is still not on PATH" >&2
            exit 1
        fi
    done
fi
if [ "$system_only" = 1 ]; then
    exit 0
fi

# -- the virtual environment ---------------------------------------------------
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,torch]"
