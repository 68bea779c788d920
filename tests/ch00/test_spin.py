"""The spinning workers (tensor/backend/fast/spin.py and threads.py).

A contiguous elementwise op, a whole-array or last-dim reduction, softmax
and layer_norm share their range with worker threads that poll for tasks.
These tests hold what the callers rely on: a shared op gives the serial
op's answer; the workers do run ranges; a worker that is parked or late is
never waited for (its range is taken back); several Python threads may
share ops at once; and the workers can be parked, switched off, and are
started afresh in a forked child.
"""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from tensor.backend import reference
from tensor.backend.fast import backend as nb
from tensor.backend.fast import spin
from tensor.backend.fast import tasks as ew
from tensor.backend.fast.threads import Spinners

pytestmark = pytest.mark.fast_layer  # the fast layer's own machinery


@pytest.fixture
def pool(monkeypatch):
    """A pool of one polling worker of the test's own, whatever the core count, in
    place of the backend's (a one-core machine has no worker by default)."""
    own = Spinners(workers=1)
    monkeypatch.setattr(nb.threads, "SPINNERS", own)
    return own


@pytest.fixture
def shared(monkeypatch):
    """Share every op from its first element-copies on."""
    monkeypatch.setattr(nb.settings, "SPIN_MIN", 1)


def data(n, dtype=np.float32, seed=0):
    return (np.random.default_rng(seed).standard_normal(n) * 10).astype(dtype)


def repeat(fn, times=20):
    """``fn()`` several times, so that later calls meet a polling worker; the last result,
    after checking every result was the same."""
    first = fn()
    for _ in range(times - 1):
        again = fn()
        np.testing.assert_array_equal(again, first)
    return first


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_shared_elementwise_ops_equal_numpy(shared, dtype):
    a, b = data(100_003, dtype), data(100_003, dtype, seed=1)
    for op in ("add", "mul", "maximum", "gt"):
        np.testing.assert_array_equal(repeat(lambda op=op: nb.binary(op, a, b)),
                                      reference.binary(op, a, b))
    two = np.array(2, dtype)
    np.testing.assert_array_equal(repeat(lambda: nb.binary("sub", a, two)), a - two)
    np.testing.assert_array_equal(repeat(lambda: nb.binary("sub", two, a)), two - a)
    np.testing.assert_array_equal(repeat(lambda: nb.unary("neg", a)), -a)


def test_shared_reductions_and_rows_equal_the_serial_kernels(shared, monkeypatch):
    a = data(200_000).reshape(200, 1000)
    w, b = data(1000, seed=2), data(1000, seed=3)
    cases = {
        "sum all": lambda: nb.reduce("sum", a, (), False),
        "amax all": lambda: nb.reduce("amax", a, (), False),
        "mean dim -1": lambda: nb.reduce("mean", a, (1,), False),
        "amin dim -1": lambda: nb.reduce("amin", a, (1,), False),
        "softmax": lambda: nb.softmax(a, 1),
        "log_softmax": lambda: nb.log_softmax(a, 1),
        "layer_norm": lambda: nb.layer_norm(a, 1, w, b, 1e-5),
        "layer_norm, no affine": lambda: nb.layer_norm(a, 1, None, None, 1e-5),
        "batch_norm": lambda: nb.batch_norm(a.reshape(2, 100, 10, 100), w[:100], w[100:200] ** 2,
                                            b[:100], b[100:200], 1e-5),
    }
    shared_results = {name: repeat(fn) for name, fn in cases.items()}
    monkeypatch.setattr(nb.settings, "SPIN_MIN", 1 << 60)
    for name, fn in cases.items():
        # Each chunk and row is computed the same way on any thread: equal, not close.
        np.testing.assert_array_equal(shared_results[name], fn(), err_msg=name)


def test_a_polling_worker_runs_ranges(shared, pool):
    a, b = data(200_000), data(200_000, seed=1)
    ran = pool.ctl[0, spin.DONE]
    deadline = time.monotonic() + 20
    while pool.ctl[0, spin.DONE] == ran:  # a loaded machine may need a few calls
        assert time.monotonic() < deadline, f"no range run: {pool.ctl[0, :8]}"
        results = [nb.binary("add", a, b) for _ in range(20)]  # back to back
        for r in results:
            np.testing.assert_array_equal(r, a + b)


def split_add_by_hand(ctl, a, b):
    """``a + b`` through ``spin.split`` with a control block of our own (no threads)."""
    out = np.zeros_like(a)
    task = ew.flat_task("add", "zip", a.dtype, out.dtype)
    floats = np.zeros((ctl.shape[0], spin.FLOATS))
    woken = spin.split(ctl, floats, task, a.size, ctl.shape[0] + 1, out, a, b, a, 0, 0, 0.0)
    return out, woken


