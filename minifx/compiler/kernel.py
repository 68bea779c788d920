"""One numba kernel per fused group, written as Python source from the graph.

A group is a run of elementwise nodes (``fusion.py`` finds them). Its kernel
is a plain Python function with one flat loop over the output: every input
arrives already broadcast to the output's shape and flattened, so element
``i`` of each input lines up with element ``i`` of the output. Each node of
the group becomes one line of the loop body, and the intermediates live in
local variables (registers), never in memory:

    for i in range(out.size):
        sigmoid = scalar.sigmoid(x[i])
        mul = sigmoid * y[i]
        out[i] = mul

The per-element functions (``scalar.sigmoid``, a float32 ``exp`` that LLVM
can vectorise, ...) are the ones the tensor library's own numba kernels use,
imported from ``tensor/backend/kernels/scalar.py``: there is one ``exp`` in
the project, not two.
"""

from __future__ import annotations

import inspect
import linecache
import math
import textwrap
from typing import Any

import numpy as np

from tensor.backend.fast import allocator, settings, threads
from tensor.ops import OPS

from .._framework import framework_of
from ..namespace import Namespace
from ..node import Node
from .elementwise import COMPARE, Pointwise

# --8<-- [start:templates]
# How each canonical operation is written, on operands that are already
# names, element reads (``x[i]``) or typed constants.
TEMPLATES = {
    "neg": "-{0}",
    "exp": "scalar.exp({0})",
    "log": "scalar.log({0})",
    "sigmoid": "scalar.sigmoid({0})",
    "tanh": "scalar.tanh({0})",
    "relu": "scalar.relu({0})",
    "abs": "scalar.absolute({0})",
    "sqrt": "scalar.sqrt({0})",
    "rsqrt": "scalar.rsqrt({0})",
    "add": "{0} + {1}",
    "sub": "{0} - {1}",
    "mul": "{0} * {1}",
    "div": "{0} / {1}",
    "pow": "scalar.power({0}, {1})",
    "gt": "{0} > {1}",
    "lt": "{0} < {1}",
    "ge": "{0} >= {1}",
    "le": "{0} <= {1}",
    "eq": "{0} == {1}",
    "ne": "{0} != {1}",
    "where": "{1} if {0} else {2}",
}
# --8<-- [end:templates]

_RESERVED = ("np", "scalar", "out", "i")


def _numpy_spelling(dtype: np.dtype) -> str:
    return "np.bool_" if dtype == np.bool_ else f"np.{dtype.name}"


def _constant(value: float, dtype: np.dtype) -> str:
    """A Python number as a constant of the computation's dtype (``np.float32(1.0)``)."""
    number = float(value)
    if math.isnan(number):
        text = "np.nan"
    elif math.isinf(number):
        text = "np.inf" if number > 0 else "-np.inf"
    else:
        text = repr(number)
    return f"{_numpy_spelling(dtype)}({text})"


def _small_integer(value: Any) -> int | None:
    """``value`` as an int when it is a whole number small enough for ``x ** n``
    to be a few multiplications (exact, and faster than ``pow``)."""
    number = float(value)
    if number.is_integer() and abs(number) <= 64:
        return int(number)
    return None


def _pow_as(form: Pointwise) -> str | None:
    """The operation a power by a constant is computed with instead of pow: "mul"
    for a whole exponent (``x ** n``, a few multiplications), "sqrt" for 0.5
    and "rsqrt" for -0.5; None for any other exponent. For the exponents
    torch computes without pow (2, 3, -1, -2, 0.5, -0.5) that is what our
    eager ops do too, so the kernel gives eager's bits; a larger whole
    exponent is multiplied out here and goes through pow eagerly."""
    if form.op != "pow" or isinstance(form.operands[1], Node):
        return None
    if _small_integer(form.operands[1]) is not None:
        return "mul"
    return {0.5: "sqrt", -0.5: "rsqrt"}.get(float(form.operands[1]))


