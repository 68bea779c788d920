"""The one table of exercises: which function of the code the learner writes.

Each row names a function by its file and qualified name, never by a copy of
its code: ``python -m minifx learn start`` cuts the stub from the reference
file, ``solution`` prints the reference itself, and the honesty tests
(tests/learn) prove that stubbing each function makes one of ``tests`` fail.

``tests`` are pytest paths (a file, or ``file::test``) of the chapter's own
tests; ``check`` reports an exercise as passed when all of them pass. Keep a
row to one line of each field, so that moving a function means editing one
row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    chapter: str  # "ch03"
    number: int  # K in "ch03.K", from 1 in chapter order
    file: str  # path from the checkout root
    qualname: str  # "Graph.lint", "map_aggregate"
    title: str
    hint: str
    tests: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.chapter}.{self.number}"


def _rows(chapter: str, *rows: tuple) -> list[Exercise]:
    return [Exercise(chapter, k, *row) for k, row in enumerate(rows, start=1)]


EXERCISES: list[Exercise] = [
    *_rows(
        "ch00",
        ("tensor/overrides.py", "_ordered_types", "order handler types, subclasses first",
         "Walk the arguments once; insert a type before the first earlier type it subclasses.",
         ("tests/ch00/test_dispatch.py",)),
        ("tensor/overrides.py", "_collect", "find the arguments that take over a call",
         "Look each type up in _KIND (or ask _kind_of); recurse into containers and dict "
         "values; a Tensor subclass counts only while subclass dispatch is on.",
         ("tests/ch00/test_dispatch.py",)),
        ("tensor/overrides.py", "handle_tensor_function", "ask each handler in turn",
         "types = _ordered_types(relevant); call t.__tensor_function__(public_func, "
         "tuple(types), args, kwargs) until one does not return NotImplemented.",
         ("tests/ch00/test_dispatch.py",)),
        ("tensor/backend/_kernels/strides.py", "coalesce", "merge dims walked as one",
         "Skip size-1 dims; dim d joins the previous one when, for every operand, "
         "previous stride == stride[d] * shape[d]. Return int64 arrays; no dims left "
         "gives shape [1] with stride 0.",
         ("tests/ch00/test_kernels.py", "tests/ch00/test_tensor_views.py")),
        ("tensor/backend/numpy_backend.py", "softmax", "a numerically stable softmax",
         "Subtract the max along dim (keepdims=True) before exp; divide by the sum.",
         ("tests/ch00/test_tensor_backend.py", "tests/ch00/test_op_db.py")),
    ),
    *_rows(
        "ch01",
        ("minifx/node.py", "Node.format_node", "one node's line of str(graph)",
         "placeholder, get_attr and output have their own forms; the rest print "
         "op[target=...](args = ..., kwargs = ...). _format_arg and pretty_target help.",
         ("tests/ch01/test_ch01_first_example.py",)),
        ("minifx/graph.py", "Graph.__str__", "print a graph",
         "A first line graph(): then one indented line per node.",
         ("tests/ch01/test_ch01_first_example.py",)),
        ("minifx/node.py", "pretty_target", "how a target prints in a node's line",
         "Strings as they are; builtins as builtins.name, _operator functions as "
         "operator.name; the rest by qualified_name (repr when it has no name).",
         ("tests/ch01/test_ch01_first_example.py",)),
    ),
    *_rows(
        "ch02",
        ("minifx/proxy.py", "TracerBase.create_arg", "turn a traced value into a node argument",
         "Proxies become their nodes; tuples, named tuples, lists, dicts, slices and ranges "
         "are rebuilt item by item; a traced dict key is a TraceError; constants and "
         "framework tensors stay; anything else is a NotImplementedError naming its type.",
         ("tests/ch02/test_ch02_tracer.py", "tests/ch02/test_ch02_proxy.py")),
        ("minifx/proxy.py", "_record_call", "record one call as a node",
         "_find_tracer(args, kwargs); ask each loaded framework's method_name(func): a "
         "name gives call_method, else call_function, through tracer.create_proxy.",
         ("tests/ch02/test_ch02_proxy.py", "tests/ch02/test_ch02_tracer.py")),
        ("minifx/tracer.py", "Tracer.create_args_for_root", "one placeholder per parameter",
         "Names come from inspect.unwrap(root_fn).__code__.co_varnames (skip self for a "
         "module, whose first argument is self.root); self._placeholder makes each one; "
         "*args and **kwargs become '*name' and '**name', then _flatten_signature.",
         ("tests/ch02/test_ch02_tracer.py",)),
        ("minifx/tracer.py", "Tracer.path_of_module", "find where a submodule lives",
         "Use submodule_paths when it is set; else search root.named_modules() for the very "
         "object (is, not ==); a NameError says what is missing.",
         ("tests/ch02/test_ch02_tracer.py",)),
        ("minifx/tracer.py", "Tracer.call_module", "leaf modules become call_module",
         "A leaf gets one call_module node named by path_of_module; any other module is "
         "checked (framework.check_traced_through) and traced through by calling forward.",
         ("tests/ch02/test_ch02_tracer.py",)),
    ),
    *_rows(
        "ch03",
        ("minifx/node.py", "map_aggregate", "apply a function to every leaf of an argument",
         "Rebuild tuples (named tuples too), lists, dicts and slices; everything else, "
         "Nodes included, is a leaf.",
         ("tests/ch03/test_node.py",)),
        ("minifx/node.py", "Node.replace_input_with", "read a new input instead of an old one",
         "map_arg over args and kwargs, then _update_args_kwargs keeps users in sync.",
         ("tests/ch03/test_node.py", "tests/ch03/test_graph_edit.py")),
        ("minifx/node.py", "Node.replace_all_uses_with", "redirect every user",
         "Iterate over a copy of users (it changes under you); skip replace_with itself "
         "and users delete_user_cb refuses; return the changed users.",
         ("tests/ch03/test_node.py", "tests/ch03/test_graph_edit.py")),
        ("minifx/graph.py", "Graph.erase_node", "unlink a node nobody reads",
         "Refuse a node of another graph, an erased one, one with users; unlink it from "
         "its neighbours but keep its own links; drop its inputs.",
         ("tests/ch03/test_graph_edit.py", "tests/ch03/test_lint.py")),
        ("minifx/graph.py", "Graph.eliminate_dead_code", "erase unread, pure nodes",
         "Walk backwards, so a dead chain goes in one pass; keep impure nodes (ask "
         "is_impure_node when one is given, else Node.is_impure).",
         ("tests/ch03/test_graph_edit.py", "tests/ch03/test_node.py")),
        ("minifx/graph.py", "Graph.lint", "check a graph is well formed",
         "One pass in order: a node may only read nodes already seen; users must agree "
         "with inputs; exactly one output node, and it is last.",
         ("tests/ch03/test_lint.py",)),
    ),
    *_rows(
        "ch04",
        ("minifx/node.py", "last_uses", "where each value is read for the last time",
         "Walk the nodes backwards; the first time you meet an input, that user is its "
         "last use.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.run_node", "run one node",
         "Fetch args and kwargs from the environment, then call the method named by n.op.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/node.py", "fetch_path", "follow a dotted attribute path",
         "Split on '.', getattr one atom at a time; at a missing one return default if "
         "given, else raise an AttributeError naming the path so far and the type.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/passes/shape_prop.py", "ShapeProp.run_node", "record each value's shape",
         "super().run_node(n), then map_aggregate the result turning each tensor into "
         "extract_tensor_metadata(t): that is meta['tensor_meta'] when a tensor was found; "
         "meta['type'] is the result's type. Wrap a failure in a RuntimeError naming n.",
         ("tests/ch04/test_shape_prop.py",)),
    ),
    *_rows(
        "ch05",
        ("minifx/transformer.py", "Transformer.placeholder", "a placeholder in the new graph",
         "self.new_graph.placeholder(target, default_value=args[0] if args else "
         "inspect.Signature.empty), wrapped in a Proxy of self.tracer.",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "Transformer.call_function", "re-record a function call",
         "Proxies in, proxy out: create_proxy('call_function', target, args, kwargs).",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "Transformer.transform", "run the graph into a new one",
         "super().run(enable_io_processing=False) returns proxies: output their nodes "
         "(map_aggregate) in new_graph, copy the old output's meta, and wrap new_graph "
         "in a GraphModule of self.module.",
         ("tests/ch05/test_transformer.py",)),
    ),
    *_rows(
        "ch06",
        ("minifx/codegen.py", "CodeWriter.emit_call_function", "one node's line of code",
         "operator_format and inplace_format give templates for operators; otherwise "
         "add_global names the function; getattr(x, 'name') prints as x.name; "
         "self.format_args spells the arguments; note wrapped functions.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_graph_module.py")),
        ("minifx/codegen.py", "format_target", "spell self.layer1.0.conv as Python",
         "Plain identifiers join with dots; other atoms go through getattr(base, 'atom').",
         ("tests/ch06/test_codegen.py",)),
        ("minifx/namespace.py", "Namespace.create_name", "a unique, legal variable name",
         "An obj that has a name keeps it; _split_name gives base and number; illegal "
         "characters become _, a leading digit gets one; count up per base (_1, _2 ...) "
         "past used and illegal names; remember the name.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_hostile_names.py")),
        ("minifx/codegen.py", "CodeWriter.emit_frees", "free each value after its last use",
         "self.last_uses[node] are the values read for the last time here; a node "
         "nobody reads frees itself too; end the line with ';  a = b = None' or just "
         "a newline.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_graph_module.py")),
        ("minifx/graph_module.py", "GraphModule.recompile", "regenerate forward",
         "self._graph.python_code(root_module='self'); keep .src in self._code; install "
         "_forward_from_src(...) as type(self).forward; return the PythonCode.",
         ("tests/ch06/test_graph_module.py",)),
    ),
    *_rows(
        "ch07",
        ("tensor/nn/utils/fusion.py", "fuse_conv_bn_weights", "fold BatchNorm into conv weights",
         "scale = bn_w / sqrt(var + eps), one per output channel; W' = W * scale over "
         "dim 0; b' = (b - mean) * scale + bn_b.",
         ("tests/ch07/test_fuse.py",)),
        ("minifx/experimental/optimization.py", "matches_module_pattern",
         "does a node end a Conv -> BN chain",
         "Pair the two types with (node.args[0], node): each must be a call_module Node "
         "whose target is in modules and whose module's type is exactly the one expected.",
         ("tests/ch07/test_fuse.py",)),
        ("minifx/experimental/optimization.py", "replace_node_module",
         "swap the module behind a node",
         "_parent_name('a.b.c') is ('a.b', 'c'); set modules[target] and setattr the "
         "parent module; refuse a target that is not a string.",
         ("tests/ch07/test_fuse.py",)),
        ("minifx/subgraph_rewriter.py", "_SubgraphMatcher._match_node",
         "match one pattern node against the graph",
         "Same kind of node, consistent with what is already mapped, and args that match "
         "recursively; placeholders match anything.",
         ("tests/ch07/test_subgraph_rewriter.py",)),
    ),
    *_rows(
        "ch08",
        ("minifx/compiler/compiled.py", "describe", "the cache key of one input",
         "Tensors by TensorSpec(shape, dtype); lists, tuples and dicts item by item, "
         "tagged with their type; other values by (type name, value), or repr if unhashable.",
         ("tests/ch08/test_compile.py",)),
        ("minifx/compiler/fusion.py", "find_groups", "group neighbouring elementwise nodes",
         "Start from each unclaimed fusible node, last first; an input joins the group "
         "once all of its users are in it; each group and the list are in graph order.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/kernel.py", "kernel_source", "write a fused kernel's source",
         "Names come from a Namespace; the outside nodes the members read are the array "
         "parameters (read as name[i]); each member is one scalar line in its compute "
         "dtype, reading the lines before it; the last one is stored into out[i].",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/elementwise.py", "as_pointwise", "is this node elementwise",
         "_canonical_name(node), then _bind its args to _PARAMETERS[op] (x.where(c, y) "
         "is reordered); clamp needs number bounds; operands are Nodes or numbers, at "
         "least one a Node.",
         ("tests/ch08/test_fusion.py",)),
    ),
    *_rows(
        "ch09",
        ("minifx/frameworks/torch_framework.py", "torch_qualified_name",
         "spell a torch function as torch.fx does",
         "__module__ + __name__ (never __qualname__); Tensor descriptors are "
         "torch.Tensor.name; a builtin without a module is looked up in torch and "
         "torch.nn.functional; torch._ops prints as torch.ops; not torch's gives None.",
         ("tests/ch09/test_parity.py",)),
        ("minifx/frameworks/torch_framework.py", "TorchFramework.method_name",
         "which torch callables are Tensor methods",
         "A member of _TENSOR_METHODS, or a property getter (its __name__ is '__get__'), "
         "gives func.__name__; anything else None.",
         ("tests/ch09/test_parity.py",)),
        ("minifx/compare.py", "diff_rows", "line up two codes side by side",
         "Drop blank lines; match the _canonical forms with difflib.SequenceMatcher; "
         "equal runs give ' ' (or '~') rows, other runs pair up as '|', then '<' or '>'.",
         ("tests/ch09/test_compare_cli.py::test_side_by_side_marks_the_differences",)),
    ),
    *_rows(
        "ch10",
        ("minifx/quantization/observer.py", "qparams_from_range", "scale and zero point",
         "Widen [min, max] to include 0 (float32). Affine: scale = (max - min) / (qmax - "
         "qmin), at least eps; zero point qmin - round(min / scale), clipped. Symmetric: "
         "scale = max(-min, max) / ((qmax - qmin) / 2); zero point 0 or the middle.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/observer.py", "MinMaxObserver.observe", "track the range",
         "Keep the running min and max over every batch seen.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/qconfig.py", "QConfigMapping.qconfig_for",
         "which qconfig a module gets",
         "The module name, then each parent (drop the last dotted part, down to ''), "
         "then object_type, then global_qconfig.",
         ("tests/ch10/test_observers.py",)),
    ),
    *_rows(
        "ch11",
        ("minifx/convert/table.py", "ConversionTable.nearby", "suggest near names",
         "Group offers() by their last dotted part; difflib.get_close_matches(name, parts, "
         "n=limit, cutoff=0.7); return the full names, at most limit.",
         ("tests/ch11/test_table.py", "tests/ch11/test_errors.py")),
        ("minifx/convert/twins.py", "copy_state", "copy weights and buffers into the twin",
         "The module's own (recurse=False) parameters and buffers must match the twin's "
         "by name and shape (TwinError otherwise); setattr each converted value.",
         ("tests/ch11/test_round_trip.py",)),
        ("minifx/convert/graph_pass.py", "GraphConverter.call_function",
         "map a torch function to tensor's",
         "table.functions first; getattr on a Node needs an attribute tensor has; "
         "operators go through check_operator; Python's own functions pass; anything "
         "else is a problem with a hint (and the target stays).",
         ("tests/ch11/test_round_trip.py",)),
    ),
]

CHAPTERS: tuple[str, ...] = tuple(dict.fromkeys(e.chapter for e in EXERCISES))


def chapter_exercises(chapter: str) -> list[Exercise]:
    """The exercises of one chapter, in order."""
    return [e for e in EXERCISES if e.chapter == chapter]


def find_exercise(exercise_id: str) -> Exercise:
    """The exercise named ``chNN.K``; a LookupError names the problem."""
    for e in EXERCISES:
        if e.id == exercise_id:
            return e
    chapter = exercise_id.split(".")[0]
    if chapter not in CHAPTERS:
        raise LookupError(f"unknown exercise {exercise_id!r}: chapters are {', '.join(CHAPTERS)}")
    ids = ", ".join(e.id for e in chapter_exercises(chapter))
    raise LookupError(f"unknown exercise {exercise_id!r}: {chapter} has {ids}")
