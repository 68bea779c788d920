"""The switch that runs the tests against the learner's workspace: ``MINIFX_WORKSPACE``.

``MINIFX_WORKSPACE=workspace .venv/bin/pytest -m ch03`` runs chapter 3's
tests on the copies of ``tensor`` and ``minifx`` in ``workspace/`` (made by
``python -m minifx learn start ch03``), not on the checkout's.

Two things would otherwise win over the workspace: ``python -m pytest`` puts
the working directory (the checkout) first on ``sys.path``, and pytest puts
the root conftest's folder (the checkout again) there before importing it.
The project is also installed editable, which maps ``minifx`` to the checkout.
So the root conftest calls :func:`use_workspace_if_asked` first, before
anything imports the packages: it puts the workspace at the front of
``sys.path`` and imports both packages from there at once; from then on
every ``import minifx`` finds them in ``sys.modules``. It fails loudly if
either came from anywhere else.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_VAR = "MINIFX_WORKSPACE"  # minifx.learn.workspace.ENV_VAR; a test checks they agree
PACKAGES = ("tensor", "minifx")


class WorkspaceError(RuntimeError):
    """MINIFX_WORKSPACE names no workspace, or the packages came from elsewhere."""


def use_workspace_if_asked() -> Path | None:
    """Import tensor and minifx from $MINIFX_WORKSPACE, if it is set; return that folder."""
    value = os.environ.get(ENV_VAR)
    if not value:
        return None
    workspace = Path(value).expanduser().resolve()
    missing = [p for p in PACKAGES if not (workspace / p / "__init__.py").is_file()]
    if missing:
        raise WorkspaceError(
            f"{ENV_VAR}={value}: {workspace} has no {', '.join(missing)} package; "
            "make it with `python -m minifx learn start chNN`")
    early = [p for p in PACKAGES if p in sys.modules and not _from(sys.modules[p], workspace)]
    if early:
        raise WorkspaceError(f"{ENV_VAR}: {', '.join(early)} was imported from the checkout "
                             "before the switch")
    if str(workspace) not in sys.path:
        sys.path.insert(0, str(workspace))
    # Child processes the tests start (python -m minifx compare ...) see it too.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(workspace), *filter(None, [os.environ.get("PYTHONPATH")])])
    for name in PACKAGES:
        module = __import__(name)
        if not _from(module, workspace):
            raise WorkspaceError(f"{ENV_VAR}: {name} was imported from {module.__file__}, "
                                 f"not from the workspace {workspace}")
    return workspace


def _from(module: object, folder: Path) -> bool:
    return Path(getattr(module, "__file__", "") or "/").resolve().is_relative_to(folder)
