"""Row kernels: reductions over the last dim, fused with the elementwise work
around them.

Softmax written from primitives is two reductions and three elementwise
operations:

    m = x.amax(-1, keepdim=True)
    e = (x - m).exp()
    out = e / e.sum(-1, keepdim=True)

Each eager line reads and writes a whole array. A *row kernel* runs all of
them row by row instead: one loop over the rows, and inside it one loop over
the row's elements for each reduction (its *prologue*, the elementwise work
that feeds it, computed on the fly) and one more for the result (the
*epilogue*). A row is a few kilobytes, so everything after the first read of
``x`` comes from the cache:

    for r in range(out.shape[0]):
        amax = rd.row_amax(x[r])
        for j in range(n):
            sub = x[r, j] - amax
            exp = scalar.exp(sub)
            exp_row[j] = exp
        sum_1 = rd.row_sum(exp_row)
        for j in range(n):
            out[r, j] = exp_row[j] / sum_1

Every node of the group has one of two shapes: the *full* shape the
reductions read, ``(..., n)``, or the *row* shape they produce, ``(..., 1)``.
Full-shape nodes are computed element by element inside a loop over ``j``;
row-shape nodes (the reductions and whatever is computed from them alone)
are one number per row. A full-shape node that a reduction reads is stored
in a scratch row (``exp_row``) so that a later loop reads it back instead of
computing it again. ``fusion.find_groups`` makes the groups; this module
writes and runs their kernels.

In the generated source each loop over ``j`` is a function of its own
(``exp_loop(exp_row, x[r], amax)``), called once per row: numba compiles it
apart from the loop over rows, and LLVM then keeps exp's constants in
registers (written inline, the softmax kernel measured slower).
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

import numba
import numpy as np

from tensor.backend.fast import settings, threads
from tensor.backend.fast.spin import TASK, array_at

from ..node import Node
from .elementwise import Pointwise, Reduction
from .kernel import (
    FusedKernel,
    _constant,
    _from_numpy_like,
    _numpy_spelling,
    _to_numpy,
    expression,
    start_kernel,
)

FULL, ROW, COL = "full", "row", "col"  # how a row kernel reads an input
_RESERVED = ("np", "scalar", "rd", "out", "n", "r", "j")
# How each reduction finishes, from the row it reads (a slice or a scratch row).
_REDUCE = {"sum": "rd.row_sum({0})", "mean": "rd.row_sum({0}) / {1}(n)",
           "amax": "rd.row_amax({0})"}


def row_shape(full: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a reduction over the last dim of ``full``, the dim kept."""
    return (*full[:-1], 1)


def layout(shape: tuple[int, ...], full: tuple[int, ...]) -> str:
    """How a kernel reads an input of ``shape`` broadcast to ``full``: a whole
    (rows, n) array, one number per row, or one row shared by all rows."""
    padded = (1,) * (len(full) - len(shape)) + tuple(shape)
    if padded == tuple(full):
        return FULL
    if padded[-1] == 1:
        return ROW
    if all(d == 1 for d in padded[:-1]):
        return COL
    return FULL  # any other broadcast: materialised at full shape


