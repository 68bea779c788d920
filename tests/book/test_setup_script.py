"""scripts/setup.sh on a bare machine: the system packages it installs, or the line it stops with.

Each test copies setup.sh into an empty folder (so the real checkout and its
.venv are never touched) and runs it with a PATH that holds only the few
programs the script needs, plus stubs: a fake ``apt-get`` and ``sudo`` that
record their arguments in a log instead of installing anything, and a fake
``id`` where the test plays a user who is not root. Graphviz's ``dot`` and
Chromium are therefore hidden, as on a fresh machine.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("bash", "dirname", "env", "chmod")  # what setup.sh (and the stubs) run


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

    _stub(stubs, "python3", "exit 0\n")  # a Python that can make virtual environments

    def run(*args, user_id=0, stdin=subprocess.DEVNULL, **extra_env):
        _stub(stubs, "id", f'[ "$1" = -u ] && echo {user_id}\n')
        env = {"PATH": f"{stubs}:{tools}", "HOME": str(tmp_path), "LOG": str(log), **extra_env}
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
    assert result.stdout == "setup.sh: installing system packages: graphviz\n"
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
    assert result.stdout == ""
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
