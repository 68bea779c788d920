#!/usr/bin/env bash
# Set up a checkout on a bare machine, in four steps, one line each with its
# time: the system packages the project needs, the virtual environment
# `.venv`, the Python packages in it (minifx, its development tools and torch,
# the oracle the tests compare against), and numba's kernel cache.
#
#   bash scripts/setup.sh [lessons|test] [--system-only]
#
# `lessons` needs Graphviz (its `dot` program draws the lessons' graphs);
# `test` (the default) also needs Chromium and chromedriver, which run the
# site's browser test; on Debian, making .venv also needs python3-venv. The
# set may also come from MINIFX_SETUP_FOR. A missing package is installed
# with apt-get, as root or through sudo; where that is not possible, the
# script stops before doing anything else, with one line naming the command
# to run. `--system-only` stops after the system packages (the tests of this
# script use it).
#
# The installers' own output (apt-get, pip, the compiler of the kernels) goes
# to a log file under ${TMPDIR:-/tmp}, outside the checkout. When a step
# fails, the script names the step, shows the last lines of the log and the
# log's path, and exits with the step's status; when all succeed, it deletes
# the log.
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

# -- the steps: one line each, the installers' output in the log ---------------
log="$(mktemp "${TMPDIR:-/tmp}/minifx-setup-XXXXXX")"
keep_log=0
trap '[ "$keep_log" = 1 ] || rm -f "$log"' EXIT
LOG_LINES=20  # of the log shown when a step fails

now_ms() {  # wall-clock milliseconds (bash 5's EPOCHREALTIME; whole seconds before it)
    if [ -n "${EPOCHREALTIME:-}" ]; then
        local t="${EPOCHREALTIME/[.,]/}"
        echo $(( 10#$t / 1000 ))
    else
        echo $(( SECONDS * 1000 ))
    fi
}

took() {  # the time since the step began: "0.4 s", "41 s", "2 min 5 s"
    local ms=$(( $(now_ms) - step_began ))
    if [ "$ms" -lt 10000 ]; then
        printf '%d.%d s' $(( ms / 1000 )) $(( ms % 1000 / 100 ))
    elif [ "$ms" -lt 60000 ]; then
        printf '%d s' $(( ms / 1000 ))
    else
        printf '%d min %d s' $(( ms / 60000 )) $(( ms % 60000 / 1000 ))
    fi
}

begin() {  # begin NAME TEXT: the start of a step's line, finished by done_step or failed
    step="$1"
    step_began=$(now_ms)
    printf 'setup.sh: %s: %s' "$1" "$2"
}

done_step() {  # done_step [TEXT]: the end of the step's line
    printf '%s (%s)\n' "${1-" ... done"}" "$(took)"
}

failed() {  # failed STATUS COMMAND: end the line, show the command's last lines, stop
    printf ' ... FAILED (%s)\n' "$(took)"
    keep_log=1
    {
        echo "setup.sh: the step '$step' failed: '$2' exited with status $1; the last lines of its log:"
        local lines=() line
        while IFS= read -r line || [ -n "$line" ]; do
            if [ "$line" = "\$ $2" ]; then lines=(); continue; fi  # the command's own output only
            lines+=("$line")
            [ "${#lines[@]}" -le "$LOG_LINES" ] || lines=("${lines[@]:1}")
        done < "$log"
        for line in ${lines[@]+"${lines[@]}"}; do echo "    $line"; done
        echo "setup.sh: the whole log: $log"
    } >&2
    exit "$1"
}

run() {  # run COMMAND...: its output into the log; a failure stops the set-up
    printf '\n$ %s\n' "$*" >>"$log"
    local status=0
    "$@" >>"$log" 2>&1 || status=$?
    [ "$status" = 0 ] || failed "$status" "$*"
}

# -- system packages: (Debian package, a command it provides, why) ------------
packages=(graphviz)
commands=(dot)
if [ "$want" = test ]; then
    packages+=(chromium chromium-driver)
    commands+=("chromium|chromium-browser" chromedriver)
fi

why() {  # what a package is for, as the step's line says it
    case "$1" in
        graphviz) echo "draws the lessons' graphs" ;;
        chromium|chromium-driver) echo "run the site's browser test" ;;
        python3-venv) echo "lets python3 make .venv" ;;
    esac
}

described() {  # "graphviz (draws ...), chromium and chromium-driver (run ...)"
    local text="" group="" reason="" package
    for package in "$@"; do
        if [ -n "$group" ] && [ "$(why "$package")" = "$reason" ]; then
            group+=" and $package"
            continue
        fi
        [ -z "$group" ] || text+="${text:+, }$group ($reason)"
        group="$package" reason="$(why "$package")"
    done
    echo "$text${text:+, }$group ($reason)"
}

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
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        runner=(sudo)
    elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
        # sudo asks for the password now, not in the middle of the step's line
        if ! sudo -v; then
            echo "setup.sh: sudo refused; run: sudo apt-get update && sudo $install" >&2
            exit 1
        fi
        runner=(sudo)
    else
        echo "setup.sh: missing system packages; run: sudo apt-get update && sudo $install" >&2
        exit 1
    fi
    begin "system packages" "installing $(described "${missing[@]}") with apt-get"
    # sudo resets the environment, so the setting goes in through env.
    run ${runner[@]+"${runner[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -q
    run ${runner[@]+"${runner[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
    for i in "${!packages[@]}"; do
        if ! provides "${commands[$i]}"; then
            printf ' ... FAILED (%s)\n' "$(took)"
            echo "setup.sh: ${packages[$i]} was installed but '${commands[$i]}' is still not on PATH" >&2
            exit 1
        fi
    done
    done_step
else
    begin "system packages" "$(described "${packages[@]}")"
    done_step " already there"
fi
if [ "$system_only" = 1 ]; then
    exit 0
fi

# -- the virtual environment ---------------------------------------------------
if [ ! -x .venv/bin/python ]; then
    begin "virtual environment" "making .venv"
    run python3 -m venv .venv
    done_step
else
    begin "virtual environment" ".venv"
    done_step " already there"
fi

# -- the Python packages ---------------------------------------------------------
begin "Python packages" \
    "installing minifx[dev,torch] into .venv (editable; torch==2.13.0, the tests' oracle)"
run .venv/bin/python -m pip install --upgrade pip
run .venv/bin/python -m pip install -e ".[dev,torch]"
done_step

# -- numba's kernel cache: compiled here, once, not inside the first tests --------
begin "numba kernel cache" "each op once through scripts/warm_kernels.py"
printf '\n$ .venv/bin/python scripts/warm_kernels.py\n' >>"$log"
status=0
said="$(.venv/bin/python scripts/warm_kernels.py 2>>"$log")" || status=$?
[ -z "$said" ] || printf '%s\n' "$said" >>"$log"
[ "$status" = 0 ] || failed "$status" ".venv/bin/python scripts/warm_kernels.py"
done_step " ... ${said##*$'\n'}"  # its last line: how many kernels it compiled
