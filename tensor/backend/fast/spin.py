"""Worker threads that wait for work by spinning in compiled code.

Waking a sleeping thread goes through the kernel, and takes longer still
when the other core has gone to sleep. That costs about as much as a
1e5-element add on one thread, so threads woken by a lock cannot split it
with any gain. torch can: its
OpenMP threads, after a parallel loop, keep polling for the next one for a
while before they sleep.

This module does the same with nothing but numba. A worker thread calls
``spin``, which never touches Python: it polls the ``STATE`` word of its own
row of a shared control block. A caller claims a polling worker by swapping
its state atomically, writes the task into the row (the address of a
``cfunc`` kernel, its arguments and a range) and marks it ``POSTED``; the
worker notices almost at once, calls the kernel through its address, and
writes the task's sequence number into ``DONE``. After a while with no task
(``FAST_POLLS`` and ``SLOW_POLLS``) the worker parks itself and returns to
Python, where it
sleeps on a lock until a caller wakes it. A caller never waits for a worker
to wake: if the worker has not started its range by the time the caller has
finished its own, the caller takes the range back (``_split``).

The states of a worker, in its row's ``STATE`` word:

- ``PARKED``: asleep on its lock, or on its way there. Only a caller moves
  it out, to ``WAKING`` (or to ``CLAIMED``, for a Python job), and then
  releases the lock.
- ``WAKING``: woken, not yet polling.
- ``SPINNING``: polling. A caller may claim it; after the polling budget
  it parks.
- ``PARKING``: asked to park (``park``, from ``SPINNING`` or ``WAKING``,
  before other threads need the core); the worker moves itself to
  ``PARKED``. ``wake_parked`` moves every ``PARKED`` worker to ``WAKING``.
- ``CLAIMED``: a caller is writing a task into the row.
- ``POSTED``: the task is ready; the worker runs it and returns to
  ``SPINNING``.
- ``PYTHON``: a caller has left a Python job for the worker (a part of a
  matrix product or a convolution, ``threads.in_ranges``): ``spin``
  returns to Python to run it, and the worker goes back to ``SPINNING``
  when it is done, which its caller is waiting for. No caller and no
  ``park`` touches a worker in this state.

Every transition a caller makes is a compare-and-swap, so two Python threads
never claim one worker, and a worker that parks itself at the instant a
caller claims it sees the claim.

The atomic loads, stores and swaps, the CPU's ``pause`` hint, the
``sched_yield`` call and the call through a kernel's address are each a few
lines of LLVM IR (``intrinsic``): numba has no atomics of its own, and a
plain load in a polling loop may be hoisted out of it by the optimiser.
"""

from __future__ import annotations

import platform
import sys

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

# ---- a worker's row of the control block ----------------------------------------
PARKED, WAKING, SPINNING, CLAIMED, POSTED, PARKING, PYTHON = 0, 1, 2, 3, 4, 5, 6
# SEQ numbers the tasks posted to the worker; DONE is the last one it ran;
# TAKEN is -SEQ while the task waits, SEQ once the worker has taken it, 0 if
# the caller took it back.
STATE, DONE, SEQ, FN, LO, HI, TAKEN = 0, 1, 2, 3, 4, 5, 6
ARGS = 8  # integer arguments (addresses, sizes) from here
N_ARGS = 8
ROW = 32  # int64 words a row: 256 bytes, so two workers never share a cache line
FLOATS = 4  # float arguments, in a float64 block of the same rows

# The signature of every task kernel: its integer and float arguments, and
# the range [lo, hi) of the output it computes.
TASK = types.void(types.CPointer(types.int64), types.CPointer(types.float64),
                  types.int64, types.int64)

# How long an idle worker polls: FAST_POLLS, then SLOW_POLLS (settings.py says why).
from .settings import FAST_POLLS, SLOW_POLLS  # noqa: E402


