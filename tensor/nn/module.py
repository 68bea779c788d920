"""Module: the container that owns parameters, buffers and submodules.

A Module keeps three ordered dictionaries (``_parameters``, ``_buffers`` and
``_modules``); ``__setattr__`` sorts each assigned value into the right one,
so ``self.fc = Linear(2, 3)`` registers a child and ``self.w = Parameter(...)``
registers a parameter. Every walk over the tree (``named_modules``,
``named_parameters``, ``state_dict``) follows those dictionaries in insertion
order, which is what gives dotted names such as ``layer1.0.conv1.weight``.
The behaviour, and the text of ``repr``, follow torch.nn.Module.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from .._tensor import Tensor
from .parameter import Parameter

_hook_ids = itertools.count()


class RemovableHandle:
    """Returned by the ``register_*_hook`` methods; ``remove()`` unregisters the hook."""

    def __init__(self, *hook_dicts: dict) -> None:
        self.id = next(_hook_ids)
        self._hook_dicts = hook_dicts

    def remove(self) -> None:
        for hooks in self._hook_dicts:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (the first follows a ``(name): `` prefix)."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return "\n".join([first] + [pad + line for line in rest])


def _as_array(value: Any) -> np.ndarray:
    """The NumPy data of a state_dict value (a tensor.Tensor, array or array-like)."""
    if isinstance(value, Tensor):
        return value._array
    return np.asarray(value)


class Module:
    """Base class of every layer and model; subclasses define ``forward``."""

    training: bool

    def __init__(self) -> None:
        # Bypass our own __setattr__: these are the dictionaries it fills.
        set_ = super().__setattr__
        set_("training", True)
        set_("_parameters", OrderedDict())
        set_("_buffers", OrderedDict())
        set_("_non_persistent_buffers_set", set())
        set_("_modules", OrderedDict())
        set_("_forward_hooks", OrderedDict())
        set_("_forward_hooks_with_kwargs", OrderedDict())
        set_("_forward_pre_hooks", OrderedDict())
        set_("_forward_pre_hooks_with_kwargs", OrderedDict())

    # --8<-- [start:forward]
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; every subclass defines it (torch raises the same error)."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        """Run the pre-hooks, ``forward``, then the forward hooks."""
        if not (self._forward_pre_hooks or self._forward_hooks):
            return self.forward(*args, **kwargs)  # the common case: no hooks at all
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        output = self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        return output

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` between the hooks: call the module, not ``forward``, so hooks run."""
        return self._call_impl(*args, **kwargs)

    # --8<-- [end:forward]

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward`` and may return new args."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward`` and may replace the output."""
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    # ---------------------------------------------------------------- registration

    def _check_new_name(self, name: Any, kind: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a Parameter under ``name`` (what assigning one to ``self.name`` does)."""
        self._check_new_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(tensor.nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add state that is no parameter (running statistics); ``persistent``: in state_dict."""
        self._check_new_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(tensor.Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a submodule under ``name`` (for names that are not identifiers, like ``"0"``)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_new_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        self.add_module(name, module)

    # ---------------------------------------------------------------- attributes

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails. Read __dict__ directly so that a
        # half-built object (during unpickling or deepcopy) does not recurse.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(tensor.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            self._modules[name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(tensor.nn.Module or None expected)"
                )
            d["_modules"][name] = None
        elif "_buffers" in d and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(tensor.Tensor or None expected)"
                )
            d["_buffers"][name] = value
        else:
            super().__setattr__(name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from every store but ``keep`` (a name lives in one place)."""
        self.__dict__.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                self.__dict__[store].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name: str) -> None:
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        super().__delattr__(name)

    def __dir__(self) -> list[str]:
        names = set(super().__dir__())
        for store in ("_parameters", "_buffers", "_modules"):
            names.update(self.__dict__.get(store, {}))
        return sorted(n for n in names if not n[:1].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ---------------------------------------------------------------- traversal

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Self, then every descendant depth first, each under its dotted name."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            child_prefix = f"{prefix}.{name}" if prefix else name
            yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """Self and every descendant, each once (``named_modules`` without the names)."""
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct submodules, each once, under their attribute names."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        """The direct submodules, each once."""
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, store: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        seen = set()
        if recurse:
            owners = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            owners = [(prefix, self)]
        for owner_prefix, owner in owners:
            for name, value in owner.__dict__[store].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{owner_prefix}.{name}" if owner_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """Every parameter with its dotted name (``linear.weight``), each once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter of this module (and its descendants when ``recurse``), each once."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """Every buffer with its dotted name (``bn.running_mean``), each once."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Every buffer of this module (and its descendants when ``recurse``), each once."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def get_submodule(self, target: str) -> Module:
        """The module at dotted path ``target`` ("" is self)."""
        module = self
        if target == "":
            return module
        for atom in target.split("."):
            if atom not in module.__dict__["_modules"]:
                raise AttributeError(f"{module._get_name()} has no attribute `{atom}`")
            module = module._modules[atom]
            if not isinstance(module, Module):
                raise AttributeError(f"`{atom}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._parameters:
            raise AttributeError(f"{module._get_name()} has no parameter `{name}`")
        return module._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._buffers:
            raise AttributeError(f"{module._get_name()} has no buffer `{name}`")
        return module._buffers[name]

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---------------------------------------------------------------- modes

    def train(self, mode: bool = True) -> Module:
        """Set training mode here and below: Dropout and BatchNorm behave differently in it."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``: inference behaviour for Dropout and BatchNorm."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    # ---------------------------------------------------------------- state dict

    def state_dict(
        self, *, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name; values share memory."""
        if destination is None:
            destination = OrderedDict()
        for name, param in self._parameters.items():
            if param is not None:
                # Like torch's detach(): a plain tensor sharing the parameter's memory.
                value = param if keep_vars else Tensor._from_array(param._array)
                destination[prefix + name] = value
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars
                )
        return destination

    def _local_state(self) -> dict[str, Tensor]:
        state = {k: v for k, v in self._parameters.items() if v is not None}
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                state[name] = buf
        return state

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy values into the parameters and buffers in place (``assign`` rebinds)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict).__name__}."
            )
        missing, errors = [], []
        expected = set()
        # Without de-duplication, like state_dict: a shared module appears under each name.
        for prefix, module in self.named_modules(remove_duplicate=False):
            for name, target in module._local_state().items():
                key = f"{prefix}.{name}" if prefix else name
                expected.add(key)
                if key not in state_dict:
                    missing.append(key)
                    continue
                source = _as_array(state_dict[key])
                if source.shape != target._array.shape:
                    errors.append(
                        f"size mismatch for {key}: copying a param with shape "
                        f"{_size_repr(source.shape)} from checkpoint, the shape in current "
                        f"model is {_size_repr(target._array.shape)}."
                    )
                    continue
                if assign:
                    value = Tensor._from_array(np.array(source, dtype=target._array.dtype))
                    if isinstance(target, Parameter):
                        value = Parameter(value, requires_grad=target.requires_grad)
                    setattr(module, name, value)
                else:
                    np.copyto(target._array, source, casting="unsafe")
        unexpected = [key for key in state_dict if key not in expected]
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            details = "\n\t".join(errors)
            raise RuntimeError(
                f"Error(s) in loading state_dict for {self._get_name()}:\n\t{details}"
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---------------------------------------------------------------- repr

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside the parentheses of ``repr`` before the children."""
        return ""

    def __repr__(self) -> str:
        """torch's module tree: ``extra_repr`` first, then each child indented."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): {_addindent(repr(module), 2)}" for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        if not lines:
            return f"{self._get_name()}()"
        if len(extra_lines) == 1 and not child_lines:
            return f"{self._get_name()}({extra_lines[0]})"
        body = "\n  ".join(lines)
        return f"{self._get_name()}(\n  {body}\n)"


def _size_repr(shape: tuple[int, ...]) -> str:
    return f"tensor.Size([{', '.join(str(s) for s in shape)}])"
