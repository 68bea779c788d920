"""scripts/setup.sh on a bare machine: its one line per step, or the line it stops with.

Each test copies setup.sh into an empty folder (so the real checkout and its
.venv are never touched) and runs it with a PATH that holds only the few
programs the script needs, plus stubs: a fake ``apt-get`` and ``sudo`` that
record their arguments in a log instead of installing anything, a fake
``id`` where the test plays a user who is not root, and a fake ``python3``
whose virtual environment holds a fake ``python`` (pip and the kernel warm-up
chatter, as the real ones do, and record their calls). Graphviz's ``dot`` and
Chromium are therefore hidden, as on a fresh machine. The script's own log
goes to the test's TMPDIR, where the tests read it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# what setup.sh and the stubs run
TOOLS = ("bash", "dirname", "env", "chmod", "mktemp", "rm", "mkdir", "cp")
CHATTER = "Unpacking libsomething (1.2-3) ...\n"  # what an installer prints, line after line

# A virtual environment's python: pip and the warm-up chatter on both streams; the
# warm-up's last line (its summary) on stdout, as scripts/warm_kernels.py prints it.
VENV_PYTHON = (
    'echo "python $*" >> "$LOG"\n'
    'for i in 1 2 3; do echo "pip chatter $i"; echo "pip warning $i" >&2; done\n'
    'if [ "$1" = scripts/warm_kernels.py ]; then echo "compiled 12 kernels (12 in the cache)"; fi\n'
)

# One step's line: "setup.sh: <step>: <what> (<time>)".
TIME = r"\((\d+\.\d s|\d+ s|\d+ min \d+ s)\)"


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)


@pytest.fixture
def machine(tmp_path):
    """A bare machine: (checkout copy, bin folder for stubs, log of calls, run())."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup.sh", checkout / "scripts" / "setup.sh")
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in TOOLS:
        (tools / tool).symlink_to(shutil.which(tool))
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    log = tmp_path / "calls.log"
    log.touch()
    (tmp_path / "tmp").mkdir()

    # A Python that can make virtual environments, each with a VENV_PYTHON inside.
    (tmp_path / "venv_python").write_text("#!/bin/bash\n" + VENV_PYTHON)
    _stub(
        stubs,
        "python3",
        'if [ "$1" = -m ] && [ "$2" = venv ]; then\n'
        '  echo "python3 $*" >> "$LOG"\n'
        f'  mkdir -p "$3/bin" && cp {tmp_path}/venv_python "$3/bin/python"\n'
        '  chmod +x "$3/bin/python"\n'
        "fi\n",
    )

    def run(*args, user_id=0, stdin=subprocess.DEVNULL, **extra_env):
        _stub(stubs, "id", f'[ "$1" = -u ] && echo {user_id}\n')
        env = {"PATH": f"{stubs}:{tools}", "HOME": str(tmp_path), "LOG": str(log),
               "TMPDIR": str(tmp_path / "tmp"), **extra_env}
        return subprocess.run(
            ["bash", str(checkout / "scripts" / "setup.sh"), *args],
            env=env, capture_output=True, text=True, timeout=60, stdin=stdin,
        )

    return checkout, stubs, log, run


def _apt_that_installs(stubs: Path) -> None:
    """An apt-get that logs its call and then provides the commands of what it 'installed'."""
    _stub(
        stubs,
        "apt-get",
        'echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >> "$LOG"\n'
        'if [ "$1" = install ]; then\n'
        '  for p in "$@"; do\n'
        '    case "$p" in\n'
        f'      graphviz) printf "#!/bin/bash\\n" > {stubs}/dot; chmod +x {stubs}/dot ;;\n'
        f'      chromium) printf "#!/bin/bash\\n" > {stubs}/chromium;'
        f' chmod +x {stubs}/chromium ;;\n'
        f'      chromium-driver) printf "#!/bin/bash\\n" > {stubs}/chromedriver;'
        f' chmod +x {stubs}/chromedriver ;;\n'
        "    esac\n"
        "  done\n"
        "fi\n",
    )


