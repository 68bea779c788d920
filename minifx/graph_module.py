"""GraphModule: a module whose ``forward`` is generated from a Graph.

It copies from the original module only what the graph names (the
submodules of ``call_module`` nodes, the parameters and buffers of
``get_attr`` nodes), turns the graph into Python source, and runs that
source as its ``forward``. Change the graph and call ``recompile()`` (or
assign ``gm.graph``) and the module runs the new program.
"""

from __future__ import annotations

import copy
import functools
import itertools
import linecache
import types
import weakref
from typing import Any

from ._compat import compiled_code, with_filename
from ._framework import adapter, framework_of, tensor_framework
from .graph import Graph

_MISSING = object()  # what getattr returns for an attribute that is not there

# --8<-- [start:framework_base]
_combined_classes: dict[tuple[type, type], type] = {}


def _module_base_for(root: Any) -> type:
    """The framework's module class a GraphModule over ``root`` must subclass."""
    if isinstance(root, dict):
        for value in root.values():
            framework = framework_of(value)
            if framework.is_module(value) or framework.is_tensor(value):
                return framework.module_class
        return tensor_framework().module_class
    return framework_of(root).module_class
# --8<-- [end:framework_base]


# --8<-- [start:instance_class]
def _instance_class(cls: type, base: type) -> type:
    """A fresh class for one GraphModule instance (the class-per-instance trick).

    ``cls`` (GraphModule or a user subclass) holds the logic; ``base`` is the
    framework's module class (tensor.nn.Module or torch.nn.Module). Their
    combination is made once and cached; every instance then gets its own
    subclass of it, because ``recompile`` installs ``forward`` on the class
    and two GraphModules must not overwrite each other's ``forward``.

    When ``cls`` is not already a subclass of ``base``, the combination is
    ``type(cls.__name__, (cls, base), ...)`` with ``__module__`` from ``cls``
    and the class attribute ``_module_base`` set to ``base``, kept in
    ``_combined_classes`` under ``(cls, base)``, so that all the instances
    of one kind share it (``isinstance`` works across them). The answer is a
    new subclass of that (or of ``cls`` itself when it already subclasses
    ``base``), with the same name and ``__module__``.
    """
    if not issubclass(cls, base):
        key = (cls, base)
        if key not in _combined_classes:
            _combined_classes[key] = type(cls.__name__, (cls, base),
                                          {"__module__": cls.__module__, "_module_base": base})
        cls = _combined_classes[key]
    return type(cls.__name__, (cls,), {"__module__": cls.__module__})
# --8<-- [end:instance_class]


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (the way module reprs nest)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    # Blank lines stay empty (torch 2.13 does the same), so no trailing spaces.
    return lines[0] + "\n" + "\n".join(" " * spaces + line if line.strip() else ""
                                       for line in lines[1:])


# --8<-- [start:exec_source]
_source_ids = itertools.count()


def _forward_from_src(src: str, globals_: dict[str, Any], owner: Any = None,
                      compiled: types.CodeType | None = None) -> Any:
    """Run the generated source and return the ``forward`` it defines.

    The source is registered with ``linecache`` under a unique fake file
    name, so a traceback through generated code shows the generated line.
    The entry goes away with ``owner`` (the GraphModule), if one is given.
    ``compiled``: speed only, see ``_compat.with_filename``.

    The file name is ``<eval_with_key>.minifx.<N>``, N from the module's
    counter ``_source_ids``; the ``linecache.cache`` entry is the tuple
    (size of the source, None, its lines with their ends, the file name).
    ``weakref.finalize`` on ``owner`` pops the entry (default None) when
    the owner dies. The code is ``compile(src, filename, "exec")``, or
    ``with_filename(compiled, filename)`` when ``compiled`` is given; it
    runs in a copy of ``globals_`` (the caller's dict stays as it was).
    The answer is the ``forward`` it defines, which keeps ``(src, code)``
    as ``forward._fx_compiled`` for ``_compat.compiled_code``.
    """
    # torch.fx names its sources `<eval_with_key>.N` with a counter of its own: ours
    # say minifx, so that the two never overwrite each other's linecache entry.
    filename = f"<eval_with_key>.minifx.{next(_source_ids)}"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    if owner is not None:
        weakref.finalize(owner, linecache.cache.pop, filename, None)
    code = compile(src, filename, "exec") if compiled is None else with_filename(compiled, filename)
    namespace = dict(globals_)
    exec(code, namespace)  # noqa: S102 - the point of codegen
    forward = namespace["forward"]
    forward._fx_compiled = (src, code)
    return forward
