"""The fast layer's hand-off of ranges to its worker threads (``threads.in_ranges``).

The elementwise kernels and minifx's compiled kernels split their output in
ranges run on persistent threads. These tests hold the contract the callers
rely on: the ranges cover [0, n) exactly once, an exception in any range
reaches the caller and leaves the workers usable, and several Python threads
(or a range that itself splits) may call at once.
"""

import threading

import numpy as np
import pytest

from tensor.backend.fast import backend as nb

pytestmark = pytest.mark.fast_layer  # the fast layer's own machinery


def covered(n: int, k: int) -> np.ndarray:
    """How often each index of [0, n) was handed to a range by in_ranges(n, k)."""
    counts = np.zeros(n, np.int64)
    lock = threading.Lock()

    def job(lo: int, hi: int) -> None:
        with lock:
            counts[lo:hi] += 1

    nb.in_ranges(job, n, k)
    return counts


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 1 << 20])
@pytest.mark.parametrize("k", [1, 2, 3, 8])
def test_ranges_cover_every_index_exactly_once(n, k):
    assert (covered(n, k) == 1).all()


def test_ranges_run_on_other_threads():
    threads = set()
    lock = threading.Lock()

    def job(lo, hi):
        with lock:
            threads.add(threading.get_ident())

    nb.in_ranges(job, 100, 3)
    assert threading.get_ident() in threads  # the caller runs the first range
    # each polling worker takes a range; the caller runs the ones left over
    assert len(threads) == min(3, nb.threads.SPINNERS.workers + 1)


@pytest.mark.parametrize("failing", [0, 1, 2])
def test_an_exception_in_any_range_reaches_the_caller(failing):
    done = []

    def job(lo, hi):
        if lo == failing * 10:
            raise ValueError(f"range {lo}")
        done.append(lo)

    with pytest.raises(ValueError, match=f"range {failing * 10}"):
        nb.in_ranges(job, 30, 3)
    assert sorted(done) == sorted({0, 10, 20} - {failing * 10})  # the others all finished
    assert (covered(30, 3) == 1).all()  # and the workers still serve the next call


def test_a_range_that_splits_again_runs_its_ranges_itself():
    counts = np.zeros(64, np.int64)

    def outer(lo, hi):
        def inner(a, b):
            counts[a:b] += 1
        nb.in_ranges(lambda a, b: inner(lo + a, lo + b), hi - lo, 2)

    nb.in_ranges(outer, 64, 2)
    assert (counts == 1).all()


def test_several_python_threads_at_once():
    errors = []

    def caller(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(200):
                n, k = int(rng.integers(1, 5000)), int(rng.integers(1, 4))
                assert (covered(n, k) == 1).all()
        except BaseException as e:  # reported below, from the main thread
            errors.append(e)

    threads = [threading.Thread(target=caller, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_elementwise_results_on_both_sides_of_the_split():
    # Sizes just under and over the split: the threaded path gives NumPy's answer.
    for n in (nb.settings.SPLIT - 1, nb.settings.SPLIT, 3 * nb.settings.SPLIT + 5):
        a = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        b = np.random.default_rng(n + 1).standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(nb.binary("add", a, b), a + b)
        np.testing.assert_array_equal(nb.unary("neg", a), -a)