# --8<-- [start:row_kernel_source]
def row_kernel_source(
    members: list[Node],
    forms: dict[Node, Pointwise | Reduction],
    dtypes: dict[Node, np.dtype],
    shapes: dict[Node, tuple[int, ...]],
    full: tuple[int, ...],
) -> tuple[str, str, list[Node], list[str]]:
    """The generated source of a row kernel.

    Like ``kernel.kernel_source``, plus ``shapes`` (every node's shape) and
    ``full``, the shape the group's reductions read. Returns the function's
    name, its source, the nodes it reads from outside and, for each, its
    layout (FULL, ROW or COL).
    """
    names, inputs, function = start_kernel(members, forms, _RESERVED)
    inside = set(members)
    layouts = [layout(shapes[a], full) for a in inputs]
    arrays = {a: names.create_name(a.name, a) for a in inputs}
    how = dict(zip(inputs, layouts))
    local = {m: names.create_name(m.name, m) for m in members}
    elementwise = {m for m in members
                   if isinstance(forms[m], Pointwise) and shapes[m] == tuple(full)}
    stored: dict[Node, str] = {}  # full-shape nodes kept in a scratch row

    def cast(a: Node, text: str, compute: np.dtype) -> str:
        return text if dtypes[a] == compute else f"{_numpy_spelling(compute)}({text})"

    def read_per_row(a: Any, compute: np.dtype) -> str:
        """An operand of a one-number-per-row node, read in the loop over rows."""
        if not isinstance(a, Node):
            return _constant(a, compute)
        return cast(a, local[a] if a in inside else f"{arrays[a]}[r]", compute)

    loops: list[str] = []  # the source of the per-row loop functions

    def element_loop(target: Node, dest: str, dest_arg: str) -> str:
        """A function whose loop over j computes ``target`` (and what it needs)
        into ``dest``, one row long; returns the kernel's line that calls it."""
        needed: list[Node] = []

        def need(m: Node) -> None:
            if m in elementwise and m not in stored and m not in needed:
                for a in forms[m].input_nodes:
                    need(a)
                needed.append(m)

        need(target)
        params: dict[str, str] = {}  # the loop's parameter -> what the kernel passes

        def read(a: Any, compute: np.dtype) -> str:
            if not isinstance(a, Node):
                return _constant(a, compute)
            if a in stored:
                params[stored[a]] = stored[a]
                return cast(a, f"{stored[a]}[j]", compute)
            if a in inside:  # computed in this loop, or one number per row
                if a not in needed:
                    params[local[a]] = local[a]
                return cast(a, local[a], compute)
            name = arrays[a]  # from outside: this row of it, its value, or all of it
            params[name] = {FULL: f"{name}[r]", ROW: f"{name}[r]", COL: name}[how[a]]
            return cast(a, name if how[a] == ROW else f"{name}[j]", compute)

        lines = [f"        {local[m]} = {expression(forms[m], m, dtypes, read)}"
                 for m in needed]
        loop = names.create_name(f"{local[target]}_loop")
        loops.extend([f"def {loop}({', '.join([dest, *params])}):",
                      f"    for j in range({dest}.size):", *lines,
                      f"        {dest}[j] = {local[target]}", "", ""])
        return f"        {loop}({', '.join([dest_arg, *params.values()])})"

    scratch, body = [], []
    for m in members:
        form = forms[m]
        if isinstance(form, Reduction):
            source = form.operands[0]
            if source in inside and source not in stored:
                row = names.create_name(f"{local[source]}_row")
                scratch.append(f"    {row} = np.empty(n, {_numpy_spelling(dtypes[source])})")
                body.append(element_loop(source, row, row))
                stored[source] = row
            row_read = stored[source] if source in stored else f"{arrays[source]}[r]"
            body.append(f"        {local[m]} = " + _REDUCE[form.op].format(
                row_read, _numpy_spelling(dtypes[m])))
        elif m not in elementwise:  # one number per row
            body.append(f"        {local[m]} = {expression(form, m, dtypes, read_per_row)}")
    last = members[-1]
    if last in elementwise:  # (never stored: a reduction of it would come after it)
        body.append(element_loop(last, "out", "out[r]"))
    else:
        body.append(f"        out[r] = {local[last]}")

    header = ["import numpy as np"]
    if any("scalar." in line for line in loops + body):
        header.append("from tensor.backend.kernels import scalar")
    header.append("from tensor.backend.kernels import reduce as rd")
    params = ", ".join(["out", "n", *arrays.values()])
    lines = [
        *header, "", "",
        *loops,
        f"def {function}({params}):",
        *textwrap.wrap(f'"""{", ".join(m.name for m in members)}: row by row, '
                       'no intermediate arrays."""', 88,
                       initial_indent="    ", subsequent_indent="    "),
        *scratch,
        "    for r in range(out.shape[0]):",
        *body,
    ]
    return function, "\n".join(lines) + "\n", inputs, layouts
# --8<-- [end:row_kernel_source]


def _as_rows(a: np.ndarray, how: str, full: tuple[int, ...]) -> np.ndarray:
    """One input as the kernel reads it: (rows, n), (rows,) or (n,), contiguous."""
    rows = math.prod(full[:-1])
    target = {FULL: full, ROW: row_shape(full), COL: full[-1:]}[how]
    if a.shape != target:
        if how == COL:
            a = np.broadcast_to(a, full)[(0,) * (len(full) - 1)]
        else:
            a = np.broadcast_to(a, target)
    if not (a.flags.c_contiguous and a.flags.writeable):
        a = np.array(a, order="C")  # one dtype and one layout for numba: no recompiles
    return a.reshape({FULL: (rows, full[-1]), ROW: (rows,), COL: (full[-1],)}[how])