def test_as_root_it_installs_graphviz_for_the_lessons(machine):
    checkout, stubs, log, run = machine
    _apt_that_installs(stubs)
    result = run("lessons", "--system-only")
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "apt-get update -q DEBIAN_FRONTEND=noninteractive",
        "apt-get install -y -q graphviz DEBIAN_FRONTEND=noninteractive",
    ]
    assert re.fullmatch(
        rf"setup.sh: system packages: installing graphviz \(draws the lessons' graphs\) "
        rf"with apt-get \.\.\. done {TIME}\n",
        result.stdout,
    ), result.stdout
    assert not (checkout / ".venv").exists()


def test_the_test_command_also_needs_chromium_and_its_driver(machine):
    _, stubs, log, run = machine
    _apt_that_installs(stubs)
    result = run("test", "--system-only")
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines()[1] == (
        "apt-get install -y -q graphviz chromium chromium-driver DEBIAN_FRONTEND=noninteractive"
    )


def test_the_set_can_come_from_the_environment(machine):
    _, stubs, log, run = machine
    _apt_that_installs(stubs)
    _stub(stubs, "dot", "")
    assert run("--system-only", MINIFX_SETUP_FOR="lessons").returncode == 0
    assert log.read_text() == ""  # Graphviz is there, and that is all the lessons need
    assert run("--system-only").returncode == 0  # the default is the test set
    assert "install -y -q chromium chromium-driver" in log.read_text()


def test_through_sudo_when_not_root(machine):
    _, stubs, log, run = machine
    _apt_that_installs(stubs)
    _stub(stubs, "sudo", 'echo "sudo $*" >> "$LOG"\n[ "$1" = -n ] && exit 0\nexec "$@"\n')
    result = run("lessons", "--system-only", user_id=1000)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "sudo -n true",
        "sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q",
        "apt-get update -q DEBIAN_FRONTEND=noninteractive",
        "sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q graphviz",
        "apt-get install -y -q graphviz DEBIAN_FRONTEND=noninteractive",
    ]


@pytest.mark.parametrize("with_sudo", [False, True], ids=["no-sudo", "sudo-needs-password"])
def test_when_it_cannot_install_it_stops_first_with_one_line(machine, with_sudo):
    checkout, stubs, log, run = machine
    _apt_that_installs(stubs)
    if with_sudo:  # sudo that would ask for a password, with no terminal to ask on
        _stub(stubs, "sudo", 'echo "sudo $*" >> "$LOG"\nexit 1\n')
    result = run("test", user_id=1000)  # not --system-only: nothing after this step may run
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "setup.sh: missing system packages; run: sudo apt-get update && "
        "sudo apt-get install -y graphviz chromium chromium-driver"
    ]
    assert "apt-get" not in log.read_text()
    assert not (checkout / ".venv").exists()


def test_without_apt_get_it_names_the_packages(machine):
    checkout, _, log, run = machine
    result = run("lessons")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "setup.sh: missing system packages; install graphviz (Debian names) with your "
        "package manager, then run this again"
    ]
    assert not (checkout / ".venv").exists()


def test_nothing_to_install_when_the_commands_are_there(machine):
    _, stubs, log, run = machine
    _apt_that_installs(stubs)
    for name in ("dot", "chromium", "chromedriver"):
        _stub(stubs, name, "")
    result = run("test", "--system-only", user_id=1000)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(
        r"setup.sh: system packages: graphviz \(draws the lessons' graphs\), chromium and "
        rf"chromium-driver \(run the site's browser test\) already there {TIME}\n",
        result.stdout,
    ), result.stdout
    assert log.read_text() == ""


def test_a_python_without_venv_gets_python3_venv(machine):
    checkout, stubs, log, run = machine
    _apt_that_installs(stubs)
    _stub(stubs, "dot", "")
    # Debian's bare python3: no ensurepip, so no virtual environments
    _stub(stubs, "python3", '[ "$1" = -c ] && exit 1\nexit 0\n')
    result = run("lessons", "--system-only")
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines()[1].startswith("apt-get install -y -q python3-venv ")
    (checkout / ".venv" / "bin").mkdir(parents=True)  # once .venv exists, it is not needed
    (checkout / ".venv" / "bin" / "python").symlink_to(shutil.which("true"))
    log.write_text("")
    assert run("lessons", "--system-only").returncode == 0
    assert log.read_text() == ""


