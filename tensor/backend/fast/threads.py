"""The fast layer's one way to run work on several threads: the spinning workers.

This is the Python side of ``spin.py``: the workers' threads, their control
block, waking the parked ones, and the two calls every fast path uses:
``in_ranges`` for Python work (the parts of a matrix product or a
convolution) and ``spread`` for a compiled task (``tasks.py``).

A worker parks itself after a while without a task and sleeps on its
lock. The next op that could use it finds it parked: the op runs on the
caller's thread alone (``spin._split`` moves the worker to WAKING and the
caller releases its lock afterwards, in ``wake``), so that the ops after it
find the worker polling. Waking is a lock release, but a core that has gone
idle can take long to get the thread running: waiting for it would cost
more than most ops.

The same threads run the parts of a matrix product or a convolution
(``in_ranges``, through ``start_jobs`` and ``finish_jobs``) as Python jobs:
the worker's loop returns to Python, runs its part, and polls again at once.
So the batch_norm and ReLU after a convolution find it polling. With a
thread of its own for those parts, the polling worker had to be parked
while they ran (it would take their core) and woken at the end, and 529 of
ResNet-50's 530 batch_norms found it still waking up: they ran on one
thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import numba
import numpy as np

from . import settings, spin


class Spinners:
    """``workers`` spinning workers, started on first use. By default
    ``numba.get_num_threads() - 1``, and none when the environment sets
    ``TENSOR_SPIN=0``: every op then runs on its caller's thread."""

    def __init__(self, workers: int | None = None) -> None:
        self._start = threading.Lock()
        self._locks: list[threading.Lock] = []
        if workers is None:
            workers = numba.get_num_threads() - 1
            if not settings.SPIN:
                workers = 0
        # At most 63: ``spin._split`` reports the workers it woke as bits of an int64.
        workers = min(workers, 63)
        self.workers = workers
        self.ctl = np.zeros((workers, spin.ROW), np.int64)  # every worker PARKED
        self.floats = np.zeros((workers, spin.FLOATS), np.float64)
        self._jobs: list[tuple | None] = [None] * workers  # (job, lo, hi) for each worker
        self._errors: list[BaseException | None] = [None] * workers

    def _started(self) -> list[threading.Lock]:
        if not self._locks:
            with self._start:
                if not self._locks:
                    # Load the worker's loop here, once: a worker that compiles it (or
                    # reads it from the cache) itself needs the GIL for the whole
                    # time, against a caller that holds it between kernels, and took
                    # seconds. With this worker's state PARKED it returns at once.
                    spin.spin(np.zeros((1, spin.ROW), np.int64),
                              np.zeros((1, spin.FLOATS)), 0, False)
                    locks = []
                    for w in range(self.ctl.shape[0]):
                        go = threading.Lock()
                        go.acquire()
                        threading.Thread(target=self._loop, args=(w, go), daemon=True,
                                         name=f"tensor-spin-{w}").start()
                        locks.append(go)
                    self._locks = locks
        return self._locks

    def _loop(self, w: int, go: threading.Lock) -> None:
        while True:
            go.acquire()  # parked
            after_job = False
            while spin.spin(self.ctl, self.floats, w, after_job) == spin.PYTHON:
                job, lo, hi = self._jobs[w]
                self._jobs[w] = None
                try:
                    job(lo, hi)
                except BaseException as e:  # handed to the caller, which re-raises it
                    self._errors[w] = e
                after_job = True  # spin tells the caller, and polls again at once

    def start_jobs(self, job: Callable[[int, int], None],
                   ranges: list[tuple[int, int]]) -> tuple[list[int], list[tuple[int, int]]]:
        """Hand ``job(lo, hi)`` for each range to a worker of its own, as a Python job,
        and park the workers left over (they would take a core the job needs).
        Returns the workers given a range, for ``finish_jobs``, and the ranges no
        worker could be claimed for (there are fewer workers, or another thread's
        op holds them)."""
        locks = self._started()
        claimed, parked = spin.claim(self.ctl, len(ranges))
        posted: list[int] = []
        try:
            for w in range(self.workers):
                if claimed >> w & 1:
                    self._jobs[w] = (job, *ranges[len(posted)])
                    spin.post(self.ctl, w)
                    posted.append(w)
                    if parked >> w & 1:
                        locks[w].release()
        finally:
            # Interrupted (a KeyboardInterrupt between two lines): a worker left
            # CLAIMED would poll for its job forever. Give it one that does nothing.
            for w in range(self.workers):
                if claimed >> w & 1 and w not in posted:
                    self._jobs[w] = (_nothing, 0, 0)
                    spin.post(self.ctl, w)
                    if parked >> w & 1:
                        locks[w].release()
        self.park()
        return posted, ranges[len(posted):]

    def finish_jobs(self, posted: list[int]) -> list[BaseException | None]:
        """Wait for the workers ``start_jobs`` gave a range; the exception each raised,
        or None. Then wake the workers it parked: the next ops will want them."""
        errors = []
        for w in posted:
            spin.wait_for_job(self.ctl, w)
            errors.append(self._errors[w])
            self._errors[w] = None
        self.wake_parked()
        return errors

    def wake(self, mask: int) -> None:
        """Release the lock of every worker in ``mask``, which ``spin`` moved to WAKING."""
        for w, go in enumerate(self._started()):
            if mask >> w & 1:
                go.release()

    def wake_parked(self) -> None:
        """Wake every parked worker, if the workers have started (a program whose ops
        are all small never starts them, and ``TENSOR_SPIN=0`` has none)."""
        if self._locks:
            woken = spin.wake_parked(self.ctl)
            if woken:
                self.wake(woken)

    def park(self) -> None:
        """Send the polling workers to sleep: the next thing needs their cores."""
        spin.park(self.ctl)


