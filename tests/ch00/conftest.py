"""Chapter 0 fixtures: run the op tests once per available tensor backend."""

import pytest

import tensor


@pytest.fixture(params=tensor.backend.available())
def backend(request):
    """Make `request.param` the active backend for one test, then restore the previous one."""
    previous = tensor.backend.get_backend()
    tensor.backend.set_backend(request.param)
    yield request.param
    tensor.backend.set_backend(previous)
