"""``minifx.wrap`` registrations that last as long as one test module's tests.

``minifx.wrap`` must run as module code, and its registry is a module-level
dict of minifx, kept for the life of the process. ``learn check`` runs one
chapter's steps in one process: a learner's broken ``wrap`` (or
``_Patcher.patch_dict``) would leave a wrong entry in the registry, or a stray
global in a test module, and every later step would fail with it. So each
module that registers functions does it in a module fixture built on this
generator: the registration runs as module code (``exec`` in the module's
globals) when the module's tests start, not at import (a stub of ``wrap``
then fails tests, not the collection), and on the way out the registry and
the module's names are put back as they were.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def registered(module_globals: dict[str, Any], source: str) -> Iterator[None]:
    """Run ``source`` (``minifx.wrap(...)`` lines) as code of the module; undo on exit."""
    from minifx import wrapping

    saved_registry = dict(wrapping._wrapped_fns_to_patch)
    saved_names = set(module_globals)
    try:
        exec(source, module_globals)  # noqa: S102 - module code, so wrap accepts it
        yield
    finally:
        for name in set(module_globals) - saved_names:
            del module_globals[name]
        wrapping._wrapped_fns_to_patch.clear()
        wrapping._wrapped_fns_to_patch.update(saved_registry)