# ---- the few instructions numba does not offer ----------------------------------
def _word(context, builder, array_type, array, index):
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(data, [index])


@intrinsic
def _load(typingctx, words, index):
    """``words[index]``, read atomically: the optimiser may not hoist it out of a loop."""
    def codegen(context, builder, sig, args):
        return builder.load_atomic(_word(context, builder, sig.args[0], *args), "acquire", 8)
    return types.int64(words, index), codegen


@intrinsic
def _store(typingctx, words, index, value):
    """``words[index] = value``, visible to the other threads after every earlier write."""
    def codegen(context, builder, sig, args):
        ptr = _word(context, builder, sig.args[0], args[0], args[1])
        builder.store_atomic(args[2], ptr, "release", 8)
        return context.get_dummy_value()
    return types.void(words, index, value), codegen


@intrinsic
def _swap(typingctx, words, index, expected, new):
    """Set ``words[index]`` to ``new`` if it holds ``expected``, atomically; whether it did."""
    def codegen(context, builder, sig, args):
        ptr = _word(context, builder, sig.args[0], args[0], args[1])
        result = builder.cmpxchg(ptr, args[2], args[3], "acq_rel", "acquire")
        return builder.extract_value(result, 1)
    return types.boolean(words, index, expected, new), codegen


def _external(name, return_type):
    """An intrinsic calling the function ``name`` (no arguments); a no-op for None."""
    @intrinsic
    def call(typingctx):
        def codegen(context, builder, sig, args):
            if name is not None:
                fn = cgutils.get_or_insert_function(
                    builder.module, ir.FunctionType(return_type, []), name)
                builder.call(fn, [])
            return context.get_dummy_value()
        return types.void(), codegen
    return call


# "I am polling": spares the core's resources on x86 (the loop works without it).
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
_pause = _external("llvm.x86.sse2.pause" if _X86 else None, ir.VoidType())
# Lets another thread run on this core (POSIX; Windows has no sched_yield).
_yield = _external(None if sys.platform == "win32" else "sched_yield", ir.IntType(32))


