"""The fusion pass: replace each group of elementwise nodes by one kernel call.

Four steps, each a function below:

1. ``fusible_nodes``: which nodes are elementwise operations on float tensors,
   or sums, means and maxes over the last dim that keep it (ShapeProp has
   written every node's dtype and shape into its meta).
2. ``find_groups``: gather them into groups. A group grows backwards from
   its last node, taking in an input only when *every* user of that input is
   already in the group: then the input's value is needed nowhere else and
   never has to exist in memory. A node that is also read outside (by a
   matmul, by the output, by another group) ends its group there: it stays
   a real tensor, and the nodes after it start a new group that reads it.
   A group with reductions keeps to two shapes, the one its reductions read
   and their row shape, so that it can run row by row (``rows.py``).
3. ``replace_group``: generate the group's kernel (``kernel.py`` or
   ``rows.py``), insert one ``call_function`` node that calls it, move the
   users over, erase the group.
4. ``plan_buffers``: hand each kernel that would allocate its result the
   buffer of an intermediate that died before it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._framework import library_packages
from ..graph import Graph
from ..node import Node
from ..passes.shape_prop import ShapeProp, TensorMetadata
from .elementwise import COMPARE, Pointwise, Reduction, as_pointwise, as_reduction
from .kernel import FusedKernel, kernel_source, work_per_element
from .rows import RowKernel, row_kernel_source, row_shape

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BOOL = np.dtype(np.bool_)


def node_dtype(node: Node) -> np.dtype | None:
    """The NumPy dtype of the tensor a node produced (ShapeProp's record), or None."""
    meta = node.meta.get("tensor_meta")
    if not isinstance(meta, TensorMetadata):
        return None  # not a tensor (an int, a tuple of tensors ...)
    name = str(meta.dtype).rpartition(".")[2]  # tensor.float32 / torch.float32
    try:
        return np.dtype(name)
    except TypeError:
        return None  # a dtype NumPy has no name for (bfloat16 ...)


# --8<-- [start:fusible_nodes]
def _dtypes_fit(form: Pointwise, result: np.dtype | None, operands: list) -> bool:
    """Whether the dtypes of a node let the kernels compute it. Integer tensors stay
    with the eager kernels.

    ``result`` is the node's dtype and ``operands`` those of its input nodes
    (None: not a tensor, or a dtype NumPy has no name for), in the order of
    ``form.input_nodes``. Any None, the result's too: False. A comparison (``COMPARE``) needs a
    bool result and float32/float64 operands. Any other op needs a float
    result (``_FLOATS``); for ``where`` whose condition is a Node, that first
    operand must be bool and is not checked further; every other operand
    must be a float or bool.
    """
    if result is None or any(d is None for d in operands):
        return False
    if form.op in COMPARE:
        return result == _BOOL and all(d in _FLOATS for d in operands)
    if result not in _FLOATS:
        return False
    if form.op == "where" and isinstance(form.operands[0], Node):
        condition, *operands = operands
        if condition != _BOOL:
            return False
    return all(d in _FLOATS or d == _BOOL for d in operands)


def node_shape(node: Node) -> tuple[int, ...] | None:
    """The shape of the tensor a node produced (ShapeProp's record), or None."""
    meta = node.meta.get("tensor_meta")
    return tuple(meta.shape) if isinstance(meta, TensorMetadata) else None


def _reduction(node: Node) -> Reduction | None:
    """A float sum / mean / amax over the last dim (of size > 1), the dim kept."""
    if node.op not in ("call_function", "call_method") or not node.args \
            or not isinstance(node.args[0], Node):
        return None
    shape = node_shape(node.args[0])
    if shape is None or not shape or shape[-1] < 2:
        return None
    form = as_reduction(node, len(shape))
    if form is None or node_dtype(node) not in _FLOATS \
            or node_dtype(node) != node_dtype(node.args[0]):
        return None
    return form


def fusible_nodes(graph: Graph) -> dict[Node, Pointwise | Reduction]:
    """Every node the backend can put in a kernel, with its canonical form.

    In graph order: a node with a ``Pointwise`` form (``as_pointwise``) is
    fusible when its dtypes fit (``_dtypes_fit`` of its form, its own
    ``node_dtype`` and those of its form's input nodes, in order). A node
    without one may be a reduction (``_reduction``), kept with its
    ``Reduction`` form. Other nodes are left out.
    """
    forms = {}  # node -> its Pointwise or Reduction form
    for n in graph.nodes:
        form = as_pointwise(n)
        if form is None:
            reduction = _reduction(n)
            if reduction is not None:
                forms[n] = reduction
            continue
        if _dtypes_fit(form, node_dtype(n), [node_dtype(a) for a in form.input_nodes]):
            forms[n] = form
    return forms
# --8<-- [end:fusible_nodes]


# --8<-- [start:find_groups]
def _reads(form: Pointwise | Reduction) -> tuple[int, ...] | None:
    """The shape a reduction reads; None for an elementwise node."""
    return node_shape(form.operands[0]) if isinstance(form, Reduction) else None


def _joins(a: Node, group: set[Node], full: tuple | None, forms: dict) -> tuple | None | bool:
    """Can ``a`` join ``group``, whose reductions read ``full`` (None: none yet)?

    A group with reductions runs row by row (``rows.py``), so each of its
    nodes must have the full shape its reductions read or their row shape
    (``row_shape``). Returns False when ``a`` cannot join, else the group's
    full shape after it:

    - an elementwise ``a`` joins a group without reductions (the full shape
      stays None), or a group whose full shape or row shape ``a`` has;
    - a reduction ``a`` reads some shape (``_reads``): that must be the
      group's full shape, if it has one, and every member must have that
      shape or its row shape. The group's full shape is then that shape.
    """
    own = _reads(forms[a])
    if own is None:  # elementwise
        if full is not None and node_shape(a) not in (full, row_shape(full)):
            return False
        return full
    if full is not None and own != full:
        return False
    if any(node_shape(m) not in (own, row_shape(own)) for m in group):
        return False
    return own


def find_groups(graph: Graph, forms: dict[Node, Pointwise | Reduction]) -> list[list[Node]]:
    """Groups of fusible nodes, each in graph order, each ending with the one
    node whose value leaves the group."""
    position = {n: i for i, n in enumerate(graph.nodes)}
    taken: set[Node] = set()
    groups = []
    for last in reversed(graph.nodes):
        if last not in forms or last in taken:
            continue
        group, full = {last}, _reads(forms[last])
        grew = True
        while grew:  # an input joins once all of its users have joined
            grew = False
            for member in list(group):
                for a in forms[member].input_nodes:
                    if (a in forms and a not in taken and a not in group
                            and all(u in group for u in a.users)):
                        joined = _joins(a, group, full, forms)
                        if joined is not False:
                            group.add(a)
                            full = joined
                            grew = True
        taken |= group
        groups.append(sorted(group, key=position.__getitem__))
    groups.reverse()
    return groups
# --8<-- [end:find_groups]


# --8<-- [start:reusable_input]
# Producers whose result is always a fresh array of their own (never a view of
# their input), by module class name and by function name, in tensor and torch.
_FRESH_MODULES = frozenset({"Linear", "Conv2d", "BatchNorm2d", "LayerNorm"})
_FRESH_FUNCTIONS = frozenset({"matmul", "linear", "conv2d", "batch_norm", "layer_norm"})


def _fresh(graph: Graph, node: Node) -> bool:
    if node.op == "call_module" and graph.owning_module is not None:
        module = graph.owning_module.get_submodule(node.target)
        return type(module).__name__ in _FRESH_MODULES
    if node.op == "call_function":
        if isinstance(node.target, FusedKernel):
            return True
        library = getattr(node.target, "__module__", None) or ""
        return (library.split(".")[0] in library_packages()
                and getattr(node.target, "__name__", None) in _FRESH_FUNCTIONS)
    return False


def reusable_input(graph: Graph, members: list[Node], inputs: list[Node]) -> int | None:
    """Which input's buffer the kernel may write its result into, if any.

    Buffer planning at its simplest: an intermediate that a fresh-array
    producer (a conv, a linear, another kernel) made, that is read by this
    group alone, and that has the result's shape and dtype dies here, so
    the result can take its memory instead of a new allocation (a bias and
    activation after a conv, in place). Inputs of the model are never
    reused: they belong to the caller.
    """
    last = members[-1]
    result = last.meta["tensor_meta"]
    group = set(members)
    for i, a in enumerate(inputs):
        meta = a.meta.get("tensor_meta")
        if (isinstance(meta, TensorMetadata) and _fresh(graph, a)
                and all(u in group for u in a.users)
                and tuple(meta.shape) == tuple(result.shape)
                and node_dtype(a) == node_dtype(last)):
            return i
    return None
# --8<-- [end:reusable_input]


# --8<-- [start:replace_group]
def replace_group(graph: Graph, members: list[Node], forms: dict) -> Node:
    """One ``call_function`` node in place of ``members``; returns it.

    ``dtypes`` maps every member and every input node of a member's form to
    its ``node_dtype``. Without a reduction among the members, the kernel is
    flat: ``kernel_source`` gives its name, source and inputs, and the
    target is ``FusedKernel(name, source, dtype of the last member, reuse,
    work=...)``. With one, the group's full shape is what its (first)
    reduction reads (``_reads``), ``row_kernel_source`` also takes the
    shapes (``node_shape``) of every node in ``dtypes``, and the target is a
    ``RowKernel(name, source, dtype, full, layouts, shape of the last member,
    reuse, work=...)``. Either way ``reuse`` is ``reusable_input`` of the
    kernel's inputs, and ``work`` is ``work_per_element`` of the members'
    forms (in a row kernel, only the reductions and the members of the full
    shape: one value per row costs nothing per element).

    The new node goes just before the last member, named after the kernel
    without its ``fused_`` prefix, its args the kernel's inputs. Its meta
    gets ``fused`` (the members' names, in order), ``tensor_meta`` (the last
    member's) and, when ``reuse`` is not None, ``writes_into`` (the name of
    the input whose buffer it takes). The last member's readers read the new
    node, and the members are erased, last first.
    """
    last = members[-1]
    dtypes = {n: node_dtype(n) for n in members}
    for n in members:
        dtypes.update({a: node_dtype(a) for a in forms[n].input_nodes})
    full = next((_reads(forms[n]) for n in members if isinstance(forms[n], Reduction)), None)
    # (a row kernel's one-number-per-row nodes cost nothing per element)
    work = work_per_element([forms[n] for n in members if full is None
                             or isinstance(forms[n], Reduction) or node_shape(n) == full])
    if full is None:  # elementwise only: one flat loop
        name, source, inputs = kernel_source(members, forms, dtypes)
        reuse = reusable_input(graph, members, inputs)
        kernel = FusedKernel(name, source, dtypes[last], reuse, work=work)
    else:  # around reductions: row by row
        shapes = {n: node_shape(n) for n in dtypes}
        name, source, inputs, layouts = row_kernel_source(members, forms, dtypes, shapes, full)
        reuse = reusable_input(graph, members, inputs)
        kernel = RowKernel(name, source, dtypes[last], full, layouts, shapes[last], reuse,
                           work=work)
    with graph.inserting_before(last):
        fused = graph.create_node("call_function", kernel, tuple(inputs),
                                  name=name.removeprefix("fused_"))
    fused.meta["fused"] = [n.name for n in members]
    if reuse is not None:
        fused.meta["writes_into"] = inputs[reuse].name
    fused.meta["tensor_meta"] = last.meta["tensor_meta"]
    last.replace_all_uses_with(fused)
    for n in reversed(members):  # users first, so each is free when erased
        graph.erase_node(n)
    return fused
# --8<-- [end:replace_group]


# --8<-- [start:plan_buffers]
def plan_buffers(graph: Graph) -> None:
    """Give each fused kernel that would allocate its result the buffer of an
    intermediate that died before it.

    The generated code frees every value after its last use (``x = None``).
    A kernel with no dying input of its own to write over (``reusable_input``)
    takes such a freed buffer of the same shape and dtype instead: the node
    gets it as one more argument, which keeps it alive until then, and
    ``FusedKernel.reads`` tells the kernel not to read it. A buffer qualifies
    when a fresh-array producer made it, when every one of its readers is a
    fresh-array producer that ran before the kernel (so no view of it can
    still be alive, and the output does not return it), and when no reader
    wrote its own result into it. Each buffer is taken once.

    The kernels (``call_function`` nodes whose target is a FusedKernel, a
    RowKernel too) are visited in graph order, and for each the nodes before
    it in graph order: the first that qualifies, with the kernel's shape and
    dtype (``node_shape``, ``node_dtype``), is taken. The node gets it as its
    last argument; the kernel's ``reads`` and ``reuse`` both become that
    argument's index (the number of args before it), and the node's meta
    ``writes_into`` its name. A kernel that already reuses an input
    (``reuse`` not None) is skipped.
    """
    order = list(graph.nodes)
    position = {n: i for i, n in enumerate(order)}
    taken: set[Node] = set()
    for node in order:
        kernel = node.target if node.op == "call_function" else None
        if not isinstance(kernel, FusedKernel) or kernel.reuse is not None:
            continue
        shape, dtype = node_shape(node), node_dtype(node)
        for dead in order[:position[node]]:
            if (dead not in taken and dead.users and _fresh(graph, dead)
                    and node_shape(dead) == shape and node_dtype(dead) == dtype
                    and all(position[u] < position[node] and _fresh(graph, u)
                            and u.meta.get("writes_into") != dead.name for u in dead.users)):
                taken.add(dead)
                kernel.reads = kernel.reuse = len(node.args)
                node.args = (*node.args, dead)
                node.meta["writes_into"] = dead.name
                break
# --8<-- [end:plan_buffers]


def _worth_a_kernel(graph: Graph, members: list[Node], forms: dict) -> bool:
    """Two nodes or more save a pass over memory. A lone elementwise node saves
    nothing, unless it can write over its dying input: an activation after a
    conv or a linear layer then runs in place, with no new output."""
    if len(members) > 1:
        return True
    (node,) = members
    inputs = list(dict.fromkeys(forms[node].input_nodes))
    return isinstance(forms[node], Pointwise) and \
        reusable_input(graph, members, inputs) is not None


# --8<-- [start:fuse_elementwise]
def fuse_elementwise(gm: Any, example_inputs: list[Any]) -> Any:
    """Rewrite ``gm`` in place: each group of two or more elementwise nodes
    becomes one numba kernel call. Returns ``gm``, recompiled."""
    ShapeProp(gm).propagate(*example_inputs)
    forms = fusible_nodes(gm.graph)
    # Last group first: a group's canonical forms still name the nodes it
    # reads, and those must not have been replaced yet.
    for members in reversed(find_groups(gm.graph, forms)):
        if _worth_a_kernel(gm.graph, members, forms):
            replace_group(gm.graph, members, forms)
    plan_buffers(gm.graph)
    gm.graph.lint()
    gm.recompile()
    return gm
# --8<-- [end:fuse_elementwise]