def test_no_python3_at_all_is_named(machine):
    _, stubs, _, run = machine
    (stubs / "python3").unlink()
    result = run("lessons")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "setup.sh: python3 is not on PATH; install Python 3.10 or newer first"
    ]


def test_a_bad_argument_is_named(machine):
    _, _, _, run = machine
    result = run("everything")
    assert result.returncode == 2
    assert "unknown argument 'everything'" in result.stderr


def _lines_match(text: str, patterns: list[str]) -> None:
    lines = text.splitlines()
    assert len(lines) == len(patterns), text
    for line, pattern in zip(lines, patterns):
        assert re.fullmatch(pattern, line), (line, pattern)


STEPS_OF_A_BARE_MACHINE = [
    r"setup.sh: system packages: installing graphviz \(draws the lessons' graphs\), chromium and "
    rf"chromium-driver \(run the site's browser test\) with apt-get \.\.\. done {TIME}",
    rf"setup.sh: virtual environment: making \.venv \.\.\. done {TIME}",
    r"setup.sh: Python packages: installing minifx\[dev,torch\] into \.venv \(editable; "
    rf"torch==2\.13\.0, the tests' oracle\) \.\.\. done {TIME}",
    r"setup.sh: numba kernel cache: each op once through scripts/warm_kernels\.py \.\.\. "
    rf"compiled 12 kernels \(12 in the cache\) {TIME}",
]


def test_a_whole_run_prints_one_line_per_step_and_none_of_the_installers(machine, tmp_path):
    checkout, stubs, log, run = machine
    _apt_that_installs(stubs)
    _stub(stubs, "apt-get", (stubs / "apt-get").read_text()[len("#!/bin/bash\n"):]
          + f'for ((i = 1; i <= 50; i++)); do printf "{CHATTER}"; done\n')
    result = run("test")
    assert result.returncode == 0, result.stderr
    _lines_match(result.stdout, STEPS_OF_A_BARE_MACHINE)
    assert result.stderr == ""
    assert log.read_text().splitlines() == [
        "apt-get update -q DEBIAN_FRONTEND=noninteractive",
        "apt-get install -y -q graphviz chromium chromium-driver DEBIAN_FRONTEND=noninteractive",
        "python3 -m venv .venv",
        "python -m pip install --upgrade pip",
        "python -m pip install -e .[dev,torch]",
        "python scripts/warm_kernels.py",
    ]
    assert list((tmp_path / "tmp").iterdir()) == []  # the log goes once all steps succeed

    log.write_text("")  # the second run: everything is there, the steps still say so
    again = run("test")
    assert again.returncode == 0, again.stderr
    _lines_match(again.stdout, [
        r"setup.sh: system packages: graphviz \(draws the lessons' graphs\), chromium and "
        rf"chromium-driver \(run the site's browser test\) already there {TIME}",
        rf"setup.sh: virtual environment: \.venv already there {TIME}",
        *STEPS_OF_A_BARE_MACHINE[2:],
    ])
    assert "apt-get" not in log.read_text() and "venv" not in log.read_text()


def _failure_report(result, step: str, command: str, last: list[str], tmp_path: Path) -> str:
    """The checks every failed step shares; returns the log's text."""
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"setup.sh: the step '{step}' failed: '{command}' exited with status "
        f"{result.returncode}; the last lines of its log:"
    )
    assert lines[1:-1] == ["    " + line for line in last]
    path = lines[-1].removeprefix("setup.sh: the whole log: ")
    assert Path(path).parent == tmp_path / "tmp"  # outside the checkout
    return Path(path).read_text()