@intrinsic
def _call(typingctx, fn, ints, floats, lo, hi):
    """Call the ``TASK`` kernel at address ``fn`` on these arguments."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        task = ir.FunctionType(ir.VoidType(), [i64.as_pointer(), ir.DoubleType().as_pointer(),
                                               i64, i64])
        kernel = builder.inttoptr(args[0], task.as_pointer())
        builder.call(kernel, [builder.inttoptr(args[1], i64.as_pointer()),
                              builder.inttoptr(args[2], ir.DoubleType().as_pointer()),
                              args[3], args[4]])
        return context.get_dummy_value()
    return types.void(fn, ints, floats, lo, hi), codegen


@intrinsic
def address_as_pointer(typingctx, address):
    """An integer address as a ``void*``, for ``numba.carray`` inside a task kernel."""
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], ir.IntType(8).as_pointer())
    return types.voidptr(address), codegen


def array_at(address, shape, dtype):
    """The C-contiguous array of ``shape`` (an int or a tuple) and ``dtype`` at
    ``address``: how a task kernel finds its arrays (compiled only: the overload
    below)."""


@overload(array_at)
def _array_at(address, shape, dtype):
    return lambda address, shape, dtype: carray(address_as_pointer(address), shape, dtype)


# ---- the worker's side ---------------------------------------------------------------
@njit(cache=True, nogil=True)
def spin(ctl, floats, w, resume):
    """Worker ``w``'s loop: run posted tasks until it parks or is given a Python job.
    Returns ``PARKED`` (sleep on the lock) or ``PYTHON`` (run the job).

    ``resume``: the worker is back from a Python job, whose caller waits for
    its state to leave ``PYTHON`` (``wait_for_job``). It leaves it here, where
    the thread no longer holds the GIL, so that the caller can take the GIL
    the moment it sees the change."""
    row = ctl[w]
    if resume:
        _store(row, STATE, SPINNING)
    idle = 0
    while True:
        state = _load(row, STATE)
        if state == POSTED:
            seq = row[SEQ]
            if _swap(row, TAKEN, -seq, seq):  # else the caller took the range back
                _call(row[FN], row[ARGS:].ctypes.data, floats[w].ctypes.data, row[LO], row[HI])
                _store(row, DONE, seq)
            _store(row, STATE, SPINNING)
            idle = 0
        elif state == WAKING:
            _swap(row, STATE, WAKING, SPINNING)
            idle = 0
        elif state == PARKING:  # a caller asks it to park
            if _swap(row, STATE, PARKING, PARKED):
                return PARKED
        elif state == PARKED:  # (only when called without being woken)
            return PARKED
        elif state == PYTHON:
            return PYTHON
        elif state == CLAIMED:
            _pause()
        else:  # SPINNING, with nothing to do
            idle += 1
            if idle < FAST_POLLS:
                _pause()
            elif idle < FAST_POLLS + SLOW_POLLS:
                _yield()
                for _ in range(16):
                    _pause()
            elif _swap(row, STATE, SPINNING, PARKED):
                return PARKED


# ---- the caller's side ---------------------------------------------------------------
@njit(cache=True, nogil=True)
def park(ctl) -> None:
    """Ask every polling or waking worker to park, so that its core is free (BLAS,
    OpenMP). Only the worker itself moves to ``PARKED``, on its way to its lock:
    so a caller that finds it ``PARKED`` and releases the lock releases it once."""
    for w in range(ctl.shape[0]):
        if not _swap(ctl[w], STATE, SPINNING, PARKING):
            _swap(ctl[w], STATE, WAKING, PARKING)


@njit(cache=True, nogil=True)
def wake_parked(ctl) -> int:
    """Move every parked worker to ``WAKING``; the mask of those moved, whose locks
    the caller must release (after ``Workers.run``: the ops that follow a
    convolution find the workers polling again)."""
    woken = 0
    for w in range(ctl.shape[0]):
        if _swap(ctl[w], STATE, PARKED, WAKING):
            woken |= 1 << w
    return woken


@njit(cache=True, nogil=True)
def claim(ctl, wanted):
    """Claim up to ``wanted`` workers for Python jobs, each moved to ``CLAIMED`` from
    ``SPINNING``, ``WAKING`` or ``PARKED``. Returns two masks: the workers claimed,
    and those of them that were parked, whose locks the caller must release once
    it has posted their jobs (``post``)."""
    claimed, parked = 0, 0
    count = 0
    for w in range(ctl.shape[0]):
        if count >= wanted:
            break
        row = ctl[w]
        if _swap(row, STATE, SPINNING, CLAIMED) or _swap(row, STATE, WAKING, CLAIMED):
            claimed |= 1 << w
            count += 1
        elif _swap(row, STATE, PARKED, CLAIMED):
            claimed |= 1 << w
            parked |= 1 << w
            count += 1
    return claimed, parked


@njit(cache=True, nogil=True)
def post(ctl, w):
    """Mark worker ``w``'s Python job as ready (state ``PYTHON``), once it is written."""
    _store(ctl[w], STATE, PYTHON)


@njit(cache=True, nogil=True)
def wait_for_job(ctl, w):
    """Poll until worker ``w`` is back from its Python job. The worker's state
    changes only once it has let go of the GIL (``spin``'s ``resume``), so the
    caller takes the GIL at once. Sleeping on a lock the worker released, and
    then on the GIL it still held, is two wake-ups where polling is none: it
    measured clearly slower from the end of the last part to the caller's
    return (over the jobs of a ResNet-50 forward)."""
    row = ctl[w]
    polls = 0
    while _load(row, STATE) == PYTHON:
        polls += 1
        if polls < FAST_POLLS:
            _pause()
        else:
            _yield()


