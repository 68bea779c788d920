"""The Python side of the spinning workers (``_kernels/spin.py``): their threads,
their control block, and waking the parked ones.

A worker parks itself after about 1 ms without a task and sleeps on its
lock. The next op that could use it finds it parked: the op runs on the
caller's thread alone (``spin._split`` moves the worker to WAKING and the
caller releases its lock afterwards, in ``wake``), so that the ops after it
find the worker polling. Waking is a lock release, but a core that has gone
idle can take hundreds of microseconds to get the thread running: waiting
for it would cost more than most ops. ``numba_backend.Workers.run`` parks the
workers while its own threads need the cores (a matrix product, a
convolution) and wakes them when it is done (``wake_parked``), so that the
batch_norm and ReLU after a convolution find them polling.
"""

from __future__ import annotations

import os
import threading

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

    def _started(self) -> list[threading.Lock]:
        if not self._locks:
            with self._start:
                if not self._locks:
                    # Load the worker's loop here, once: a worker that compiles it (or
                    # reads it from the cache) itself needs the GIL for the whole
                    # time, against a caller that holds it between kernels, and took
                    # seconds. With this worker's state PARKED it returns at once.
                    spin.spin(np.zeros((1, spin.ROW), np.int64),
                              np.zeros((1, spin.FLOATS)), 0)
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
            spin.spin(self.ctl, self.floats, w)

    def wake(self, mask: int) -> None:
        """Release the lock of every worker in ``mask``, which ``spin`` moved to WAKING."""
        for w, go in enumerate(self._started()):
            if mask >> w & 1:
                go.release()

    def wake_parked(self) -> None:
        """Wake every parked worker, if the workers have started (a program that only
        multiplies matrices never starts them)."""
        if self._locks:
            woken = spin.wake_parked(self.ctl)
            if woken:
                self.wake(woken)

    def park(self) -> None:
        """Send the polling workers to sleep: the next thing needs their cores."""
        spin.park(self.ctl)


SPINNERS = Spinners()
os.register_at_fork(after_in_child=SPINNERS.__init__)  # a child has none of the threads
