"""Chapter 12's tests share one process with every exercise's step of ``learn check``:
whatever a test leaves on the mode stacks (a buggy ``__exit__`` that does not pop,
an assertion between an enter and an exit) is cleared after it, without the
exercise functions, so that it cannot fail the tests that come after."""

import pytest

from tensor import dispatch, overrides


@pytest.fixture(autouse=True)
def _empty_mode_stacks():
    yield
    if dispatch._modes or dispatch._routing:
        dispatch._modes.clear()
        dispatch._route(False)
    overrides._function_modes.clear()