# --8<-- [start:expression]
def expression(form: Pointwise, node: Node, dtypes: dict[Node, np.dtype],
               operand: Any) -> str:
    """The right-hand side of ``node``'s line in a kernel.

    ``operand(a, dtype)`` spells one operand (a Node or a number) as a value
    of ``dtype``: a local name, an element read, a typed constant. Flat and
    row kernels read their inputs differently, and share everything else.

    Operands are spelled in the dtype the operation computes in: the node's
    own dtype (``dtypes[node]``), except for a comparison (``COMPARE``),
    which compares in the common dtype (``np.result_type``) of its input
    nodes. Then, by op:

    - ``clamp``: its operand, wrapped in ``scalar.maximum(..., low)`` when it
      has a low bound, then in ``scalar.minimum(..., high)`` when it has a
      high bound, each bound a ``_constant`` of the compute dtype;
    - ``where``: the ``TEMPLATES`` form, the condition spelled as bool and
      the two values in the compute dtype;
    - ``pow`` by a constant (``_pow_as``): a small whole exponent is
      ``<base> ** <n>`` (``_small_integer``); 0.5 and -0.5 use the
      ``sqrt`` and ``rsqrt`` templates on the base;
    - anything else: ``TEMPLATES[op]`` filled with every operand in order.
    """
    if form.op in COMPARE:  # compare in the operands' common dtype
        compute = np.result_type(*(dtypes[a] for a in form.input_nodes))
    else:
        compute = dtypes[node]
    if form.op == "clamp":
        expr = operand(form.operands[0], compute)
        if form.low is not None:
            expr = f"scalar.maximum({expr}, {_constant(form.low, compute)})"
        if form.high is not None:
            expr = f"scalar.minimum({expr}, {_constant(form.high, compute)})"
        return expr
    if form.op == "where":
        condition, *values = form.operands
        return TEMPLATES["where"].format(
            operand(condition, np.dtype(np.bool_)), *(operand(v, compute) for v in values))
    pow_as = _pow_as(form)
    if pow_as == "mul":
        return f"{operand(form.operands[0], compute)} ** {_small_integer(form.operands[1])}"
    if pow_as is not None:
        return TEMPLATES[pow_as].format(operand(form.operands[0], compute))
    return TEMPLATES[form.op].format(*(operand(a, compute) for a in form.operands))
# --8<-- [end:expression]


# --8<-- [start:kernel_source]
def start_kernel(members: list[Node], forms: dict[Node, Any],
                 reserved: tuple[str, ...]) -> tuple[Namespace, list[Node], str]:
    """What every fused kernel's source starts from: a namespace that keeps the
    kernel's own names (``np``, ``out``, the loop index) free, the nodes outside
    the group that it reads, in first-use order, and the function's name, made
    of the group's first four distinct ops (``fused_sigmoid_mul_add``).

    Each ``reserved`` name is taken first (``names.create_name(name)``),
    so no node's name can take it. The inputs are the input nodes of the
    members' forms (``forms[n].input_nodes``) that are not members, each
    once, in the order the members read them. The function's name is
    ``fused_`` followed by the first four distinct ops of the members, in
    order, joined by ``_``, made unique by the namespace.
    """
    names = Namespace()
    for name in reserved:
        names.create_name(name)
    inside = set(members)
    inputs: list[Node] = []
    for n in members:
        for a in forms[n].input_nodes:
            if a not in inside and a not in inputs:
                inputs.append(a)
    ops = list(dict.fromkeys(forms[n].op for n in members))  # distinct, in order
    return names, inputs, names.create_name("fused_" + "_".join(ops[:4]))


def kernel_source(
    members: list[Node],
    forms: dict[Node, Pointwise],
    dtypes: dict[Node, np.dtype],
) -> tuple[str, str, list[Node]]:
    """The generated source for one group.

    ``members`` are the group's nodes in graph order (the last one is the
    result), ``forms`` their canonical forms and ``dtypes`` the dtype of every
    node involved (from ShapeProp). Returns the function's name, its source,
    and the nodes outside the group that it reads, in the order of its
    parameters (after ``out``).
    """
    names, inputs, function = start_kernel(members, forms, _RESERVED)
    inside = set(members)
    arrays = {a: names.create_name(a.name, a) for a in inputs}
    local = {n: names.create_name(n.name, n) for n in members}

    def operand(a: Any, compute: np.dtype) -> str:
        """An operand read as a value of the dtype the operation computes in."""
        if not isinstance(a, Node):
            return _constant(a, compute)
        text = local[a] if a in inside else f"{arrays[a]}[i]"
        return text if dtypes[a] == compute else f"{_numpy_spelling(compute)}({text})"

    body = [f"        {local[n]} = {expression(forms[n], n, dtypes, operand)}" for n in members]
    body.append(f"        out[i] = {local[members[-1]]}")

    header = ["import numpy as np"]
    if any("scalar." in line for line in body):
        header.append("from tensor.backend.kernels import scalar")
    params = ", ".join(["out", *arrays.values()])
    lines = [
        *header,
        "",
        "",
        f"def {function}({params}):",
        *textwrap.wrap(f'"""{", ".join(n.name for n in members)}: one pass, '
                       'no intermediate arrays."""', 88,
                       initial_indent="    ", subsequent_indent="    "),
        "    for i in range(out.size):",
        *body,
    ]
    return function, "\n".join(lines) + "\n", inputs