def test_a_failing_apt_get_names_the_step_shows_its_last_lines_and_stops(machine, tmp_path):
    checkout, stubs, log, run = machine
    _stub(
        stubs,
        "apt-get",
        'echo "apt-get $*" >> "$LOG"\n'
        '[ "$1" = install ] || exit 0\n'
        'for ((i = 1; i <= 200; i++)); do echo "apt line $i"; done\n'
        'echo "E: Unable to locate package chromium-driver" >&2\n'
        "exit 100\n",
    )
    result = run("test")
    assert result.returncode == 100
    _lines_match(result.stdout, [
        STEPS_OF_A_BARE_MACHINE[0].replace(r"done", "FAILED"),
    ])
    install = "apt-get install -y -q graphviz chromium chromium-driver"
    whole = _failure_report(
        result, "system packages", f"env DEBIAN_FRONTEND=noninteractive {install}",
        [f"apt line {i}" for i in range(182, 201)]
        + ["E: Unable to locate package chromium-driver"],
        tmp_path,
    )
    assert "apt line 1\n" in whole and "apt line 200\n" in whole  # all of it, in the log
    assert not (checkout / ".venv").exists()  # no later step started
    assert "venv" not in log.read_text()


def test_a_failing_pip_names_the_step_shows_its_last_lines_and_stops(machine, tmp_path):
    checkout, stubs, log, run = machine
    _stub(stubs, "dot", "")
    (checkout / ".venv" / "bin").mkdir(parents=True)
    _stub(
        checkout / ".venv" / "bin",
        "python",
        'echo "python $*" >> "$LOG"\n'
        'if [ "$1" = -m ] && [ "$2" = pip ]; then\n'
        '  for ((i = 1; i <= 60; i++)); do echo "pip line $i"; echo "pip warning $i" >&2; done\n'
        "  exit 1\n"
        "fi\n",
    )
    result = run("lessons")
    assert result.returncode == 1
    _lines_match(result.stdout, [
        rf"setup.sh: system packages: graphviz \(draws the lessons' graphs\) already there {TIME}",
        rf"setup.sh: virtual environment: \.venv already there {TIME}",
        r"setup.sh: Python packages: installing minifx\[dev,torch\] into \.venv \(editable; "
        rf"torch==2\.13\.0, the tests' oracle\) \.\.\. FAILED {TIME}",
    ])
    # stdout and stderr share the log, so the two streams interleave line by line
    last = [line for i in range(51, 61) for line in (f"pip line {i}", f"pip warning {i}")]
    _failure_report(result, "Python packages", ".venv/bin/python -m pip install --upgrade pip",
                    last, tmp_path)
    assert log.read_text().splitlines() == ["python -m pip install --upgrade pip"]


def test_a_failing_warm_up_names_the_step_and_shows_the_traceback(machine, tmp_path):
    checkout, stubs, log, run = machine
    _stub(stubs, "dot", "")
    (checkout / ".venv" / "bin").mkdir(parents=True)
    _stub(
        checkout / ".venv" / "bin",
        "python",
        'if [ "$1" = scripts/warm_kernels.py ]; then\n'
        '  echo "Traceback (most recent call last):" >&2\n'
        '  echo "numba.core.errors.TypingError: no kernel" >&2\n'
        "  exit 3\n"
        "fi\n",
    )
    result = run("lessons")
    assert result.returncode == 3
    assert result.stdout.splitlines()[-1].startswith("setup.sh: numba kernel cache: ")
    assert " ... FAILED (" in result.stdout.splitlines()[-1]
    _failure_report(
        result, "numba kernel cache", ".venv/bin/python scripts/warm_kernels.py",
        # only the failed command's own output, short as it is: not pip's before it
        ["Traceback (most recent call last):", "numba.core.errors.TypingError: no kernel"],
        tmp_path,
    )


def test_ci_installs_nothing_itself():
    text = (ROOT / ".ci" / "run").read_text()
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("apt-get" in line or "install" in line for line in code)
    assert "export MINIFX_REQUIRE_BROWSER=1" in code
    assert code[-2:] == ["bash scripts/test.sh", "bash scripts/narrow_cpu.sh"]
    # the second CPU profile installs nothing either: it runs in the test command's .venv
    profile = (ROOT / "scripts" / "narrow_cpu.sh").read_text()
    assert not any("install" in line for line in profile.splitlines()
                   if not line.lstrip().startswith("#"))
    # and the README's commands set the machine up through setup.sh
    assert "bash scripts/setup.sh lessons" in (ROOT / "scripts" / "lessons.sh").read_text()
    assert "bash scripts/setup.sh test" in (ROOT / "scripts" / "test.sh").read_text()
