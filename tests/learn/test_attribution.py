"""``check`` blames the exercise that has the bug, and no other.

On a workspace where every exercise is solved (the reference pasted over each
stub), one plausible bug is planted in one exercise at a time; ``check`` of
its chapter must then report that exercise, and only that one, as FAILED,
with the failing line's values. Each bug is a one-place edit of the
reference, so the table below fails loudly if the reference changes under it.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minifx.learn import check
from minifx.learn import workspace as ws
from minifx.learn.exercises import EXERCISES as ALL_EXERCISES
from minifx.learn.exercises import Exercise, chapter_exercises, find_exercise
from tests import HELPER_MODULES
from tests.learn.check_child import Server

ROOT = Path(__file__).resolve().parents[2]

CHAPTERS = ("ch00", "ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09",
            "ch10", "ch11", "ch12")

# exercise -> (text of the reference, what the bug puts in its place)
BUGS: dict[str, tuple[str, str]] = {
    "ch00.1": ("if issubclass(t, earlier):", "if issubclass(earlier, t):"),
    "ch00.2": ("_collect(item.values(), found)", "_collect(item, found)"),
    "ch00.3": ("t.__tensor_function__(public_func, types_tuple, args, kwargs)",
               "t.__tensor_function__(public_func, (t,), args, kwargs)"),
    "ch00.4": ("new_shape[-1] *= n", "new_shape[-1] = n"),
    "ch00.5": ("e / np.add.reduce(e, axis=dim, keepdims=True)",
               "e / np.add.reduce(e, axis=None, keepdims=True)"),
    "ch00.6": ("elif sa == 1:\n            out[i] = sb", "elif sa == 1:\n            out[i] = sa"),
    "ch00.7": ("rows = math.prod(a[:-1])", "rows = a[-2] if len(a) > 1 else 1"),
    "ch00.8": ("elif size >= 0:", "elif size > 0:"),
    "ch00.9": ("old_shape[d - 1] != 1 and old_strides[d - 1]", "old_strides[d - 1]"),
    "ch00.10": ("return flat, -low, strides", "return flat, low, strides"),
    "ch00.11": ("x = _block(a, pa, n, a_strides[-1], scratch)",
                "x = _block(a, pa, n, 1, scratch)"),
    "ch00.12": ("y = _block(b, pb + (k % shape[-1]) * b_strides[-1], n,",
                "y = _block(b, pb, n,"),
    "ch00.13": ("if op <= 1:\n                acc += v", "if op <= 1:\n                acc = v"),
    "ch00.14": ("types = tuple(_ordered_types(found)) or _tensor_types(args, kwargs)",
                "types = tuple(_ordered_types(found))"),
    "ch00.15": ("issubclass(t, (tuple, list))", "issubclass(t, tuple)"),
    "ch00.16": ("for value in (*args, *kwargs.values()):", "for value in args:"),
    "ch00.17": ("_collect(kwargs.values(), found)", "_collect(kwargs, found)"),
    "ch00.18": ("_subclass_dispatch_off -= 1", "_subclass_dispatch_off = 0"),
    "ch00.19": ("', '.join(listed[:-1])", "', '.join(listed)"),
    "ch00.20": ("step *= max(size, 1)", "step *= size"),
    "ch00.21": ("if size != 1:", "if size > 0:"),
    "ch00.22": ("tuple(b) not in ((w[0],), (1,), ())", "tuple(b) not in ((w[0],), ())"),
    "ch00.23": ("if (out - 1) * stride >= size + pad:", "if (out - 1) * stride >= size:"),
    "ch00.24": ("b = np.full(a.shape, b)", "pass"),
    "ch00.25": ("return np.array(a)", "return a"),
    "ch00.26": ("shifted = a - np.maximum.reduce(a, axis=dim, keepdims=True)", "shifted = a"),
    "ch00.27": ("out = out + b", "pass"),
    "ch01.1": ('default = f"(default={self._args[0]})" if self._args else ""', 'default = ""'),
    "ch01.2": ('return f"builtins.{name}"', "return name"),
    "ch01.3": ('qualname = name if name != "<lambda>" else "lambda_"', "qualname = name"),
    "ch01.4": ("if obj is ...:", "if False:"),
    "ch01.5": ('return f"({items},)" if len(arg) == 1 else f"({items})"',
               'return f"({items})"'),
    "ch01.6": ("self._prev: Node = self", "self._prev: Node = graph._root"),
    "ch01.7": ("x = copy_arg(x, found, node_map)", "x = x"),
    "ch01.8": ("old.users.pop(self, None)", "pass"),
    "ch02.1": ("if kind is tuple:\n            return tuple([self.create_arg(x) for x in a])",
               "if kind is tuple:\n            return a"),
    "ch02.2": ('return tracer.create_proxy("call_method", method, args, kwargs)',
               'return tracer.create_proxy("call_function", func, args, kwargs)'),
    "ch02.3": ('args.append(self._placeholder("**" + next(names)',
               'args.append(self._placeholder("*" + next(names)'),
    "ch02.4": ("if path is not None:\n                return path",
               "if path is not None:\n                return path.rpartition('.')[2]"),
    "ch02.5": ('self.create_proxy("call_module", module_qualified_name, args, kwargs)',
               'self.create_proxy("call_module", type(m).__name__, args, kwargs)'),
    "ch02.6": ("if framework.is_parameter(attr_val):", "if False:"),
    "ch02.7": ("return tracer.getattr(attr, _orig(mod, attr), cache)",
               "return _orig(mod, attr)"),
    "ch02.8": ("type_expr=return_type)", "type_expr=None)"),
    "ch02.9": ('create_proxy("call_function", _fn, (lhs, self), {})',
               'create_proxy("call_function", _fn, (self, lhs), {})'),
    "ch02.10": ("if type(x) in constant_types:", "if isinstance(x, constant_types):"),
    "ch02.11": ("for name, buffer in self.root.named_buffers():",
                "for name, buffer in ():"),
    "ch02.12": ("return found[0] if found else None", "return found[-1] if found else None"),
    "ch02.13": ("_wrapped_fns_to_patch[(id(caller.f_globals), name)] = caller.f_globals",
                "_wrapped_fns_to_patch[(id(frame.f_globals), name)] = frame.f_globals"),
    "ch02.14": ('result.node.meta["is_wrapped"] = True', "pass"),
    "ch02.15": ("missing = name not in vars(owner)", "missing = not hasattr(owner, name)"),
    "ch02.16": ("d.pop(name, None)", "d[name] = None"),
    "ch02.17": ("registry = {**_wrapped_fns_to_patch, **self.framework.wrapped_functions()}",
                "registry = dict(_wrapped_fns_to_patch)"),
    "ch02.18": ('if not name.startswith("_") and id(value) in self._autowrap_function_ids:',
                "if id(value) in self._autowrap_function_ids:"),
    "ch02.19": ('default: tuple[Any, ...] = ()', 'default: tuple[Any, ...] = (None,)'),
    "ch02.20": ("node = self.create_node(kind, target, args_, kwargs_, name, type_expr)",
                "node = self.create_node(kind, target, args_, kwargs_, name)"),
    "ch02.21": ('if name.startswith("__") and name.endswith("__"):', "if False:"),
    "ch02.22": ("if self._node is None:", "if True:"),
    "ch02.23": ("self.tensor_attrs[id(value)] = (value, qualname)",
                "self.tensor_attrs.setdefault(id(value), (value, qualname))"),
    "ch02.24": ("if known is not None and known[0] is value:", "if known is not None:"),
    "ch02.25": ("if name not in cache:", "if True:"),
    "ch02.26": ("return iter([self[i] for i in range(count)])",
                "return iter([self[i] for i in range(1, count + 1)])"),
    "ch02.27": ('if not name.startswith("_") and callable(value)', "if callable(value)"),
    "ch02.28": ("if self.record_stack_traces and not node.stack_trace:",
                "if self.record_stack_traces:"),
    "ch03.1": ("return [map_aggregate(x, fn) for x in a]",
               "return tuple(map_aggregate(x, fn) for x in a)"),
    "ch03.2": ("x._next, self._prev = self, x", "x._next = self"),
    "ch03.3": ("self._len += 1", "pass"),
    "ch03.4": ("return _InsertPoint(self, n.prepend)", "return _InsertPoint(self, n.append)"),
    "ch03.5": ("return self.inserting_before(self._root)",
               "return self.inserting_after(self._root)"),
    "ch03.6": ("map_arg(self._kwargs, swap))", "self._kwargs)"),
    "ch03.7": ("for user in list(self.users):", "for user in self.users:"),
    "ch03.8": ("to_erase._update_args_kwargs((), {})", "pass"),
    "ch03.9": ("for node in reversed(self.nodes):", "for node in self.nodes:"),
    "ch03.10": ("if arg not in seen:", "if arg._erased:"),
    "ch03.11": ("result.meta = copy.copy(node.meta)", "result.meta = node.meta"),
    "ch03.12": ("if node in val_map:\n                continue",
                "if node in val_map:\n                pass"),
    "ch03.13": ('"    " + node.format_node()', '"  " + node.format_node()'),
    "ch03.14": ("self._len = 0", "self._len = 1"),
    "ch03.15": ("cur = cur._next if forward else cur._prev",
                "cur = cur._next if forward else cur._next"),
    "ch03.16": ("op = op[2:-2]", "op = op[2:]"),
    "ch03.17": ('return bool(getattr(module, "_is_impure", False))', "return False"),
    "ch03.18": ("graph._insert = new_insert", "pass"),
    "ch03.19": ('self.create_node("output", "output", (result,), type_expr=type_expr)',
                'self.create_node("output", "output", result, type_expr=type_expr)'),
    "ch03.20": ("for node in reversed(self.nodes):\n            if node.op == \"output\"",
                "for node in self.nodes:\n            if node.op == \"output\""),
    "ch03.21": ('if node.op not in ("get_attr", "call_module"):',
                'if node.op != "get_attr":'),
    "ch03.22": ("index = {n: i for i, n in enumerate(self.nodes)}",
                "index = {n: i + 1 for i, n in enumerate(self.nodes)}"),
    "ch03.23": ("        node.meta = meta\n", "        node.meta = dict(meta)\n"),
    "ch03.24": ('more = ", ..." if len(self.nodes) > 3 else ""',
                'more = ", ..." if len(self.nodes) >= 3 else ""'),
    "ch03.25": ("widths = [max(len(r[i]) for r in [header, *rows])",
                "widths = [max(len(r[i]) for r in rows)"),
    "ch04.1": ("for node in reversed(graph.nodes):", "for node in graph.nodes:"),
    "ch04.2": ("return getattr(self, n.op)(n.target, args, kwargs)",
               "return getattr(Interpreter, n.op)(self, n.target, args, kwargs)"),
    "ch04.3": ('f"Node {n} referenced nonexistent value {n_arg}! Run',
               'f"Node {n_arg} referenced nonexistent value {n}! Run'),
    "ch04.4": ("kwargs = self.map_nodes_to_values(n.kwargs, n)", "kwargs = dict(n.kwargs)"),
    "ch04.5": ("if args:\n                return args[0]", "if False:\n                pass"),
    "ch04.6": ("del self.env[value]", "pass"),
    "ch04.7": ("{'.'.join(atoms[:i + 1])}", "{'.'.join(atoms[:i])}"),
    "ch04.8": ('n.meta["type"] = type(result)', 'n.meta["type"] = type(meta)'),
    "ch04.9": ("nonexistent target {e}\") from None", "nonexistent target {e}\")"),
    "ch04.10": ("return self.fetch_attr(target)", "return getattr(self.module, target)"),
    "ch04.11": ("return target(*args, **kwargs)", "return target(*args)"),
    "ch04.12": ("(*args_tail, **kwargs)", "(*args_tail)"),
    "ch04.13": ("return submod(*args, **kwargs)", "return submod.forward(*args, **kwargs)"),
    "ch04.14": ("if node.stack_trace:", "if False:"),
    "ch04.15": ("args_list.clear()", "pass"),
    "ch04.16": ("self.submodules = dict(module.named_modules())",
                "self.submodules = dict(module.named_children())"),
    "ch04.17": ("return args[0]", "return args"),
    "ch04.18": ('requires_grad = bool(getattr(result, "requires_grad", False))',
                "requires_grad = False"),
    "ch05.1": ("args[0] if args else inspect.Signature.empty", "inspect.Signature.empty"),
    "ch05.2": ('create_proxy("call_function", target, args, kwargs)',
               'create_proxy("call_function", target, args, {})'),
    "ch05.3": ("new_output.meta.update(old_output.meta)", "pass"),
    "ch05.4": ('return self.tracer.create_proxy("get_attr", target, args, kwargs)',
               "return self.fetch_attr(target)"),
    "ch05.5": ("return self.tracer.call_module(submod, submod.forward, args, kwargs)",
               "return submod(*args, **kwargs)"),
    "ch05.6": ("finally:\n            self.tracer.source_node = None",
               "finally:\n            pass"),
    "ch05.7": (' and target is source.target:', ':'),
    "ch06.1": ('return f"({self.spell(arg[0])},)"', 'return f"({self.spell(arg[0])})"'),
    "ch06.2": ('default = f" = {self.spell(node.args[0])}" if node.args else ""',
               'default = ""'),
    "ch06.3": ("self.wrapped.setdefault(fn)", "pass"),
    "ch06.4": ("self.format_args(node.args[1:], node.kwargs)",
               "self.format_args(node.args, node.kwargs)"),
    "ch06.5": ('f"{getattr_name}({result}, {_quote(elem)})"', 'f"{result}[{_quote(elem)}]"'),
    "ch06.6": ('candidate = "_" + candidate', "candidate = candidate"),
    "ch06.7": ("if not node.users:", "if False:"),
    "ch06.8": ('f" -> {spelled}" if spelled', 'f"->{spelled}" if spelled'),
    "ch06.9": ('if node.op not in ("placeholder", "output"):', 'if node.op != "output":'),
    "ch06.10": ("linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)",
                "pass"),
    "ch06.11": ("self._code = python_code.src", "self._code = python_code.src.strip()"),
    "ch06.12": ('return type(cls.__name__, (cls,), {"__module__": cls.__module__})',
                "return cls"),
    "ch06.13": ("format_target(self.root, node.target, self.getattr_name)",
                'format_target(self.root, node.target, "getattr")'),
    "ch06.14": ("self.format_args(node.args, node.kwargs)", "self.format_args(node.args, {})"),
    "ch06.15": ('f"{k} = {self.spell(v)}"', 'f"{k}={self.spell(v)}"'),
    "ch06.16": ('code = "".join(body).lstrip("\\n")', 'code = "".join(body)'),
    "ch06.17": ("if spelling in self.globals and self.globals[spelling] is not obj:",
                "if False:"),
    "ch06.18": ("name = package if package not in self.taken else "
                "self.namespace.create_name(package)", "name = package"),
    "ch06.19": ("value = (self.custom_builtins[name] if name in self.custom_builtins\n"
                "                     else getattr(_builtins, name))",
                "value = getattr(_builtins, name)"),
    "ch06.20": ('return "|".join(', 'return " | ".join('),
    "ch06.21": ('params.add(n.target.lstrip("*"))', "params.add(n.target)"),
    "ch06.22": ("if node_mod._resolve(package, rest) is not obj:", "if False:"),
    "ch06.23": ("bare, self.spell_builtin(bare))", "bare, bare)"),
    "ch06.24": ("if framework.is_module(value) or framework.is_tensor(value):",
                "if framework.is_module(value):"),
    "ch06.25": ("if framework.is_tensor(value) and not framework.is_parameter(value):",
                "if framework.is_tensor(value):"),
    "ch06.26": ('path, _, field = target.rpartition(".")',
                'path, _, field = target.partition(".")'),
    "ch06.27": ('p == node.target or p.startswith(node.target + ".")', "p == node.target"),
    "ch06.28": ('sorted(dict_targets, key=lambda t: t.count("."))', "dict_targets"),
    "ch06.29": ('parts = [""]', "parts = []"),
    "ch06.30": ("memo[id(self)] = result", "pass"),
    "ch06.31": ('used.update(".".join(path[:i]) for i in range(1, len(path) + 1))',
                "used.add(node.target)"),
    "ch06.32": ('if field not in getattr(mod, "_modules", {}):', "if not hasattr(mod, field):"),
    "ch06.33": ("type(self).__name__))", "\"GraphModule\"))"),
    "ch06.34": ("gm.__dict__.update(state)", "pass"),
    "ch07.1": ("fused_b = ((bias - mean) * scale + beta)", "fused_b = (bias * scale + beta)"),
    "ch07.2": ("if type(modules[current.target]) is not expected_type:",
               "if not isinstance(modules[current.target], expected_type):"),
    "ch07.3": ("setattr(modules[parent_name], name, new_module)", "pass"),
    "ch07.4": ("if len(layer_node.users) > 1:", "if len(layer_node.users) > 2:"),
    "ch07.5": ("if any(v is gn for v in nodes_map.values()):", "if False:"),
    "ch07.6": ("ok = type(pa) is type(ga) and pa == ga", "ok = pa == ga"),
    "ch07.7": ("if node in inside:\n            return False",
               "if node in inside:\n            continue"),
    "ch07.8": ("attempt = dict(nodes_map)", "attempt = nodes_map"),
    "ch07.9": ("replaced[old] = new", "pass"),
    "ch08.1": ("return (type(value).__name__, tuple(describe(v) for v in value))",
               "return tuple(describe(v) for v in value)"),
    "ch08.2": ("bound.apply_defaults()", "pass"),
    "ch08.3": ("if not _holds_tensor(v)", "if not _is_tensor(v)"),
    "ch08.4": ("if package not in library_packages():", "if False:"),
    "ch08.5": ("if key in bound:\n            return None", "if key in bound:\n            pass"),
    "ch08.6": ("args = (args[1], args[0], args[2])", "args = (args[0], args[1], args[2])"),
    "ch08.7": ('if bound.get("keepdim") is not True', 'if not bound.get("keepdim")'),
    "ch08.8": ("if condition != _BOOL:", "if False:"),
    "ch08.9": ("if reduction is not None:", "if False:"),
    "ch08.10": ("if full is not None and own != full:", "if False:"),
    "ch08.11": ("and all(u in group for u in a.users)):", "):"),
    "ch08.12": ("ops[:4]", "ops[:3]"),
    "ch08.13": ("if form.high is not None:", "if form.high:"),
    "ch08.14": ('out[i] = {local[members[-1]]}', 'out[i] = {local[members[0]]}'),
    "ch08.15": ("for n in reversed(members):", "for n in members:"),
    "ch08.16": ("                break\n", "\n"),
    "ch09.1": ('if module == "torch" and name == "segment_reduce":', "if False:"),
    "ch09.2": ('if func in _TENSOR_METHODS or getattr(func, "__name__", None) == "__get__":',
               "if func in _TENSOR_METHODS:"),
    "ch09.3": ("or type(hook).__name__", "or repr(hook)"),
    "ch09.4": ('where = f"submodule {qualname!r}" if qualname else "the root module"',
               'where = f"submodule {qualname!r}"'),
    "ch09.5": ("if obj is not None:", "if True:"),
    "ch09.6": ('target = getattr(target, "default", None)', "pass"),
    "ch09.7": ('qparams["axis"] = t.q_per_channel_axis()', "pass"),
    "ch09.8": ('path_text, sep, name = spec.rpartition(":")',
               'path_text, sep, name = spec.partition(":")'),
    "ch09.9": ("if any(size < 0 for size in shape):", "if False:"),
    "ch09.10": ('problem = output_difference(x, y, f"{where}[{i}]")',
                "problem = output_difference(x, y, where)"),
    "ch09.11": ('rows.append(Row(a[i], " " if same else "~", b[j], None if same else why))',
                'rows.append(Row(a[i], " ", b[j], None))'),
    "ch09.12": ('mark = row.mark if k == 0 else " "', "mark = row.mark"),
    "ch09.13": ("known.update(dict.fromkeys(whys))", "pass"),
    "ch09.14": ("elif our_error is not None:", "elif False:"),
    "ch10.1": ("middle = 0 if signed else (quant_min + quant_max + 1) // 2",
               "middle = 0 if signed else (quant_min + quant_max) // 2"),
    "ch10.2": ('self._signed = name != "quint8"', 'self._signed = name == "qint8"'),
    "ch10.3": ("return np.ones(shape, np.float32), np.zeros(shape, np.int64)",
               "return np.ones(shape, np.float32), np.ones(shape, np.int64)"),
    "ch10.4": ("if values.size == 0:\n            return",
               "if values.size == 0:\n            pass"),
    "ch10.5": ("if (new_lo, new_hi) != (self._min, self._max):", "if False:"),
    "ch10.6": ("float(self._max), self.dst_nbins", "float(self._max), 256"),
    "ch10.7": ("if name in self.module_name_qconfigs:", "if False:"),
    "ch10.8": ('return "binary" if two_tensors else "float"', 'return "binary"'),
    "ch10.9": ("self.count += 1", "pass"),
    "ch10.10": ("for arg in node.args[0][1:]:", "for arg in node.args[0][2:]:"),
    "ch10.11": ("weight_qconfigs[node.target] = qconfig", "pass"),
    "ch10.12": ('zp_name = _fresh_attr(gm, f"{prefix}_zero_point_")',
                'zp_name = _fresh_attr(gm, f"{prefix}_zero_point")'),
    "ch10.13": ("module = float_layers.setdefault(node.target, modules[node.target])",
                "module = modules[node.target]"),
    "ch10.14": ("with_relu if relu is not None else plain", "plain"),
    "ch10.15": ("node.replace_input_with(dq, dq.args[0])", "pass"),
    "ch11.1": ("n=limit, cutoff=0.7", "n=limit, cutoff=0.0"),
    "ch11.2": ("setattr(twin, name, values.tensor(value))", "setattr(twin, name, value)"),
    "ch11.3": ("if name in twin_settings or not hasattr(module, name):",
               "if name in twin_settings:"),
    "ch11.4": ("twin.train(module.training)", "pass"),
    "ch11.5": ("if not self._is_torch_tensor(value):", "if False:"),
    "ch11.6": ("self.hint(kind))", '"")'),
    "ch11.7": ("if passes_through(target) or not _uses_torch(target):",
               "if passes_through(target):"),
    "ch11.8": ("needed.append(dunder(name[1:]))", "pass"),
    "ch11.9": ("elif key not in defaults or defaults[key] != value:", "else:"),
    "ch11.10": ("return self.values.constant(value)", "return value"),
    "ch11.11": ("kwargs = map_aggregate(self.keywords(node, target),",
                "kwargs = map_aggregate(node.kwargs,"),
    "ch11.12": ("module = copy.deepcopy(GraphModule(root, graph))",
                "module = GraphModule(root, graph)"),
    "ch11.13": ("delattr(module, attribute)", "pass"),
    "ch12.1": ("if len(_modes) == 1:", "if len(_modes) >= 1:"),
    "ch12.2": ("if not _modes:", "if len(_modes) <= 1:"),
    "ch12.3": ("_push(mode)", "_modes.append(mode)"),
    "ch12.4": ("return self", "return None"),
    "ch12.5": ("_modes[-1] is not self", "_modes[0] is not self"),
    "ch12.6": ("if was:\n            _route(True)", "if True:\n            _route(True)"),
    "ch12.7": ('f"{prefix}{self.constants[prefix]}"', 'f"{prefix}{sum(self.constants.values())}"'),
    "ch12.8": ("type(value)([self.as_arg(v, func) for v in value])",
               "list([self.as_arg(v, func) for v in value])"),
    "ch12.9": ("self.bind(out, node)", "pass"),
    "ch12.10": ('graph.placeholder(f"arg{i}_1")', 'graph.placeholder(f"arg{i}")'),
    "ch12.11": ("return self._mode.from_tensor(obj)", "return obj"),
    "ch12.12": ("self._mode.from_tensor(a) if isinstance(a, Tensor) else a for a in args",
                "a for a in args"),
    "ch12.13": ("with self._mode:", "if True:"),
}

EXERCISES = [e for c in CHAPTERS for e in chapter_exercises(c)]


def test_every_exercise_of_the_chapters_has_a_bug():
    assert sorted(BUGS) == sorted(e.id for e in EXERCISES)


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """A workspace where the exercises of CHAPTERS were handed out and then solved."""
    workspace = tmp_path_factory.mktemp("attribution") / "ws"
    for chapter in CHAPTERS:
        ws.start(chapter, workspace)
    for exercise in EXERCISES:
        ws.set_function(workspace, exercise, ws.solution(exercise))
        assert ws.status(exercise, workspace) == "reference"
    return workspace


@pytest.fixture(scope="module")
def launch():
    """check's child, forked for each check from one process that imported torch, numba and
    pytest once (a new process would spend most of its time importing them)."""
    server = Server(ROOT)
    yield server
    server.close()


def _line(report: str, exercise: Exercise) -> str:
    head = f"{exercise.id}  {exercise.qualname}: {exercise.title}: "
    return next(line for line in report.splitlines() if line.startswith(head))


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.id)
def test_check_reports_the_planted_bug_under_its_exercise_only(solved, launch, exercise,
                                                               monkeypatch):
    # The numpy backend: a fresh copy of tensor would compile its numba kernels first.
    monkeypatch.setenv("TENSOR_BACKEND", "numpy")
    reference = ws.solution(exercise)
    old, new = BUGS[exercise.id]
    assert reference.count(old) == 1, f"{exercise.id}: the bug's place moved"
    ws.set_function(solved, exercise, reference.replace(old, new))
    try:
        passed, report = check.check(exercise.chapter, solved, launch=launch)
    finally:
        ws.set_function(solved, exercise, reference)
    assert not passed, report
    for other in chapter_exercises(exercise.chapter):
        verdict = _line(report, other)
        if other is exercise:
            assert "FAILED" in verdict, report
        else:
            assert verdict.split(": ")[-1].startswith("passed"), report
    assert f"not yet: {exercise.id} FAILED;" in report


def test_a_failing_assert_in_a_helper_module_shows_its_values(tmp_path):
    # tests/ch02/ch02_twins.py compares the traces; pytest rewrites test files by itself,
    # the helpers only when registered (tests/__init__.py), in check's child too.
    workspace = tmp_path / "ws"
    ws.start("ch01", workspace)
    for exercise in chapter_exercises("ch01"):
        ws.set_function(workspace, exercise, ws.solution(exercise))
    graph_str = find_exercise("ch03.13")
    buggy = ws.solution(graph_str).replace('"    " + node', '"  " + node')
    plan = {"steps": [{"label": "twins", "args": ["-m", "ch02", "tests/ch02/test_ch02_proxy.py"],
                       "swaps": [{"module": "minifx.graph", "qualname": graph_str.qualname,
                                  "source": buggy}]}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    env = {k: v for k, v in os.environ.items() if k != ws.ENV_VAR}
    env.update({ws.ENV_VAR: str(workspace), "TENSOR_BACKEND": "numpy"})
    done = subprocess.run([sys.executable, "-m", "tests.learn.check_child",
                           str(tmp_path / "plan.json"), str(tmp_path / "out.json")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    outcomes = json.loads((tmp_path / "out.json").read_text())["twins"]["outcomes"]
    in_twins = [o for o in outcomes.values() if o["failed"] and "ch02_twins.py" in o["where"]]
    assert in_twins, outcomes
    message = in_twins[0]["message"]
    assert message.startswith("AssertionError: assert 'graph():") and "== 'graph():" in message


@pytest.mark.parametrize("name", HELPER_MODULES)
def test_every_helper_module_is_rewritten(name):
    module = importlib.import_module(name)
    assert "@py_builtins" in vars(module), f"{name}: pytest did not rewrite its asserts"


# -- the verdicts check remembers ------------------------------------------------------
class FakeChild:
    """A ``launch`` that runs no test: each step of the plan passes with one test per
    selector, except the labels in ``failing``; a step that waits for all the others
    is skipped after a failure, as in the child. It records the labels it was given."""

    def __init__(self) -> None:
        self.failing: set[str] = set()
        self.runs: list[list[str]] = []

    def __call__(self, args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
        steps = json.loads(Path(args[0]).read_text())["steps"]
        self.runs.append([s["label"] for s in steps])
        results: dict[str, dict] = {}
        for s in steps:
            if s.get("when_all_passed") and any(r["exit_code"] for r in results.values()):
                results[s["label"]] = {"skipped": "an earlier step failed"}
                continue
            failed = s["label"] in self.failing
            tests = [a for a in s["args"][2:] if a.startswith("tests/")]
            results[s["label"]] = {"exit_code": int(failed), "outcomes": {
                t: {"failed": failed, "message": "AssertionError" if failed else ""}
                for t in tests}}
        Path(args[1]).write_text(json.dumps(results))
        return 0, ""


@pytest.fixture
def copied(tmp_path) -> tuple[Path, Path]:
    """A copy of the checkout (what check reads of it) and a solved ch01 workspace on it."""
    reference = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", ".*")
    for tree in check.REFERENCE_TREES:
        shutil.copytree(ROOT / tree, reference / tree, ignore=ignore)
    for path in ROOT.iterdir():
        if path.is_file() and not path.name.startswith("."):
            shutil.copy(path, reference / path.name)
    workspace = tmp_path / "ws"
    ws.start("ch01", workspace, reference)
    for exercise in chapter_exercises("ch01"):
        ws.set_function(workspace, exercise, ws.solution(exercise, reference))
    return reference, workspace


def test_a_passed_step_is_run_again_only_when_what_decides_it_changed(copied, monkeypatch):
    reference, workspace = copied
    child = FakeChild()
    ids = [e.id for e in chapter_exercises("ch01")]

    def run() -> tuple[list[str], str]:
        child.runs.clear()
        passed, report = check.check("ch01", workspace, reference, launch=child)
        # the steps run, once each (the last one's halves may go to two children)
        return list(dict.fromkeys(label for labels in child.runs for label in labels)), report

    ran, first = run()
    assert ran == [*ids, check.REST] and first.endswith("all passed")
    ran, again = run()
    assert ran == [] and again == first  # nothing to run, the same report

    # another exercise's body is not this one's business; its own step and the rest run
    two, three = find_exercise("ch01.2"), find_exercise("ch01.3")
    old, new = BUGS["ch01.3"]
    ws.set_function(workspace, three, ws.solution(three, reference).replace(old, new))
    child.failing = {"ch01.3"}
    ran, report = run()
    assert ran == ["ch01.3", check.REST] and "not yet: ch01.3 FAILED;" in report
    assert run()[0] == ["ch01.3", check.REST]  # a failure is never remembered
    child.failing = set()
    ws.set_function(workspace, three, ws.solution(three, reference))
    assert run()[0] == []  # the code that passed before, and what it passed with

    # what runs besides another exercise's body: its signature, decorators, docstring
    head = ws.solution(two, reference).replace('"""', '"""Edited. ', 1)
    ws.set_function(workspace, two, head)
    assert run()[0] == [*ids, check.REST]  # every step runs the edited head
    ws.set_function(workspace, two, ws.solution(two, reference))
    assert run()[0] == []

    # a line of the workspace outside the exercises
    graph = workspace / "minifx" / "graph.py"
    saved = graph.read_text()
    graph.write_text(saved + "\n# a learner's note\n")
    assert run()[0] == [*ids, check.REST]
    graph.write_text(saved)

    # one test file, a reference source, a lesson, the environment: everything again
    test_file = reference / "tests" / "ch01" / "test_ch01_naming.py"
    test_file.write_text(test_file.read_text() + "\n# changed\n")
    assert run()[0] == [*ids, check.REST]
    assert run()[0] == []
    source = reference / "minifx" / "node.py"
    source.write_text(source.read_text() + "\n# changed\n")
    assert run()[0] == [*ids, check.REST]
    lesson = next((reference / "lessons").glob("ch01_*.md"))
    lesson.write_text(lesson.read_text() + "\n")
    assert run()[0] == [*ids, check.REST]
    monkeypatch.setenv("TENSOR_BACKEND", "numpy")
    assert run()[0] == [*ids, check.REST]
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(reference / "elsewhere"))  # where, not what
    assert run()[0] == []


def test_the_remembered_rest_is_shown_only_when_every_exercise_passes(copied):
    reference, workspace = copied
    child = FakeChild()
    assert check.check("ch01", workspace, reference, launch=child)[0]
    # ch01.1's verdict is gone (the cache keeps the most recent ones) and now it fails
    steps = check.plan("ch01", workspace, reference)["steps"]
    key = next(s["key"] for s in steps if s["label"] == "ch01.1")
    (workspace / check.CACHE / f"{key}.json").unlink()
    child.failing = {"ch01.1"}
    passed, report = check.check("ch01", workspace, reference, launch=child)
    assert not passed and child.runs[-1] == ["ch01.1"]
    assert "run once every exercise passes" in report  # as when the child skips it


def test_the_survey_agrees_with_the_workspace_on_every_status(copied):
    reference, workspace = copied
    ws.start("ch03", workspace, reference)  # ch03's stubs
    mine = find_exercise("ch01.4")
    ws.set_function(workspace, mine, ws.solution(mine, reference).replace(
        "qualname = name", "qualname = name  # mine", 1))
    other = find_exercise("ch01.5")
    old, new = BUGS["ch01.5"]
    ws.set_function(workspace, other, ws.solution(other, reference).replace(old, new))
    survey = check.Survey(workspace, reference)
    statuses = {e.id: ws.status(e, workspace, reference) for e in ALL_EXERCISES}
    assert {e.id: survey.status[e.id] for e in ALL_EXERCISES} == statuses
    assert statuses["ch01.4"] == "reference" and statuses["ch01.5"] == "your code"
    assert statuses["ch03.1"] == "to do"
    assert all(survey.solutions[e.id] == ws.solution(e, reference) for e in ALL_EXERCISES)
