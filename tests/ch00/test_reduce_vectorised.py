"""The vectorised max/min and argmax of tensor/backend/kernels/reduce.py, and
the serial/parallel split, against NumPy on the cases a select gets wrong:
NaN anywhere, infinities, signed zeros, float64, integers."""

import numpy as np
import pytest

from tensor.backend.kernels import reduce as rd


def rows(dtype, n=1000, seed=0):
    return (np.random.default_rng(seed).standard_normal(n) * 100).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 7, 8, 9, 1000])
def test_max_and_min_match_numpy(dtype, n):
    a = rows(dtype, n)
    assert rd.reduce_run(2, a, 0, n, 1) == a.max()
    assert rd.reduce_run(3, a, 0, n, 1) == a.min()
    negative = -np.abs(a) - 1
    assert rd.reduce_run(2, negative, 0, n, 1) == negative.max()
    assert rd.row_amax(negative) == negative.max()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", [0, 3, 999])
def test_nan_anywhere_wins_and_infinities_count(dtype, where):
    a = rows(dtype)
    a[where] = np.nan
    assert np.isnan(rd.reduce_run(2, a, 0, a.size, 1))
    assert np.isnan(rd.reduce_run(3, a, 0, a.size, 1))
    a[where] = -np.nan  # the sign bit set: still NaN
    assert np.isnan(rd.reduce_run(2, a, 0, a.size, 1))
    a[where] = np.inf
    assert rd.reduce_run(2, a, 0, a.size, 1) == np.inf
    assert rd.reduce_run(3, a, 0, a.size, 1) == a.min()
    a[where] = -np.inf
    assert rd.reduce_run(3, a, 0, a.size, 1) == -np.inf


def test_signed_zeros_and_an_offset_run():
    a = np.array([-0.0, 0.0, -0.0, -1.0, 5.0, 2.0], np.float32)
    assert rd.reduce_run(2, a, 0, 4, 1) == 0.0
    assert rd.reduce_run(3, a, 3, 3, 1) == -1.0
    assert rd.reduce_run(2, a, 3, 3, 1) == 5.0


def test_integers_take_the_plain_scan():
    a = np.array([3, -7, 12, 0, 12], np.int64)
    assert rd.reduce_run(2, a, 0, 5, 1) == 12
    assert rd.reduce_run(3, a, 0, 5, 1) == -7


@pytest.mark.parametrize("parallel", [False, True])
def test_argmax_rows_first_largest_and_nan(parallel, monkeypatch):
    from tests.backends import NUMBA as nb

    if parallel:
        monkeypatch.setattr(rd, "PARALLEL_ROWS_MIN", 1)
    a = rows(np.float32, 4000).reshape(4, 1000)
    a[1, 10] = a[1, 900] = 1e6  # ties: the first
    a[2, 500] = np.nan
    a[3, 7] = np.inf
    got = nb.argmax(a, 1, False)
    np.testing.assert_array_equal(got, [a[0].argmax(), 10, 500, 7])
    np.testing.assert_array_equal(nb.argmax(np.ascontiguousarray(a.T), 0, False), got)


@pytest.mark.parametrize("shared", [False, True])
def test_chunked_reductions_either_way(shared, monkeypatch):
    """A whole-array reduction on this thread, or its chunks shared with the spinning
    workers (``chunks_task``), gives the same answer."""
    from tests.backends import NUMBA as nb
    from tests.backends import share_with_workers

    share_with_workers(monkeypatch, shared)
    a = rows(np.float32, 100_000)
    np.testing.assert_allclose(nb.reduce("sum", a, (), False), a.sum(dtype=np.float64),
                               rtol=1e-5)
    assert nb.reduce("amax", a, (), False) == a.max()
    assert nb.reduce("amin", a.reshape(100, 1000), (1,), False).tolist() == a.reshape(
        100, 1000).min(1).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("n", [1, rd.CHUNK - 1, rd.CHUNK, rd.CHUNK + 1, 3 * rd.CHUNK + 17])
def test_whole_array_in_one_serial_call_across_chunks(dtype, n):
    a = (np.random.default_rng(n).standard_normal(n) * 100).astype(dtype)
    np.testing.assert_allclose(rd.reduce_all_serial(0, a), a.sum(dtype=np.float64), rtol=1e-5)
    assert rd.reduce_all_serial(2, a) == a.max()
    assert rd.reduce_all_serial(3, a) == a.min()
    if dtype != np.int64:
        a[-1] = np.nan  # in the last chunk: the combined result is still NaN
        assert np.isnan(rd.reduce_all_serial(2, a)) and np.isnan(rd.reduce_all_serial(3, a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_last_dim_reductions_and_argmax_of_a_contiguous_tensor(dtype):
    from tests.backends import NUMBA as nb

    a = (np.random.default_rng(3).standard_normal((50, 300)) * 10).astype(dtype)
    a[7, 123] = np.nan
    a[9, :] = -np.abs(a[9, :])
    a[9, 40] = a[9, 41] = 0.0  # a tie: the first wins
    for op, ref in (("sum", np.sum), ("mean", np.mean), ("amax", np.max), ("amin", np.min)):
        for keepdim in (False, True):
            got = nb.reduce(op, a, (1,), keepdim)
            np.testing.assert_allclose(got, ref(a, axis=1, keepdims=keepdim), rtol=1e-5)
    np.testing.assert_array_equal(nb.argmax(a, 1, False), np.argmax(a, axis=1))
    assert nb.argmax(a, 1, True).shape == (50, 1)