# --8<-- [end:kernel_source]


# --8<-- [start:compile_kernel]
_COMPILED: dict[str, Any] = {}  # source -> numba dispatcher, for this process
_TASKS: dict[str, dict[tuple, int]] = {}  # source -> its tasks (``FusedKernel._tasks``)


def compile_kernel(name: str, source: str) -> Any:
    """The numba function for ``source``, compiled once per process.

    Generated functions have no file of their own, so numba's on-disk cache
    (``cache=True``) cannot hold them: this in-memory dict, keyed by the source
    text, is the cache. numba compiles lazily, at the first call for each
    combination of argument types.
    """
    if source not in _COMPILED:
        import numba

        filename = f"<minifx kernel {name} #{len(_COMPILED)}>"
        # Let tracebacks and inspect show the generated lines.
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace: dict[str, Any] = {}
        exec(compile(source, filename, "exec"), namespace)
        # As the tensor kernels: nogil (ranges run on several threads), NumPy's
        # error model (1/0 is inf, and the loop vectorises), and "contract" so
        # that LLVM may fuse each multiply and add of exp's polynomial into an FMA.
        # Every function of the source is compiled (a row kernel calls the loop
        # functions written above it); numba reads their globals at its first call.
        jit = numba.njit(nogil=True, error_model="numpy", fastmath={"contract"})
        for key, value in list(namespace.items()):
            if inspect.isfunction(value) and value.__code__.co_filename == filename:
                namespace[key] = jit(value)
        _COMPILED[source] = namespace[name]
    return _COMPILED[source]
# --8<-- [end:compile_kernel]


def kernel_task(kernel: Any, out_dtype: np.dtype, in_dtypes: tuple[np.dtype, ...]) -> int:
    """``kernel(out, *inputs)`` as a cfunc of tensor's ``spin.TASK`` signature, for the
    polling workers: the arrays' addresses arrive in its integer arguments, in
    ``threads.spread``'s order (the output first)."""
    import numba

    from tensor.backend.fast.spin import TASK, array_at

    dtypes = [np.dtype(out_dtype).type] + [np.dtype(d).type for d in in_dtypes]
    t0, t1, t2, t3 = dtypes + dtypes[-1:] * (4 - len(dtypes))  # numba reads each as a constant
    if len(in_dtypes) == 1:
        def task(ints, floats, lo, hi):
            kernel(array_at(ints[0], hi, t0)[lo:], array_at(ints[1], hi, t1)[lo:])
    elif len(in_dtypes) == 2:
        def task(ints, floats, lo, hi):
            kernel(array_at(ints[0], hi, t0)[lo:], array_at(ints[1], hi, t1)[lo:],
                   array_at(ints[2], hi, t2)[lo:])
    else:
        def task(ints, floats, lo, hi):
            kernel(array_at(ints[0], hi, t0)[lo:], array_at(ints[1], hi, t1)[lo:],
                   array_at(ints[2], hi, t2)[lo:], array_at(ints[3], hi, t3)[lo:])
    return numba.cfunc(TASK, error_model="numpy")(task).address


_FRAMEWORKS: dict[type, Any] = {}  # tensor type -> its framework adapter


def _framework(value: Any) -> Any:
    """``framework_of(value)``, remembered per type: every kernel call asks it
    for each input, and a type's library never changes."""
    framework = _FRAMEWORKS.get(type(value))
    if framework is None:
        framework = _FRAMEWORKS[type(value)] = framework_of(value)
    return framework


def _to_numpy(value: Any) -> np.ndarray:
    return _framework(value).to_numpy(value)


def _from_numpy_like(value: Any, array: np.ndarray) -> Any:
    """``array`` as a tensor of the same library as ``value``."""
    return _framework(value).from_numpy(array)