# --8<-- [start:row_task]
def row_task(kernel: Any, layouts: list[str], dtypes: list[np.dtype]) -> int:
    """``kernel(out, n, *inputs)`` over rows [lo, hi) as a cfunc of tensor's
    ``spin.TASK`` signature, for the polling workers. ``layouts`` and ``dtypes``
    describe the output, then each input (at most three); the arrays'
    addresses arrive in the task's integer arguments, the output's first,
    and ``n`` after them (``threads.spread``'s order).

    Each array is rebuilt at its address for the task's rows only: a
    (rows, n) array from row ``lo``, a per-row array from element ``lo``, a
    shared row whole. Built that way each is C-contiguous, so the kernel is
    compiled for the layouts its single-thread calls use."""
    arrays = len(dtypes)
    # numba reads each of these as a constant: four of each, padded with the last.
    padded = list(range(arrays)) + [arrays - 1] * (4 - arrays)
    r0, r1, r2, r3 = ({FULL: _rows_at, ROW: _values_at, COL: _row_at}[layouts[i]]
                      for i in padded)
    s0, s1, s2, s3 = (np.dtype(dtypes[i]).itemsize for i in padded)
    t0, t1, t2, t3 = (np.dtype(dtypes[i]).type for i in padded)
    if arrays == 2:
        def task(ints, floats, lo, hi):
            n = ints[4]
            kernel(r0(ints[0], lo, hi, n, s0, t0), n, r1(ints[1], lo, hi, n, s1, t1))
    elif arrays == 3:
        def task(ints, floats, lo, hi):
            n = ints[4]
            kernel(r0(ints[0], lo, hi, n, s0, t0), n, r1(ints[1], lo, hi, n, s1, t1),
                   r2(ints[2], lo, hi, n, s2, t2))
    else:
        def task(ints, floats, lo, hi):
            n = ints[4]
            kernel(r0(ints[0], lo, hi, n, s0, t0), n, r1(ints[1], lo, hi, n, s1, t1),
                   r2(ints[2], lo, hi, n, s2, t2), r3(ints[3], lo, hi, n, s3, t3))
    return numba.cfunc(TASK, error_model="numpy")(task).address


# How a task finds each array at its address, for its rows [lo, hi) only.
@numba.njit(inline="always")
def _rows_at(address, lo, hi, n, size, dtype):
    """FULL: rows [lo, hi) of a (rows, n) array."""
    return array_at(address + lo * n * size, (hi - lo, n), dtype)


@numba.njit(inline="always")
def _values_at(address, lo, hi, n, size, dtype):
    """ROW: one value per row."""
    return array_at(address + lo * size, hi - lo, dtype)


@numba.njit(inline="always")
def _row_at(address, lo, hi, n, size, dtype):
    """COL: one row, shared by all rows."""
    return array_at(address, n, dtype)
# --8<-- [end:row_task]


# --8<-- [start:row_kernel]
class RowKernel(FusedKernel):
    """A fused group around reductions over the last dim, run row by row.

    ``full`` is the shape the reductions read, ``layouts`` how each input is
    read (``layout``), ``out_shape`` the result's shape (``full``, or
    ``row_shape(full)`` when the group ends with a per-row value).
    """

    def __init__(self, name: str, source: str, dtype: np.dtype | str, full: tuple[int, ...],
                 layouts: list[str], out_shape: tuple[int, ...],
                 reuse: int | None = None, reads: int | None = None,
                 work: float = 1.0) -> None:
        super().__init__(name, source, dtype, reuse, reads, work)
        self.full = tuple(full)
        self.layouts = list(layouts)
        self.out_shape = tuple(out_shape)

    def __call__(self, *inputs: Any) -> Any:
        arrays = [_to_numpy(t) for t in inputs]
        full, n = self.full, self.full[-1]
        rows = math.prod(full[:-1])
        out = self.take_buffer(arrays, self.out_shape)
        flat_out = out.reshape((rows, n) if self.out_shape == full else (rows,))
        flat_in = [_as_rows(a, how, full) for a, how in zip(arrays[:self.reads], self.layouts)]
        kernel, copies = self.kernel, rows * n * self.work
        if copies < settings.SPIN_MIN:
            kernel(flat_out, n, *flat_in)
        elif len(flat_in) <= 3:
            # Rows shared with tensor's polling workers, as the flat kernels share
            # elements: the task finds each array at its address (``row_task``).
            task = self._row_task(flat_out.dtype, tuple(a.dtype for a in flat_in))
            threads.spread(task, rows, copies, flat_out, *flat_in, k0=n)
        else:  # more inputs than a task takes: rows split over Python threads
            per_row = [how != COL for how in self.layouts]
            threads.in_ranges(
                lambda lo, hi: kernel(flat_out[lo:hi], n, *(
                    a[lo:hi] if sliced else a for a, sliced in zip(flat_in, per_row))),
                rows, threads.thread_count(rows * n, self.work))
        return _from_numpy_like(inputs[0], out)

    def _row_task(self, out_dtype: np.dtype, in_dtypes: tuple[np.dtype, ...]) -> int:
        out_layout = FULL if self.out_shape == self.full else ROW
        key = (out_dtype, in_dtypes, out_layout, *self.layouts)
        if key not in self._tasks:
            self._tasks[key] = row_task(self.kernel, [out_layout, *self.layouts],
                                        [out_dtype, *in_dtypes])
        return self._tasks[key]

    def __repr__(self) -> str:
        return f"<RowKernel {self.__name__}>"

    def __reduce__(self) -> tuple:
        return (RowKernel, (self.__name__, self.source, self.dtype.name, self.full,
                            self.layouts, self.out_shape, self.reuse, self.reads, self.work))
# --8<-- [end:row_kernel]