def test_a_worker_that_does_not_start_has_its_range_taken_back():
    ctl = np.zeros((2, spin.ROW), np.int64)
    ctl[:, spin.STATE] = spin.WAKING  # woken, but no thread will ever come
    a, b = data(1001), data(1001, seed=1)
    out, woken = split_add_by_hand(ctl, a, b)
    np.testing.assert_array_equal(out, a + b)
    assert woken == 0
    assert (ctl[:, spin.STATE] == spin.POSTED).all()  # posted to both ...
    assert (ctl[:, spin.TAKEN] == 0).all()  # ... and both ranges run by the caller
    assert (ctl[:, spin.LO] > 0).all() and ctl[1, spin.HI] == a.size


def test_parked_workers_are_woken_not_waited_for():
    ctl = np.zeros((3, spin.ROW), np.int64)  # every worker PARKED
    a, b = data(999), data(999, seed=1)
    out, woken = split_add_by_hand(ctl, a, b)
    np.testing.assert_array_equal(out, a + b)
    assert woken == 0b111  # the caller must release their three locks
    assert (ctl[:, spin.STATE] == spin.WAKING).all()


STATES = [spin.PARKED, spin.WAKING, spin.SPINNING, spin.CLAIMED, spin.POSTED, spin.PARKING]


def test_park_asks_only_a_polling_or_waking_worker():
    ctl = np.zeros((6, spin.ROW), np.int64)
    ctl[:, spin.STATE] = STATES
    spin.park(ctl)  # the worker itself then moves to PARKED, on its way to its lock
    assert ctl[:, spin.STATE].tolist() == [spin.PARKED, spin.PARKING, spin.PARKING,
                                           spin.CLAIMED, spin.POSTED, spin.PARKING]


def test_wake_parked_moves_only_parked_workers_and_names_them():
    ctl = np.zeros((7, spin.ROW), np.int64)
    ctl[:, spin.STATE] = STATES + [spin.PARKED]
    assert spin.wake_parked(ctl) == 0b1000001  # the locks the caller must release
    assert ctl[:, spin.STATE].tolist() == [spin.WAKING] + STATES[1:] + [spin.WAKING]


def test_workers_run_leaves_the_polling_workers_awake(shared, pool):
    a = data(100_000)
    nb.unary("neg", a)  # starts the worker
    pool.park()
    deadline = time.monotonic() + 10
    while pool.ctl[0, spin.STATE] != spin.PARKED:
        assert time.monotonic() < deadline, pool.ctl[0, :8]
    ran = []
    nb.in_ranges(lambda lo, hi: ran.append((lo, hi)), 10, 2)  # a BLAS split, say
    assert sorted(ran) == [(0, 5), (5, 10)]
    assert pool.ctl[0, spin.STATE] != spin.PARKED  # woken for the ops that follow


def names_of_threads_running(n, k):
    """{range: name of the thread that ran it} for ``in_ranges`` of ``k`` ranges over [0, n)."""
    names = {}
    nb.in_ranges(lambda lo, hi: names.__setitem__((lo, hi), threading.current_thread().name),
                 n, k)
    return names


def test_a_split_product_runs_on_the_polling_worker_and_leaves_it_polling(shared, pool):
    """The parts of a product or a convolution (``in_ranges``) go to the polling
    workers as Python jobs, and each worker polls again the moment its part is
    done: the batch_norm after a convolution finds it ``SPINNING``, not waking."""
    nb.unary("neg", data(100_000))  # starts the worker
    polling = 0
    for _ in range(20):
        names = names_of_threads_running(10, 2)
        state = pool.ctl[0, spin.STATE]  # read at once, well within the polling budget
        assert names == {(0, 5): threading.current_thread().name, (5, 10): "tensor-spin-0"}
        polling += state == spin.SPINNING
    # A lock-woken thread's worker was parked for the product and still WAKING here.
    assert polling >= 10, polling


def test_ranges_beyond_the_polling_workers_run_on_the_caller(pool):
    pool.park()  # and a parked worker is claimed too: its lock is released
    names = names_of_threads_running(10, 3)
    caller = threading.current_thread().name
    assert names == {(0, 3): caller, (3, 6): "tensor-spin-0", (6, 10): caller}


