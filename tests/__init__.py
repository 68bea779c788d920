"""The tests, one package per chapter: helpers are imported by module path (tests.helpers,
tests.ch04.ch04_models), so nothing edits sys.path.

pytest shows the values in a failing ``assert`` only in the modules it rewrites,
and it rewrites test files and conftests by itself; the helper modules beside
them (``tests/ch02/ch02_twins.py`` asserts the twin traces agree) are
registered here, before any of them is imported, so their failures show
values too. The list is read from the folders, so a new helper is covered.
"""

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
# tests/learn holds the machinery of `learn check`, imported outside pytest too.
HELPER_MODULES: tuple[str, ...] = tuple(sorted(
    ".".join(("tests", *path.relative_to(_HERE).with_suffix("").parts))
    for path in _HERE.rglob("*.py")
    if not path.name.startswith("test_")
    and path.name not in ("__init__.py", "conftest.py")
    and "learn" not in path.relative_to(_HERE).parts
))

pytest.register_assert_rewrite(*HELPER_MODULES)