def _output(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The kernel's output: from the tensor library's caching allocator, which
    hands back a freed block of the same size (no page faults on first touch)."""
    return allocator.empty(shape, dtype)


# --8<-- [start:threads]
# What one element of an operation adds to a kernel's time, in copies of one
# float32 element (a read and a write): the op table's ``work`` column
# (tensor/_ops.py), measured on a one-thread loop of that operation alone at
# 1e5 elements, against a copy of the same size. Plain arithmetic hides
# under the memory traffic; a non-integer pow costs about twenty copies.
EXTRA_WORK = {op.name: op.work for op in OPS if op.work}  # the op table's column


def work_per_element(forms: list[Any]) -> float:
    """The cost of one element of a kernel made of ``forms``, in copies: 1 for
    the memory traffic, plus what each operation adds (``EXTRA_WORK``)."""
    work = 1.0
    for form in forms:
        work += EXTRA_WORK.get(_pow_as(form) or form.op, 0.0)  # "mul": nothing extra
    return work


# --8<-- [end:threads]


def flat_operand(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` broadcast to ``shape``, as a 1-d contiguous writable array.

    Free when ``a`` already has that shape and layout; otherwise a copy (a
    broadcast or a non-contiguous input costs one pass of memory).
    """
    if a.shape == shape and a.flags.c_contiguous and a.flags.writeable:
        return a.reshape(-1)
    return np.array(np.broadcast_to(a, shape), order="C").reshape(-1)


# --8<-- [start:fused_kernel]
class FusedKernel:
    """The target of a fused node: called with the group's input tensors,
    returns the group's result as a tensor of the same library.

    ``source`` is the generated kernel's Python source and ``kernel`` the
    numba function compiled from it.
    """

    def __init__(self, name: str, source: str, dtype: np.dtype | str,
                 reuse: int | None = None, reads: int | None = None,
                 work: float = 1.0) -> None:
        self.__name__ = name
        self.source = source
        self.dtype = np.dtype(dtype)
        self.reuse = reuse  # the input whose buffer may take the result (fusion.reusable_input)
        self.reads = reads  # inputs the kernel reads; any after them are spare buffers
        self.work = work  # cost of one element, in copies (``work_per_element``): threads
        self.kernel = compile_kernel(name, source)
        # dtypes -> address of the kernel as a task. Shared by every kernel of the
        # same source, as the compiled kernel is: a model traced again for a new
        # input size gets new kernels, and compiling a cfunc is slow.
        self._tasks: dict[tuple, int] = _TASKS.setdefault(source, {})

    def take_buffer(self, arrays: list[np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
        """Where the result goes: the planned buffer when it fits, else a new one."""
        if self.reuse is not None:  # write the result over a dying intermediate
            old = arrays[self.reuse]
            if (old.shape == shape and old.dtype == self.dtype and old.flags.c_contiguous
                    and old.flags.writeable):
                return old
        return _output(shape, self.dtype)

    def __call__(self, *inputs: Any) -> Any:
        arrays = [_to_numpy(t) for t in inputs]
        read = arrays if self.reads is None else arrays[:self.reads]
        shape = read[0].shape
        if any(a.shape != shape for a in read):
            shape = np.broadcast_shapes(*(a.shape for a in read))
        out = self.take_buffer(arrays, shape)
        flat_out = out.reshape(-1)
        flat_in = [flat_operand(a, shape) for a in read]
        kernel = self.kernel
        copies = flat_out.size * self.work
        if copies < settings.SPIN_MIN:
            kernel(flat_out, *flat_in)
        elif len(flat_in) <= 3:
            # Shared with tensor's polling workers, as its own elementwise ops
            # are: they call the kernel through a cfunc (``_task``).
            task = self._task(flat_out.dtype, tuple(a.dtype for a in flat_in))
            threads.spread(task, flat_out.size, copies, flat_out, *flat_in)
        else:
            # The kernel releases the GIL: large outputs are split in ranges run
            # on a few threads, each range a slice of every flat operand.
            threads.in_ranges(
                lambda lo, hi: kernel(flat_out[lo:hi], *(a[lo:hi] for a in flat_in)),
                flat_out.size, threads.thread_count(flat_out.size, self.work))
        return _from_numpy_like(inputs[0], out)

    def _task(self, out_dtype: np.dtype, in_dtypes: tuple[np.dtype, ...]) -> int:
        """The address of a ``spin.TASK`` cfunc that runs the kernel on [lo, hi) of
        the output and of (up to three) inputs of these dtypes, compiled once."""
        key = (out_dtype, in_dtypes)
        if key not in self._tasks:
            self._tasks[key] = kernel_task(self.kernel, out_dtype, in_dtypes)
        return self._tasks[key]

    def __repr__(self) -> str:
        return f"<FusedKernel {self.__name__}>"

    @property
    def __fx_name__(self) -> str:
        """Graphs and generated code name a fused kernel by its function name
        (``node.qualified_name`` asks a target's class for this)."""
        return self.__name__

    def __reduce__(self) -> tuple:
        """Pickle and deepcopy by source: the copy compiles it again (or finds it cached)."""
        return (FusedKernel, (self.__name__, self.source, self.dtype.name, self.reuse,
                              self.reads, self.work))
# --8<-- [end:fused_kernel]

