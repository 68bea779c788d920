"""``python -m minifx compare ... --convert``: the comparison with torch.fx, then the
round trip through tensor, and an exit status that needs both to agree."""

import subprocess
import sys
import textwrap

MODELS = textwrap.dedent(
    """
    import torch
    import torch.nn.functional as F


    class Small(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 4)

        def forward(self, x):
            return F.relu(self.linear(x)).sum(dim=-1)


    class Mish(torch.nn.Module):
        def forward(self, x):
            return F.mish(x)
    """
)


def run(tmp_path, *args):
    (tmp_path / "models.py").write_text(MODELS)
    return subprocess.run(
        [sys.executable, "-m", "minifx", "compare", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )


def test_convert_reports_agreement(tmp_path):
    done = run(tmp_path, "models.py:Small", "--input-shape", "2,3", "--convert")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "minifx and torch.fx agree" in done.stdout
    assert "== conversion to tensor: same ==" in done.stdout
    assert done.stdout.rstrip().endswith("the tensor model agrees with torch")


def test_convert_reports_what_cannot_be_converted(tmp_path):
    done = run(tmp_path, "models.py:Mish", "--input-shape", "2,3", "--convert")
    assert done.returncode == 1
    assert "minifx and torch.fx agree" in done.stdout  # the tracers agree ...
    assert "== conversion to tensor: FAILED ==" in done.stdout  # ... tensor has no mish
    assert "1. call_function torch.nn.functional.mish at models.py:" in done.stdout


def test_without_the_flag_nothing_is_converted(tmp_path):
    done = run(tmp_path, "models.py:Mish", "--input-shape", "2,3")
    assert done.returncode == 0
    assert "conversion" not in done.stdout
