"""Tracer: run a module on Proxies and keep the Graph they record.

``Tracer().trace(root)`` makes one ``placeholder`` per parameter of
``root.forward``, calls ``forward`` with Proxies in place of tensors, and
records what happens: submodule calls (``call_module`` for leaves, traced
through otherwise), parameter and buffer reads (``get_attr``), and everything
the Proxies record themselves. Each step is a method, so a subclass can
change one decision (which modules are leaves, how a constant is stored)
without rewriting the rest.
"""

from __future__ import annotations

import builtins
import inspect
import math
import types
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from itertools import count
from types import ModuleType
from typing import Any

from ._framework import Framework, framework_of, framework_of_function, loaded_frameworks
from .graph import Graph
from .graph_module import GraphModule
from .node import PLAIN_CONSTANTS, Argument, Node, map_aggregate, register_side_effect
from .proxy import Proxy, TracerBase, find_proxy, user_location
from .wrapping import _wrapped_fns_to_patch

_HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_NEVER_TENSORS = PLAIN_CONSTANTS | {tuple, list, dict, set, OrderedDict}


# --8<-- [start:asserts]
@register_side_effect
def _assert(condition: Any, message: str) -> None:
    """Checks, at run time, a value that ``concrete_args`` fixed during the trace.

    Given a Proxy (a GraphModule's code traced again) it records itself, as
    ``torch._assert`` does through ``__torch_function__``: the retrace keeps the check.
    """
    if isinstance(condition, Proxy):
        return condition.tracer.create_proxy("call_function", _assert, (condition, message), {})
    if not condition:
        raise AssertionError(message)


@register_side_effect
def _assert_is_none(value: Any, message: str) -> None:
    """Checks, at run time, that an argument fixed to ``None`` is still ``None``
    (recorded again, like ``_assert``, when a retrace passes a Proxy)."""
    if isinstance(value, Proxy):
        return value.tracer.create_proxy("call_function", _assert_is_none, (value, message), {})
    if value is not None:
        raise AssertionError(message)
# --8<-- [end:asserts]


# --8<-- [start:patcher]
class _Patcher:
    """Sets attributes (or dict entries) for the length of a trace, then puts
    every original back, in reverse order, even when the trace raises."""

    def __init__(self) -> None:
        self._undo: list[Callable[[], None]] = []

    def __enter__(self) -> _Patcher:
        return self

    def __exit__(self, *exc: object) -> None:
        while self._undo:
            self._undo.pop()()

    def patch_attr(self, owner: Any, name: str, value: Any) -> None:
        """``setattr(owner, name, value)`` now; the undo goes on ``self._undo``.

        Whether ``name`` was in ``vars(owner)`` (the owner's own dict, not
        inherited) is read before the change. The undo deletes an attribute
        that was not there (so the inherited one shows again) and sets back
        the very object ``vars(owner)`` held otherwise (a descriptor stays a
        descriptor). ``__exit__`` runs the undos last first.
        """
        missing = name not in vars(owner)
        original = vars(owner).get(name)
        setattr(owner, name, value)
        self._undo.append(
            (lambda: delattr(owner, name)) if missing else (lambda: setattr(owner, name, original))
        )

    def patch_dict(self, d: dict, name: str, value: Any) -> None:
        """``d[name] = value`` now; the undo goes on ``self._undo``.

        The undo removes a key that was missing before (``pop(name, None)``:
        no error if someone removed it meanwhile) and puts the original value
        back otherwise, even when that value was None.
        """
        missing = name not in d
        original = d.get(name)
        d[name] = value

        def undo() -> None:
            if missing:
                d.pop(name, None)
            else:
                d[name] = original

        self._undo.append(undo)
# --8<-- [end:patcher]