@njit(cache=True, nogil=True)
def _split(ctl, floats, fn, ints, flts, n, parts):
    """Run the ``TASK`` kernel ``fn`` over [0, n) in up to ``parts`` equal ranges: the
    first on this thread, the others posted to workers that are polling or waking.
    Returns the mask of the parked workers it moved to ``WAKING``, whose locks
    the caller must release: they will be polling for the next call.

    A worker that has not started its range by the time this thread has done
    its own is too late: this thread takes the range back (the ``TAKEN`` word
    decides who runs it) and runs it itself. So a call never waits for a
    worker to wake, only for one that is already running a range."""
    workers = ctl.shape[0]
    posted = np.zeros(workers, np.bool_)
    count, woken = 0, 0
    for w in range(workers):
        if count + 1 >= parts:
            break
        row = ctl[w]
        if _swap(row, STATE, SPINNING, CLAIMED) or _swap(row, STATE, WAKING, CLAIMED):
            posted[w] = True
            count += 1
        elif _swap(row, STATE, PARKED, WAKING):
            woken |= 1 << w
    # What this call posted, kept here: once a worker is done with our task
    # another caller may post to it, and its row then describes that task.
    seqs = np.zeros(workers, np.int64)
    bounds = np.zeros((workers, 2), np.int64)
    part = 1
    for w in range(workers):
        if posted[w]:
            row = ctl[w]
            row[ARGS:ARGS + N_ARGS] = ints
            floats[w, :FLOATS] = flts
            row[FN] = fn
            bounds[w, 0] = row[LO] = n * part // (count + 1)
            bounds[w, 1] = row[HI] = n * (part + 1) // (count + 1)
            seqs[w] = row[SEQ] = row[SEQ] + 1
            row[TAKEN] = -seqs[w]  # "not taken yet", for this task only
            _store(row, STATE, POSTED)
            part += 1
    _call(fn, ints.ctypes.data, flts.ctypes.data, 0, n // (count + 1))
    for w in range(workers):
        if posted[w]:
            row = ctl[w]
            if _swap(row, TAKEN, -seqs[w], 0):  # not started: ours
                _call(fn, ints.ctypes.data, flts.ctypes.data, bounds[w, 0], bounds[w, 1])
                continue
            polls = 0
            while _load(row, DONE) < seqs[w]:  # DONE only grows
                polls += 1
                if polls < FAST_POLLS:
                    _pause()
                else:
                    _yield()
    return woken


@njit(inline="always")
def _arguments(out, a, b, c, k0, k1, f0):
    """A task's integer and float arguments: the addresses of four arrays (``out``
    first; a task that needs fewer is passed one of them again), two integers
    and a float, in that order."""
    ints = np.empty(N_ARGS, np.int64)
    ints[0], ints[1] = out.ctypes.data, a.ctypes.data
    ints[2], ints[3] = b.ctypes.data, c.ctypes.data
    ints[4], ints[5] = k0, k1
    flts = np.empty(FLOATS)
    flts[0] = f0
    return ints, flts


@njit(cache=True, nogil=True)
def split(ctl, floats, fn, n, parts, out, a, b, c, k0, k1, f0):
    """Run task kernel ``fn`` over [0, n) in up to ``parts`` ranges (``_split``), on
    the arguments ``_arguments`` lays out."""
    ints, flts = _arguments(out, a, b, c, k0, k1, f0)
    return _split(ctl, floats, fn, ints, flts, n, parts)


@njit(cache=True, nogil=True)
def run(fn, lo, hi, out, a, b, c, k0, k1, f0):
    """Run task kernel ``fn`` over [lo, hi) on this thread: how a task runs when no
    worker polls (``TENSOR_SPIN=0``), on threads woken by a lock."""
    ints, flts = _arguments(out, a, b, c, k0, k1, f0)
    _call(fn, ints.ctypes.data, flts.ctypes.data, lo, hi)