def test_an_error_in_a_polling_workers_job_reaches_the_caller(pool):
    def job(lo, hi):
        if lo == 5:
            raise ValueError("the worker's range")

    with pytest.raises(ValueError, match="the worker's range"):
        nb.in_ranges(job, 10, 2)
    # The worker lives on, and serves the next product, once it has taken the park
    # request that ended the last one (on a busy machine that can take a moment, and
    # a product meanwhile runs on the caller's thread alone).
    deadline = time.monotonic() + 10
    while pool.ctl[0, spin.STATE] not in (spin.SPINNING, spin.PARKED):
        assert time.monotonic() < deadline, pool.ctl[0, :8]
    assert names_of_threads_running(10, 2)[(5, 10)] == "tensor-spin-0"


def test_an_interrupted_hand_off_leaves_no_worker_claimed(pool, monkeypatch):
    """A KeyboardInterrupt between claiming a worker and posting its job (Ctrl-C in a
    notebook) must not leave the worker polling for a job that never comes: it
    gets one that does nothing, and is free for the next product."""
    real_post, calls = spin.post, []

    def interrupted_post(ctl, w):
        calls.append(w)
        if len(calls) == 1:
            raise KeyboardInterrupt
        real_post(ctl, w)

    monkeypatch.setattr(spin, "post", interrupted_post)
    with pytest.raises(KeyboardInterrupt):
        nb.in_ranges(lambda lo, hi: None, 10, 2)
    monkeypatch.setattr(spin, "post", real_post)
    deadline = time.monotonic() + 10
    while pool.ctl[0, spin.STATE] not in (spin.SPINNING, spin.PARKED):
        assert time.monotonic() < deadline, pool.ctl[0, :8]
    assert names_of_threads_running(10, 2)[(5, 10)] == "tensor-spin-0"


def test_a_parked_worker_is_woken_by_the_next_op(shared, pool, monkeypatch):
    """The op releases the parked worker's lock. (Not its state afterwards: on a busy
    machine the worker can run through its idle polls and park again before the
    test thread looks.)"""
    a = data(100_000)
    nb.unary("neg", a)
    pool.park()
    deadline = time.monotonic() + 10
    while pool.ctl[0, spin.STATE] != spin.PARKED:  # it sees the request, then sleeps
        assert time.monotonic() < deadline, pool.ctl[0, :8]
    woken = []
    real_wake = pool.wake
    monkeypatch.setattr(pool, "wake", lambda mask: (woken.append(mask), real_wake(mask)))
    np.testing.assert_array_equal(nb.unary("neg", a), -a)
    assert [mask & 1 for mask in woken] == [1]  # woken once, for the ops to come


def test_several_python_threads_share_ops_at_once(shared):
    errors = []

    def caller(seed):
        try:
            a, b = data(50_000, seed=seed), data(50_000, seed=seed + 100)
            for _ in range(50):
                np.testing.assert_array_equal(nb.binary("add", a, b), a + b)
                np.testing.assert_array_equal(nb.reduce("amax", a, (), False), a.max())
        except BaseException as e:  # reported below, in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=caller, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def run_python(code: str, **env) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, **env), timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_TENSOR_SPIN_0_means_no_spinning_workers():
    """Without them every op runs on its caller's thread: tensor starts no thread."""
    code = ("import numpy as np, numba, threading\n"
            "from tensor.backend.fast import backend as nb\n"
            "from tensor.backend.fast.threads import SPINNERS\n"
            "a = np.arange(3_000_000, dtype=np.float32)\n"
            "assert (nb.binary('add', a, a) == a + a).all()\n"
            "assert np.allclose(nb.reduce('sum', a.reshape(3000, 1000), (1,), False), "
            "a.reshape(3000, 1000).sum(1, dtype=np.float64), rtol=1e-6)\n"
            "names = [t.name for t in threading.enumerate()]\n"
            "print(SPINNERS.ctl.shape[0], sum(n.startswith('tensor-spin') for n in names), "
            "sum(n.startswith('tensor-') for n in names) == 0)")
    assert run_python(code, TENSOR_SPIN="0") == "0 0 True"


def test_a_forked_child_starts_without_the_parents_workers():
    code = ("import os, numpy as np\n"
            "from tensor.backend.fast import backend as nb\n"
            "from tensor.backend.fast.threads import SPINNERS\n"
            "a = np.arange(300_000, dtype=np.float32)\n"
            "for _ in range(50): nb.binary('add', a, a)\n"  # the parent's worker polls
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    fresh = not SPINNERS._locks and not SPINNERS.ctl.any()  # no threads, all PARKED\n"
            "    ok = all((nb.binary('add', a, a) == a + a).all() for _ in range(50))\n"
            "    os._exit(0 if fresh and ok else 1)\n"
            "_, status = os.waitpid(pid, 0)\n"
            "print(os.waitstatus_to_exitcode(status))")
    assert run_python(code) == "0"