# --8<-- [start:recording]
def _recording(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, but recorded as one node when a Proxy is among its arguments.

    The answer takes any positional and keyword arguments. When
    ``find_proxy(args, kwargs)`` finds a Proxy, that Proxy's tracer records
    ``create_proxy("call_function", fn, args, kwargs)``, the new node's
    ``meta["is_wrapped"]`` is set to True (code generation then writes a
    ``wrap`` line, so a retrace keeps the call one node) and the Proxy is
    the answer. Without a Proxy it is ``fn(*args, **kwargs)``. The answer's
    ``__wrapped__`` is ``fn``, so ``inspect.unwrap`` finds the original.
    """

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = find_proxy(args, kwargs)
        if proxy is not None:
            result = proxy.tracer.create_proxy("call_function", fn, args, kwargs)
            # The generated code registers the function again (a `wrap` line above
            # forward), so that tracing the GraphModule keeps it one node, as torch.fx.
            result.node.meta["is_wrapped"] = True
            return result
        return fn(*args, **kwargs)

    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped
# --8<-- [end:recording]


# --8<-- [start:tracer_class]
class Tracer(TracerBase):
    """Turns a module or a function into a Graph by running it on Proxies.

    Override a hook to change one decision:

    - ``is_leaf_module(m, qualname)``: record ``m(...)`` as one ``call_module``?
    - ``call_module(m, forward, args, kwargs)``: what to do at a submodule call
    - ``getattr(attr, attr_val, parameter_proxy_cache)``: a module attribute read
    - ``create_args_for_root(root_fn, is_module, concrete_args)``: the inputs
    - ``create_arg(a)``: how a value is stored in a node's arguments
    - ``create_proxy`` / ``create_node``: every recorded operation
    """

    # torch.fx's default: a buffer read inside forward stays a tensor until an
    # operation uses it; create_arg then records a get_attr at each use.
    proxy_buffer_attributes: bool = False

    # --8<-- [start:tracer_init]
    def __init__(self, autowrap_modules: tuple[ModuleType, ...] = (math,),
                 autowrap_functions: tuple[Callable[..., Any], ...] = ()) -> None:
        """Remember which functions a trace records whole without ``wrap``.

        ``self._autowrap_function_ids`` is the set of the ``id`` of every
        public (its name does not start with ``_``) callable value in
        ``vars(m)`` of each module ``m`` of ``autowrap_modules``, and of each
        function of ``autowrap_functions``. ``self._autowrap_search`` is
        ``autowrap_modules`` as a list (their globals are scanned during a
        trace); ``self.submodule_paths`` is None until a trace sets it. The
        same set and list as torch.fx.Tracer's.
        """
        super().__init__()
        # Functions recorded as leaves without `wrap`, when a traced forward
        # calls them through its globals (math.sqrt(x.size(0)) ...).
        self._autowrap_function_ids: set[int] = {
            id(value)
            for module in autowrap_modules
            for name, value in vars(module).items()
            if not name.startswith("_") and callable(value)
        }
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        # Modules whose own functions are patched too, so `math.sqrt(n)` records.
        self._autowrap_search: list[ModuleType] = list(autowrap_modules)
        self.submodule_paths: dict[Any, str] | None = None
    # --8<-- [end:tracer_init]

    # --8<-- [start:trace]
    def trace(self, root: Any, concrete_args: dict[str, Any] | None = None) -> Graph:
        """Run ``root`` (a module or a function) on Proxies and return the Graph.

        A module root (its framework's ``is_module``) is checked first
        (``framework.check_traced_through(root, "")``), becomes ``self.root``,
        and its class's ``forward`` is traced (``self`` comes from
        ``create_args_for_root``). A function's framework is
        ``framework_of_function(root)``; ``self.root`` is then an empty module
        of that framework (``module_class()``). The tracer keeps
        ``self.framework``, a new ``self.graph``, ``self.submodule_paths``
        (each module of the root mapped to its dotted path, from
        ``named_modules()``), ``self.tensor_attrs`` (an empty dict, filled by
        ``_collect_tensor_attrs()``) and ``self._autowrap_visited`` (an empty
        set).

        ``create_args_for_root`` gives the function to call and its
        arguments (placeholders, or concrete values). The call runs inside a
        ``_Patcher``, which puts every original back when the trace ends,
        even when it raises: ``_patch_modules`` with a fresh dict as the
        cache of parameter Proxies, then ``_patch_wrapped_functions`` with
        the globals of the function being traced. Its result, through
        ``create_arg``, is the argument of the ``output`` node, typed by the
        function's ``return`` annotation (if it has one). Afterwards
        ``submodule_paths`` is None again (``path_of_module`` then searches).
        """
        framework = framework_of(root)
        is_module = framework.is_module(root)
        if is_module:
            framework.check_traced_through(root, "")
            self.root = root
            fn = type(root).forward
        else:
            framework = framework_of_function(root)
            self.root = framework.module_class()
            fn = root
        self.framework: Framework = framework
        self.graph = Graph()
        self.submodule_paths = {mod: name for name, mod in self.root.named_modules()}
        self.tensor_attrs: dict[int, tuple[Any, str]] = {}
        self._autowrap_visited: set[int] = set()
        self._collect_tensor_attrs()

        fn_globals = fn.__globals__
        return_type = fn.__annotations__.get("return")
        fn, args = self.create_args_for_root(fn, is_module, concrete_args)
        parameter_proxy_cache: dict[str, Proxy] = {}

        with _Patcher() as patcher:
            self._patch_modules(patcher, parameter_proxy_cache)
            self._patch_wrapped_functions(patcher, fn_globals)
            result = fn(*args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=return_type)
        self.submodule_paths = None
        return self.graph
    # --8<-- [end:trace]

    # --8<-- [start:collect_tensor_attrs]
    def _collect_tensor_attrs(self) -> None:
        """Remember every plain tensor attribute of the root, by identity.

        For each module of ``self.submodule_paths`` (module -> dotted path,
        ``""`` for the root), in order, each entry of its own ``vars`` whose
        value is a tensor of a loaded framework (``loaded_frameworks()``,
        ``is_tensor``) is stored as ``self.tensor_attrs[id(value)] = (value,
        path)``, the path being ``<module path>.<name>`` (just the name on the
        root). A tensor found at several paths keeps the last one met, as in
        torch.fx. Values of the exact types of ``_NEVER_TENSORS`` (flags,
        numbers, the module's own dicts) are skipped without asking (speed
        only).
        """
        frameworks = loaded_frameworks()
        for module, prefix in self.submodule_paths.items():  # every module, once
            for name, value in vars(module).items():
                # Most attributes are flags, numbers and the module's own dicts:
                # values of those exact types are never tensors, skip the question.
                if type(value) in _NEVER_TENSORS:
                    continue
                if any(fw.is_tensor(value) for fw in frameworks):
                    qualname = f"{prefix}.{name}" if prefix else name
                    self.tensor_attrs[id(value)] = (value, qualname)
    # --8<-- [end:collect_tensor_attrs]

    def _patch_modules(self, patcher: _Patcher, cache: dict[str, Proxy]) -> None:
        """Route attribute reads and calls of every module class through our hooks.

        For each loaded framework, its ``module_class`` gets, through
        ``patcher.patch_attr`` (undone when the trace ends):

        - a ``__getattr__`` that asks the original ``__getattr__`` for the
          value, then hands it to ``self.getattr(attr, value, cache)``, whose
          answer is what ``forward`` sees;
        - a ``__call__`` that first lets ``_patch_autowrap`` patch the
          globals of the module's own ``forward`` (none when it has no
          ``forward`` with ``__globals__``), then answers
          ``self.call_module(module, forward, args, kwargs)``, where that
          ``forward`` calls the *original* ``__call__`` of the module with
          the arguments it is given.

        Each framework keeps its own originals (bind them per iteration).
        """
        tracer = self
        for framework in loaded_frameworks():
            module_class = framework.module_class
            original_getattr = module_class.__getattr__
            original_call = module_class.__call__

            def module_getattr(mod: Any, attr: str, _orig: Callable = original_getattr) -> Any:
                return tracer.getattr(attr, _orig(mod, attr), cache)

            def module_call(mod: Any, *args: Any, _orig: Callable = original_call,
                            **kwargs: Any) -> Any:
                def forward(*args: Any, **kwargs: Any) -> Any:
                    return _orig(mod, *args, **kwargs)

                forward_globals = getattr(getattr(mod, "forward", None), "__globals__", {})
                tracer._patch_autowrap(patcher, forward_globals)
                return tracer.call_module(mod, forward, args, kwargs)

            patcher.patch_attr(module_class, "__getattr__", module_getattr)
            patcher.patch_attr(module_class, "__call__", module_call)

    # --8<-- [start:wrapped_functions]
    def _patch_wrapped_functions(self, patcher: _Patcher, fn_globals: dict[str, Any]) -> None:
        """Patch every wrapped and autowrapped function for this trace.

        The registry is ``minifx.wrap``'s (``_wrapped_fns_to_patch``) merged
        with the root's framework's own (``self.framework.wrapped_functions()``,
        torch.fx.wrap's for a torch root), keyed the same way, so that each
        (globals, name) is patched once. For each entry the function is the
        globals' value of that name, else the builtin of that name (``len``);
        neither is a NameError ``minifx.wrap('<name>'): no function of that
        name to wrap``. The globals' entry becomes ``_recording(function)``
        through ``patcher.patch_dict``. Then ``_patch_autowrap`` scans
        ``fn_globals`` and the ``vars`` of each module of
        ``self._autowrap_search``.
        """
        # minifx.wrap's registry, and the root's library's own (torch.fx.wrap's for a
        # torch root), each function once: patched twice, it would record its wrapper.
        registry = {**_wrapped_fns_to_patch, **self.framework.wrapped_functions()}
        for (_, name), module_globals in registry.items():
            original = module_globals.get(name, getattr(builtins, name, None))
            if original is None:
                raise NameError(f"minifx.wrap('{name}'): no function of that name to wrap")
            patcher.patch_dict(module_globals, name, _recording(original))
        self._patch_autowrap(patcher, fn_globals)
        for module in self._autowrap_search:
            self._patch_autowrap(patcher, vars(module))

    def _patch_autowrap(self, patcher: _Patcher, module_globals: dict[str, Any]) -> None:
        """Record the autowrapped functions that ``module_globals`` names, as torch.fx.

        Every global whose name does not start with ``_`` and whose value's
        ``id`` is in ``self._autowrap_function_ids`` becomes
        ``_recording(value)``, through ``patcher.patch_dict``. Each globals
        dict is scanned once per trace (not at every module call): its
        ``id`` goes into ``self._autowrap_visited``, and a dict whose id is
        there already is left alone.
        """
        visited = self._autowrap_visited
        if id(module_globals) in visited:
            return
        visited.add(id(module_globals))
        for name, value in list(module_globals.items()):
            if not name.startswith("_") and id(value) in self._autowrap_function_ids:
                patcher.patch_dict(module_globals, name, _recording(value))
    # --8<-- [end:wrapped_functions]

    # --8<-- [start:hooks]
    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        """Built-in ``nn`` modules are leaves (asked of their framework)."""
        return framework_of(m).is_leaf_module(m, module_qualified_name)
    # --8<-- [end:hooks]

    # --8<-- [start:hook_exercises]
    def path_of_module(self, mod: Any) -> str:
        """The qualified name of ``mod`` inside the root (``"layer1.conv"``)."""
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(mod)
            if path is not None:
                return path
        for name, candidate in self.root.named_modules():
            if candidate is mod:
                return name
        raise NameError(
            f"module {type(mod).__name__} is not installed as a submodule of the traced "
            f"{type(self.root).__name__} (called at {user_location()}); assign it to an "
            "attribute of the root or of one of its submodules"
        )

    def call_module(self, m: Any, forward: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> Any:
        """A submodule call: one ``call_module`` node for a leaf, else trace into it."""
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            framework_of(m).check_traced_through(m, module_qualified_name)
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """``self.<attr>`` inside forward: parameters (and buffers) become ``get_attr``.

        A parameter of the root (found by identity in
        ``self.root.named_parameters()``) gives the Proxy of one ``get_attr``
        node named by its path; ``parameter_proxy_cache`` maps that path to
        its Proxy, so a second read gives the same Proxy and no new node.
        With ``self.proxy_buffer_attributes``, any tensor found the same way
        among ``self.root.named_buffers()`` does too (``_proxy_for_attr``
        does the search and the caching). Any other value, a tensor that is
        not the root's included, comes back as it is.
        """
        framework = framework_of(attr_val)
        if framework.is_parameter(attr_val):
            found = self._proxy_for_attr(attr_val, self.root.named_parameters(),
                                         parameter_proxy_cache)
            if found is not None:
                return found
        if self.proxy_buffer_attributes and framework.is_tensor(attr_val):
            found = self._proxy_for_attr(attr_val, self.root.named_buffers(),
                                         parameter_proxy_cache)
            if found is not None:
                return found
        return attr_val
    # --8<-- [end:hook_exercises]

    # --8<-- [start:hooks_rest]
    def _proxy_for_attr(self, attr_val: Any, named: Iterator[tuple[str, Any]],
                        cache: dict[str, Any]) -> Proxy | None:
        """The get_attr Proxy of ``attr_val`` if it is one of the ``(name, value)`` pairs.

        The first pair whose value *is* ``attr_val`` (identity, not ``==``)
        names it: the answer is ``cache[name]``, made on the first read with
        ``self.create_proxy("get_attr", name, (), {})`` and kept there, so a
        second read records no new node. None when no pair holds it.
        """
        for name, candidate in named:
            if candidate is attr_val:
                if name not in cache:
                    cache[name] = self.create_proxy("get_attr", name, (), {})
                return cache[name]
        return None
    # --8<-- [end:hooks_rest]

    # --8<-- [start:tracer_create_arg]
    def create_arg(self, a: Any) -> Argument:
        """Parameters, buffers and submodules of the root become ``get_attr`` nodes;
        other tensors become constants stored on the root as ``_tensor_constant<i>``.

        A Proxy gives its node, a plain constant (``PLAIN_CONSTANTS``) itself;
        containers (tuple, list, dict, slice) and Nodes are left to
        ``TracerBase.create_arg``. Otherwise the value's framework
        (``framework_of``) tells what it is, and each is found by identity
        (``is``) in the root:

        - a parameter: a ``get_attr`` node of its name in
          ``self.root.named_parameters()``; one that is not there is a
          ``NameError``: ``parameter is not a member of this module``;
        - another tensor: a ``get_attr`` node of its name in
          ``self.root.named_buffers()``; else ``self._tensor_constant(a)``
          stores it (once per tensor) and reads it;
        - a module: a ``get_attr`` node of its path in
          ``self.root.named_modules()``; else a ``NameError``: ``module is not
          installed as a submodule``.

        Each get_attr node is made with ``self.create_node`` (no Proxy).
        Anything else goes to ``TracerBase.create_arg``.
        """
        if isinstance(a, Proxy):  # the common case, first
            return a.node
        if type(a) in PLAIN_CONSTANTS:
            return a
        if isinstance(a, (tuple, list, dict, slice, Node)):
            return super().create_arg(a)  # no framework to ask: skip the lookup
        framework = framework_of(a)
        if framework.is_parameter(a):
            for name, param in self.root.named_parameters():
                if a is param:
                    return self.create_node("get_attr", name, (), {})
            raise NameError(f"parameter is not a member of this module (at {user_location()})")
        if framework.is_tensor(a):
            for name, buffer in self.root.named_buffers():
                if a is buffer:
                    return self.create_node("get_attr", name, (), {})
            return self._tensor_constant(a)
        if framework.is_module(a):
            for name, module in self.root.named_modules():
                if a is module:
                    return self.create_node("get_attr", name, (), {})
            raise NameError(f"module is not installed as a submodule (at {user_location()})")
        return super().create_arg(a)
    # --8<-- [end:tracer_create_arg]

    # --8<-- [start:tensor_constant]
    def _tensor_constant(self, value: Any) -> Node:
        """A ``get_attr`` node for a tensor that is no attribute of the root yet, or is one.

        ``self.tensor_attrs`` maps ``id(value)`` to ``(value, path)``: when the
        entry holds this very value, its path is used. Otherwise the value
        becomes a new attribute of ``self.root`` named ``_tensor_constant<i>``
        with the first ``i`` from 0 whose name the root does not have
        (``hasattr``), and is remembered in ``self.tensor_attrs``; a later use
        of the same tensor then reads the same attribute. The answer is
        ``self.create_node("get_attr", path, (), {})``, a new node at each use.
        """
        known = self.tensor_attrs.get(id(value))
        if known is not None and known[0] is value:
            qualname = known[1]
        else:
            qualname = next(f"_tensor_constant{i}" for i in count()
                            if not hasattr(self.root, f"_tensor_constant{i}"))
            self.tensor_attrs[id(value)] = (value, qualname)
            setattr(self.root, qualname, value)
        return self.create_node("get_attr", qualname, (), {})
    # --8<-- [end:tensor_constant]

    # --8<-- [start:create_args_for_root]
    def create_args_for_root(self, root_fn: Callable[..., Any], is_module: bool,
                             concrete_args: dict[str, Any] | tuple | None = None,
                             ) -> tuple[Callable[..., Any], list[Any]]:
        """One placeholder per parameter of ``root_fn``, named after it.

        ``*args`` and ``**kwargs`` become one placeholder each (``*args`` is
        passed as a single value, so ``root_fn`` is rebuilt without the star);
        a parameter given in ``concrete_args`` is fixed to that value.
        """
        fn = inspect.unwrap(root_fn)
        code = fn.__code__
        total_args = code.co_argcount + code.co_kwonlyargcount
        names = iter(code.co_varnames)
        args: list[Any] = []
        skip = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip = 1
            next(names)
            args.append(self.root)
        signature = inspect.signature(fn)
        arg_names = [next(names) for _ in range(skip, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(
                    f"tracing expected {len(arg_names)} concrete arguments but got "
                    f"{len(concrete_args)}")
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._placeholder(n, concrete_args, signature) for n in arg_names)

        if code.co_kwonlyargcount > 0 or code.co_flags & _HAS_VARSTUFF:
            if code.co_flags & inspect.CO_VARARGS:
                args.append(self._placeholder("*" + next(names), concrete_args, signature))
            if code.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._placeholder("**" + next(names), concrete_args, signature))
            root_fn = _flatten_signature(root_fn, len(args))
        return root_fn, args

    def _placeholder(self, name: str, concrete_args: dict[str, Any] | None,
                     signature: inspect.Signature) -> Any:
        """One parameter's input: a placeholder Proxy, or a concrete_args value.

        A name in ``concrete_args`` goes to ``self._specialize(name, value,
        signature)``, whose answer is this one. Otherwise the answer is
        ``self.create_proxy("placeholder", name, default, {},
        type_expr=_annotation(signature, name))``: ``default`` is ``()`` for a
        star name (``*args``, ``**kwargs``) and for a parameter without a
        default, and ``(parameter.default,)`` for one with a default (None
        included), read from ``signature.parameters``.
        """
        if concrete_args is not None and name in concrete_args:
            return self._specialize(name, concrete_args[name], signature)
        if name.startswith("*"):
            default: tuple[Any, ...] = ()
        else:
            parameter = signature.parameters[name]
            empty = parameter.default is inspect.Parameter.empty
            default = () if empty else (parameter.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=_annotation(signature, name))

    # --8<-- [start:specialize]
    def _specialize(self, name: str, value: Any, signature: inspect.Signature) -> Any:
        """A ``concrete_args`` value: the code sees the value itself, and the graph
        keeps a placeholder (``b_1``) with a run-time check that the value is unchanged.

        The value is walked with ``map_aggregate``: each leaf gets one
        placeholder, named ``<name>_1``, ``<name>_2``... in order, whose args
        hold the parameter's default (``(default,)``) or are ``()`` when it has
        none. Then, with ``message`` = ``<name> has been specialized to have
        value <leaf> but got another value``:

        - a leaf whose exact type is a constant type (str, int, float, bool,
          complex, or one of a loaded framework's ``constant_types``) gets a
          ``call_function`` of ``self.framework.assert_function()`` on
          ``(placeholder == leaf, message)``;
        - a ``None`` leaf gets a ``call_function`` of ``_assert_is_none`` on
          ``(placeholder, message)``;
        - any other leaf cannot be checked: a ``UserWarning`` that starts
          ``Was not able to add assertion to guarantee correct input <name> to
          specialized function``.

        The answer is the value itself (each leaf unchanged), which the
        traced code then sees.
        """
        counter = count(1)
        parameter = signature.parameters[name]
        empty = parameter.default is inspect.Parameter.empty
        default = () if empty else (parameter.default,)
        constant_types = (str, int, float, bool, complex) + tuple(
            t for fw in loaded_frameworks() for t in fw.constant_types)

        def fix(x: Any) -> Any:
            out = self.create_proxy("placeholder", f"{name}_{next(counter)}", default, {})
            message = f"{name} has been specialized to have value {x} but got another value"
            if type(x) in constant_types:
                check = self.framework.assert_function()
                self.create_proxy("call_function", check, (out == x, message), {})
            elif x is None:
                self.create_proxy("call_function", _assert_is_none, (out, message), {})
            else:
                warnings.warn(
                    f"Was not able to add assertion to guarantee correct input {name} to "
                    "specialized function. It is up to the user to make sure that your "
                    "inputs match the inputs you specialized the function with.",
                    stacklevel=2,
                )
            return x

        return map_aggregate(value, fix)
    # --8<-- [end:specialize]
    # --8<-- [end:create_args_for_root]
# --8<-- [end:tracer_class]


def _annotation(signature: inspect.Signature, name: str) -> Any:
    parameter = signature.parameters.get(name)
    if parameter is None or parameter.annotation is inspect.Parameter.empty:
        return None
    return parameter.annotation


def _flatten_signature(fn: Callable[..., Any], nargs: int) -> Callable[..., Any]:
    """A copy of ``fn`` whose ``*args``/``**kwargs`` and keyword-only parameters are
    plain positional ones, so the tracer can pass one Proxy for each."""
    code = fn.__code__
    flat = code.replace(co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0,
                        co_flags=code.co_flags & ~_HAS_VARSTUFF)
    return types.FunctionType(flat, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


# --8<-- [start:symbolic_trace]
def symbolic_trace(root: Any, concrete_args: dict[str, Any] | None = None) -> Any:
    """Trace ``root`` and wrap the Graph in a GraphModule named after it.

    The same as ``GraphModule(root, Tracer().trace(root))``; the result's class
    is named after ``root``'s class (or function).
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if tracer.framework.is_module(root) else root.__name__
    return GraphModule(tracer.root, graph, name)
# --8<-- [end:symbolic_trace]
