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
    """The framework's module class a GraphModule over ``root`` must subclass.

    A module root answers with its framework's ``module_class``
    (``framework_of(root).module_class``): tensor.nn.Module or
    torch.nn.Module. A dict root has no framework of its own: its values are
    asked in order, and the first one that its framework calls a module or a
    tensor (``is_module``, ``is_tensor``) decides; other values (ints,
    functions ...) are passed over. A dict without such a value (an empty one
    too) gives ``tensor_framework().module_class``.
    """
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


# --8<-- [start:install]
def _install(module: Any, field: str, value: Any, frameworks: dict | None = None) -> None:
    """``module.<field> = value``; a tensor that is not a parameter becomes a buffer.

    As torch.fx does: a tensor of either framework that is not a parameter
    is registered with ``module.register_buffer(field, value)``, so it is in
    ``state_dict()`` and ``named_buffers()``; anything else (a parameter, a
    module, a constant) is set with ``setattr``. The value's framework
    (``framework_of(value)``) says what it is. ``frameworks`` (speed only),
    when given, is a dict from a value's type to its framework: look the
    type up there first, and add what ``framework_of`` answers for a type
    not in it yet.
    """
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
# --8<-- [end:install]


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

    # --8<-- [start:init]
    def __init__(self, root: Any, graph: Graph, class_name: str = "GraphModule") -> None:
        """Copy from ``root`` what ``graph`` names, then install the graph (and compile it).

        As torch.fx's GraphModule does:

        - the module is initialised (``super().__init__()``), its class (the
          instance's own, see ``_instance_class``) gets ``__name__`` and
          ``__qualname__`` ``class_name``, ``self.meta`` is a new empty dict,
          and a root that has ``training`` passes it on;
        - a module root: for each ``get_attr`` and ``call_module`` node, in
          graph order, ``self._copy_attr(root, node, walked)``, with one
          ``walked`` dict shared by all of them;
        - a dict root: each such node's target must be a key, else a
          RuntimeError ``GraphModule: node <name> (<op>) targets '<target>',
          which is not a key of the root dict``; the targets are then
          installed shallow first (sorted by their number of dots, stable),
          each ``_install``-ed on the module that ``self._parent_of`` gives
          (pass one dict for its ``walked`` and one for ``_install``'s
          ``frameworks``); when ``_parent_of`` says None, a RuntimeError
          ``GraphModule: cannot install '<target>': a non-module is in the
          way``;
        - last, ``self.graph = graph``, whose setter recompiles.
        """
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
    # --8<-- [end:init]

    # -- building the module tree -------------------------------------------
    def _empty_module(self) -> Any:
        return type(self)._module_base()

    # --8<-- [start:copy_attr]
    def _copy_attr(self, from_module: Any, node: Any,
                   walked: dict[str, tuple[Any, Any]] | None = None) -> None:
        """Copy ``root.<node.target>`` here, making empty parent modules on the way.

        ``from_module`` is the root. For a target ``a.b.c`` each parent atom
        (``a``, then ``b``) is read from the root's side with ``getattr``; a
        missing one is a RuntimeError ``GraphModule: node <name> (<op>)
        targets '<target>', but the root has no '<atom>' on the way``. On our
        side, a parent that is not there yet is a new empty module
        (``self._empty_module()``, set with ``setattr``); one that is already
        the very object of the root (copied whole by an earlier target)
        means there is nothing left to do. The last atom's value must exist
        (else ``... but the root has no attribute '<field>'``) and is put in
        place with ``_install`` (so a tensor that is not a parameter becomes
        a buffer).

        ``walked`` remembers, for each parent path already walked, the pair
        (root's module, ours), so that siblings (``layer1.0.conv1``,
        ``layer1.0.bn1``) walk their path once: a submodule read is a
        Python-level ``__getattr__`` call in torch, and so is each miss.
        A target that replaces a module on a remembered path (``a`` after
        ``a.b``) forgets that path and the paths under it.
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
    # --8<-- [end:copy_attr]

    # --8<-- [start:parent_of]
    def _parent_of(self, target: str,
                   walked: dict[str, Any] | None = None) -> tuple[Any, str] | None:
        """The module that is to hold ``target``'s last atom, and that atom.

        The walk starts at ``self`` and follows the atoms before the last
        (none for a plain name: the answer is ``(self, target)``). A missing
        module on the way (``getattr`` gives None) is made empty
        (``self._empty_module()``) and registered with ``add_module``; None is
        the answer when something other than a module of this framework
        (``type(self)._module_base``) is in the way. ``walked`` (speed only),
        when given, remembers the module found at each parent path (the path
        text, ``""`` for ``self``), and a path found there is not walked
        again: targets are installed shallow first, so a later, deeper
        target never replaces a path remembered before it.
        """
        path, _, field = target.rpartition(".")
        if walked is not None and path in walked:
            return walked[path], field
        mod: Any = self
        for item in path.split(".") if path else ():
            sub = getattr(mod, item, None)
            if sub is None:
                sub = self._empty_module()
                mod.add_module(item, sub)
            if not isinstance(sub, type(self)._module_base):
                return None
            mod = sub
        if walked is not None:
            walked[path] = mod
        return mod, field
    # --8<-- [end:parent_of]

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

    # --8<-- [start:print_readable]
    def print_readable(self, print_output: bool = True) -> str:
        """The code as a class, with the stack-trace comments torch.fx prints.

        Character for character torch.fx's text (with ``tensor`` for
        ``torch`` over a tensor model): a first line ``class <class
        name>(<package>.nn.Module):``, where the package is the first part of
        the framework module class's ``__module__``, then the verbose code
        (``python_code(root_module="self", verbose=True)``, leading newlines
        stripped), indented by 4 (``_addindent``). Each child that is itself a
        GraphModule follows, in ``named_children()`` order, as a nested class
        named after its attribute (``_readable_child``), one blank line
        before each, indented too. With ``print_output`` the text is printed;
        it is returned either way.
        """
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
    # --8<-- [end:print_readable]

    # -- the submodule API ------------------------------------------------
    def add_submodule(self, target: str, m: Any) -> bool:
        """Install ``m`` at the dotted path ``target``; False if a non-module is in the way."""
        parent = self._parent_of(target)
        if parent is None:
            return False
        parent[0].add_module(parent[1], m)
        return True

    # --8<-- [start:delete_submodule]
    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False if there is none.

        As torch.fx: the atoms before the last are followed from ``self``;
        a missing one (``hasattr``), or one that is not a module of this
        framework (``type(self)._module_base``), gives False. The last atom
        must name a registered submodule of that parent (a key of its
        ``_modules``), not a parameter, buffer or plain attribute, else
        False. Otherwise it is removed with ``delattr`` and the answer is
        True. Nothing is removed when the answer is False.
        """
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
    # --8<-- [end:delete_submodule]

    # --8<-- [start:delete_unused]
    def delete_all_unused_submodules(self) -> None:
        """Delete every submodule that no ``call_module`` or ``get_attr`` node reaches.

        As torch.fx: a node's target keeps every module on its path (``a``
        and ``a.b`` for ``a.b.c``) and the target itself; a ``call_module``
        node runs its whole submodule, so every module under it stays too (a
        target not installed yet, ``get_submodule`` raising AttributeError,
        is passed over). Every other named submodule goes, through
        ``delete_submodule``. Nodes of other ops keep nothing.
        """
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
    # --8<-- [end:delete_unused]

    # -- copying and pickling ---------------------------------------------
    def _state(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code")}

    # --8<-- [start:deepcopy]
    def __deepcopy__(self, memo: dict) -> GraphModule:
        """A GraphModule of the same kind with deep copies of the state and the graph.

        The copy gets a class of its own too: ``_instance_class`` of the
        shared class (``type(self).__mro__[1]``, not this instance's own) and
        the framework base, made with the base's ``__new__``. It goes into
        ``memo`` under ``id(self)`` before anything is copied (so a cycle back
        to this module finds the copy), gets ``copy.deepcopy`` of
        ``self._state()`` (the ``__dict__`` without graph and code), the
        class name of this one (``__name__`` and ``__qualname__``), and a deep
        copy of the graph, through the same ``memo``, installed with
        ``result.graph = graph``: so a subclass's own ``recompile`` runs. When
        ``recompile`` is GraphModule's own, the copy may instead set
        ``_graph``, its ``owning_module``, and ``recompile(reuse=<this
        class's forward>)`` (speed only: the same code is not compiled twice).
        """
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
    # --8<-- [end:deepcopy]

    def __copy__(self) -> GraphModule:
        cls = type(self).__mro__[1]
        result = type(self)._module_base.__new__(_instance_class(cls, type(self)._module_base))
        result.__dict__.update(self._state())
        type(result).__name__ = type(result).__qualname__ = type(self).__name__
        result.graph = self._graph
        return result

    # --8<-- [start:pickle]
    def __reduce__(self) -> tuple:
        """How pickle rebuilds this module: ``(_rebuild_graph_module, arguments)``.

        The instance's own class is made at run time and has no importable
        name, so the arguments are what can be pickled: the logic class
        (GraphModule or a user subclass: walking the shared class's
        ``__mro__``, the first class that does not itself define
        ``_module_base``; the shared class is ``type(self).__mro__[1]``), the
        framework base (``type(self)._module_base``), ``self._state()``, the
        graph, and the class name, in that order.
        """
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
    """Unpickle a GraphModule: a new instance with its own class, state, name and code.

    The instance is ``base.__new__`` of ``_instance_class(logic, base)`` (no
    ``__init__``: nothing is copied from a root); its ``__dict__`` takes
    ``state``; its class gets ``__name__`` and ``__qualname__``
    ``class_name``; last, ``gm.graph = graph`` installs the graph and
    recompiles (the code is generated again, not pickled).
    """
    gm = base.__new__(_instance_class(logic, base))
    gm.__dict__.update(state)
    type(gm).__name__ = type(gm).__qualname__ = class_name
    gm.graph = graph
    return gm
# --8<-- [end:pickle]


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