# --8<-- [end:exec_source]


def _install(module: Any, field: str, value: Any, frameworks: dict | None = None) -> None:
    """``module.<field> = value``; a tensor that is not a parameter becomes a buffer,
    as torch.fx does, so it is in ``state_dict()`` and ``get_buffer`` finds it.
    ``frameworks`` (speed only) remembers the framework of each type of value."""
    if frameworks is None:
        framework = framework_of(value)
    else:
        framework = frameworks.get(type(value))
        if framework is None:
            framework = frameworks[type(value)] = framework_of(value)
    if framework.is_tensor(value) and not framework.is_parameter(value):
        module.register_buffer(field, value)
    else:
        setattr(module, field, value)


class GraphModule:
    """A module made from ``root``'s attributes and a Graph.

    ``root`` is a module (tensor.nn.Module or torch.nn.Module) or a dict from
    dotted names to the objects that ``get_attr`` and ``call_module`` nodes
    name. The result is an instance of the root's framework module class and
    of GraphModule.
    """

    _module_base: type

    def __new__(cls, root: Any, graph: Graph | None = None,
                class_name: str = "GraphModule") -> GraphModule:
        base = _module_base_for(root)
        return base.__new__(_instance_class(cls, base))

    def __init__(self, root: Any, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = class_name
        type(self).__qualname__ = class_name
        self.meta: dict[str, Any] = {}
        if hasattr(root, "training"):
            self.training = root.training
        walked: dict[str, tuple[Any, Any]] = {}  # see _copy_attr
        dict_targets: list[str] = []
        for node in graph.nodes:
            if node.op in ("get_attr", "call_module"):
                if isinstance(root, dict):
                    if node.target not in root:
                        raise RuntimeError(
                            f"GraphModule: node {node.name} ({node.op}) targets {node.target!r}, "
                            f"which is not a key of the root dict")
                    dict_targets.append(node.target)
                else:
                    self._copy_attr(root, node, walked)
        # Shallow targets first ("foo" before "foo.bar"), as torch.fx does:
        # otherwise "foo.bar" lands in an empty stand-in that "foo" then replaces.
        parents: dict[str, Any] = {}  # speed only: each parent path is walked once,
        frameworks: dict[type, Any] = {}  # and each type's framework found once
        for target in sorted(dict_targets, key=lambda t: t.count(".")):
            parent = self._parent_of(target, parents)
            if parent is None:
                raise RuntimeError(
                    f"GraphModule: cannot install {target!r}: a non-module is in the way")
            if not _put_new(parent[0], parent[1], root[target]):  # speed only: see _put_new
                _install(parent[0], parent[1], root[target], frameworks)
        self.graph = graph

    # -- building the module tree -------------------------------------------
    def _empty_module(self) -> Any:
        return type(self)._module_base()

    def _copy_attr(self, from_module: Any, node: Any,
                   walked: dict[str, tuple[Any, Any]] | None = None) -> None:
        """Copy ``root.<node.target>`` here, making empty parent modules on the way.

        ``walked`` remembers, for each parent path already walked, the pair
        (root's module, ours), so that siblings (``layer1.0.conv1``,
        ``layer1.0.bn1``) walk their path once: a submodule read is a
        Python-level ``__getattr__`` call in torch, and so is each miss.
        """
        walked = {} if walked is None else walked
        prefix, _, field = node.target.rpartition(".")
        if prefix in walked:
            from_module, to_module = walked[prefix]
        else:
            to_module: Any = self
            for item in prefix.split(".") if prefix else ():
                f = getattr(from_module, item, _MISSING)
                if f is _MISSING:
                    raise RuntimeError(
                        f"GraphModule: node {node.name} ({node.op}) targets "
                        f"{node.target!r}, but the root has no {item!r} on the way")
                t = getattr(to_module, item, None)
                if f is t:  # already copied whole
                    return
                if t is None:
                    t = self._empty_module()
                    setattr(to_module, item, t)
                from_module, to_module = f, t
            walked[prefix] = (from_module, to_module)
        value = getattr(from_module, field, _MISSING)
        if value is _MISSING:
            raise RuntimeError(f"GraphModule: node {node.name} ({node.op}) targets "
                               f"{node.target!r}, but the root has no attribute {field!r}")
        _install(to_module, field, value)
        if node.target in walked:  # we just replaced a module on remembered paths
            for path in [p for p in walked if p == node.target or p.startswith(node.target + ".")]:
                del walked[path]

    def _parent_of(self, target: str,
                   walked: dict[str, Any] | None = None) -> tuple[Any, str] | None:
        """The module that is to hold ``target``'s last atom, and that atom.

        Missing modules on the way are made empty; None when something other
        than a module is in the way. ``walked`` (speed only) remembers the
        module found at each parent path, so that each path is looked up once
        however many targets lie under it (targets are installed shallow
        first: a later, deeper target never replaces a path remembered before
        it). (`_holds` and `_put`, speed only, spare a plain module's misses.)
        """
        path, _, field = target.rpartition(".")
        if not path:
            return self, field
        if walked is not None and path in walked:
            return walked[path], field
        above = self._parent_of(path, walked)
        if above is None:
            return None
        mod, item = above
        held = _holds(mod, item)
        sub = None if held is False else getattr(mod, item, None)
        if sub is None:
            sub = self._empty_module()
            if held is not False or not _put(mod, item, sub):
                mod.add_module(item, sub)
        if not isinstance(sub, type(self)._module_base):
            return None
        if walked is not None:
            walked[path] = sub
        return sub, field

    # -- the graph and its code -------------------------------------------
    @property
    def graph(self) -> Graph:
        """The graph this module runs; assigning a new one recompiles."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise TypeError(f"GraphModule.graph must be a minifx.Graph, got {type(g).__name__}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``, generated from the graph."""
        return self._code

    # --8<-- [start:recompile]
    def recompile(self, reuse: Any = None) -> Any:
        """Regenerate ``forward`` from ``self.graph``; call it after editing the graph.

        ``reuse`` (speed only: a deepcopy passes its original's ``forward``)
        skips compiling when the source is the one ``reuse`` was compiled from.
        """
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        type(self).forward = _forward_from_src(self._code, python_code.globals, self,
                                               compiled_code(reuse, self._code))
        return python_code
    # --8<-- [end:recompile]

    def print_readable(self, print_output: bool = True) -> str:
        """The code as a class, with the stack-trace comments torch.fx prints."""
        package = type(self)._module_base.__module__.split(".")[0]
        src = self._graph.python_code(root_module="self", verbose=True).src.lstrip("\n")
        name = type(self).__name__
        module_code = _addindent(f"class {name}({package}.nn.Module):\n{src}", 4)
        parts = [""]
        for child_name, child in self.named_children():
            if isinstance(child, GraphModule):
                parts.append(_readable_child(child, child_name))
        output = module_code + _addindent("\n".join(parts), 4)
        if print_output:
            print(output)
        return output

    # -- the submodule API ------------------------------------------------
    def add_submodule(self, target: str, m: Any) -> bool:
        """Install ``m`` at the dotted path ``target``; False if a non-module is in the way."""
        parent = self._parent_of(target)
        if parent is None:
            return False
        parent[0].add_module(parent[1], m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none."""
        *prefix, field = target.split(".")
        mod: Any = self
        for item in prefix:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, type(self)._module_base):
                return False
        if field not in getattr(mod, "_modules", {}):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Delete every submodule that no ``call_module`` or ``get_attr`` node reaches."""
        used: set[str] = set()
        for node in self._graph.nodes:
            if node.op not in ("call_module", "get_attr"):
                continue
            path = node.target.split(".")
            used.update(".".join(path[:i]) for i in range(1, len(path) + 1))
            if node.op == "call_module":  # it runs the whole submodule
                try:
                    module = self.get_submodule(node.target)
                except AttributeError:  # not installed yet (replace_pattern adds it next)
                    continue
                used.update(f"{node.target}.{name}" for name, _ in module.named_modules()
                            if name)
        for name in [n for n, _ in self.named_modules() if n]:
            if name not in used:
                self.delete_submodule(name)

    # -- copying and pickling ---------------------------------------------
    def _state(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}

    def __deepcopy__(self, memo: dict) -> GraphModule:
        cls = type(self).__mro__[1]  # the shared class, not this instance's own
        result = type(self)._module_base.__new__(_instance_class(cls, type(self)._module_base))
        memo[id(self)] = result
        result.__dict__.update(copy.deepcopy(self._state(), memo))
        type(result).__name__ = type(result).__qualname__ = type(self).__name__
        graph = copy.deepcopy(self._graph, memo)
        if type(result).recompile is not GraphModule.recompile:
            result.graph = graph  # a subclass's own recompile must run
        else:  # the same, but reusing this module's compiled code (speed only)
            result._graph = graph
            graph.owning_module = result
            result.recompile(reuse=type(self).forward)
        return result

    def __copy__(self) -> GraphModule:
        cls = type(self).__mro__[1]
        result = type(self)._module_base.__new__(_instance_class(cls, type(self)._module_base))
        result.__dict__.update(self._state())
        type(result).__name__ = type(result).__qualname__ = type(self).__name__
        result.graph = self._graph
        return result

    def __reduce__(self) -> tuple:
        # The instance's class is made at run time and cannot be pickled by
        # name: pickle the logic class, the framework base, the state and the
        # graph, and rebuild (and recompile) on load.
        shared = type(self).__mro__[1]
        logic = next(c for c in shared.__mro__ if "_module_base" not in c.__dict__)
        return (_rebuild_graph_module,
                (logic, type(self)._module_base, self._state(), self._graph,
                 type(self).__name__))

    def __str__(self) -> str:
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([self.__repr__(), self._code, reminder])


def _readable_child(child: GraphModule, name: str) -> str:
    output = child.print_readable(print_output=False)
    first, _, rest = output.partition("(")
    return f"class {name}({rest}"


def _rebuild_graph_module(logic: type, base: type, state: dict, graph: Graph,
                          class_name: str) -> GraphModule:
    gm = base.__new__(_instance_class(logic, base))
    gm.__dict__.update(state)
    type(gm).__name__ = type(gm).__qualname__ = class_name
    gm.graph = graph
    return gm


# -- Speed only (skip on a first read) -------------------------------------------
# make_fx's GraphModule puts a few hundred parameters and buffers into a hundred
# empty modules. For each new name, ``getattr(module, name, None)`` and the
# ``hasattr(module, name)`` that add_module, register_parameter and
# register_buffer ask first raise and catch an AttributeError in
# Module.__getattr__. In a module of the plain ``tensor.nn.Module`` class (no
# subclass can answer other names) the answer is known without asking: a name
# is on it if its class defines it, or its ``__dict__`` or one of its three
# stores holds it. Other frameworks' modules (torch's has global registration
# hooks) take the ordinary path.
@functools.cache
def _tensor_adapter() -> Any:
    return adapter("tensor")


def _holds(module: Any, name: str) -> bool | None:
    """Whether ``module`` has an attribute ``name``; None when ``module`` is not a plain
    ``tensor.nn.Module``, or ``name`` is empty (then let the module's own checks tell)."""
    plain = _tensor_adapter().module_class
    if type(module) is not plain or not name:
        return None
    d = module.__dict__
    if name in d or name in d["_parameters"] or name in d["_buffers"] or name in d["_modules"]:
        return True
    for klass in plain.__mro__:  # what the class has: hasattr(plain, name), without a miss
        if name in klass.__dict__:
            return True
    return False


def _put(module: Any, name: str, value: Any) -> bool:
    """``module.<name> = value`` for a parameter, buffer or submodule ``value``, straight
    into the store ``setattr`` or ``register_buffer`` would choose, on a plain module
    that `_holds` nothing by that name; False (nothing done) for another value."""
    framework = _tensor_adapter()
    if framework.is_parameter(value):
        module._parameters[name] = value
    elif framework.is_tensor(value):
        module._buffers[name] = value
        module._non_persistent_buffers_set.discard(name)
    elif isinstance(value, framework.module_class):
        module._modules[name] = value
    else:
        return False
    return True


def _put_new(module: Any, name: str, value: Any) -> bool:
    """`_put` when ``module`` is a plain ``tensor.nn.Module`` without ``name``; else False."""
    return _holds(module, name) is False and _put(module, name, value)