def _nothing(lo: int, hi: int) -> None:
    """The job of a worker claimed by a call that was interrupted."""


SPINNERS = Spinners()
os.register_at_fork(after_in_child=SPINNERS.__init__)  # a child has none of the threads


def thread_count(n: int, cost: float = 1.0) -> int:
    """How many threads ``n`` elements of ``cost`` copies each are worth: one per
    ``PARALLEL_MIN`` copies, up to numba's thread count (the compiler of
    chapter 8 asks the same for its fused kernels)."""
    copies = int(n * cost)
    if copies < settings.SPLIT:
        return 1  # (without asking numba: get_num_threads is a call into numba's runtime)
    return max(1, min(numba.get_num_threads(), copies // settings.PARALLEL_MIN))


def in_parallel(run: Callable[[int, int], None], n: int, cost: float = 1.0) -> None:
    """Call ``run(lo, hi)`` on ranges covering [0, n), on ``thread_count(n, cost)`` threads.

    The kernels release the GIL, so the workers run them in parallel."""
    in_ranges(run, n, thread_count(n, cost))


def in_ranges(run: Callable[[int, int], None], n: int, k: int) -> None:
    """Call ``run(lo, hi)`` on ``k`` ranges covering [0, n): the first on this thread, each
    other one on a worker of its own, and any that no worker could take (fewer
    workers, or another thread's op holds them, or a range that splits again)
    on this thread after its own. An exception in any range reaches the caller
    once every range has finished."""
    k = min(k, n)
    if k <= 1:
        run(0, n)
        return
    bounds = [n * i // k for i in range(k + 1)]
    ranges = list(zip(bounds, bounds[1:]))
    posted, left = SPINNERS.start_jobs(run, ranges[1:]) if SPINNERS.workers \
        else ([], ranges[1:])
    errors: list[BaseException | None] = []
    try:
        for lo, hi in [ranges[0], *left]:
            try:
                run(lo, hi)
            except BaseException as error:  # raised below, once every range is done
                errors.append(error)
    finally:
        errors += SPINNERS.finish_jobs(posted) if SPINNERS.workers else []
    for error in errors:
        if error is not None:
            raise error


def spread(task: int, units: int, copies: float, out: np.ndarray, a: np.ndarray,
           b: np.ndarray | None = None, c: np.ndarray | None = None,
           k0: int = 0, k1: int = 0, f0: float = 0.0) -> None:
    """Task kernel ``task`` over ``units`` (elements, rows or chunks) of ``copies``
    element-copies in all, on this thread and the polling workers: one part per
    ``SPIN_MIN`` copies (``spin.split`` lays out the arguments)."""
    b = a if b is None else b
    c = a if c is None else c
    if not SPINNERS.workers:  # TENSOR_SPIN=0: all on this thread
        spin.run(task, 0, units, out, a, b, c, k0, k1, f0)
        return
    parts = min(SPINNERS.workers + 1, int(copies) // settings.SPIN_MIN, units)
    woken = spin.split(SPINNERS.ctl, SPINNERS.floats, task, units, parts, out, a, b, c, k0, k1,
                       f0)
    if woken:
        SPINNERS.wake(woken)
