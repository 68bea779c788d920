"""The Python side of the spinning workers (``_kernels/spin.py``): their threads,
their control block, and waking the parked ones.

A worker parks itself after a while without a task and sleeps on its
lock. The next op that could use it finds it parked: the op runs on the
caller's thread alone (``spin._split`` moves the worker to WAKING and the
caller releases its lock afterwards, in ``wake``), so that the ops after it
find the worker polling. Waking is a lock release, but a core that has gone
idle can take long to get the thread running: waiting for it would cost
more than most ops.

The same threads run the parts of a matrix product or a convolution
(``numba_backend.Workers.run``, through ``start_jobs`` and ``finish_jobs``
here) as Python jobs: the worker's loop returns to Python, runs its part,
and polls again at once.
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

from ._kernels import spin


class Spinners:
    """``workers`` spinning workers, started on first use. By default
    ``numba.get_num_threads() - 1``, and none when the environment sets
    ``TENSOR_SPIN=0``: the ops then split their ranges over
    ``numba_backend.Workers`` from ``PARALLEL_MIN``, as before."""

    def __init__(self, workers: int | None = None) -> None:
        self._start = threading.Lock()
        self._locks: list[threading.Lock] = []
        if workers is None:
            workers = numba.get_num_threads() - 1
            if os.environ.get("TENSOR_SPIN", "1") == "0":
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
