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

    @property
    def more(self) -> str:
        """The second level of the hint (``hint chNN.K --more``)."""
        return MORE_HINTS[self.qualname]


# Test files whose single tests are named as selectors.
_GM = "tests/ch06/test_graph_module.py::"
_GMB = "tests/ch06/test_graph_module_build.py::"
_W = "tests/ch02/test_ch02_wrapping.py::"
_P = "tests/ch02/test_ch02_tracer_parts.py::"


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
         "Order the relevant types, subclasses first (_ordered_types); ask each one's "
         "__tensor_function__ with the public function, all the types as a tuple, args and "
         "kwargs; the first answer that is not NotImplemented wins.",
         ("tests/ch00/test_dispatch.py",)),
        ("tensor/backend/kernels/strides.py", "coalesce", "merge dims walked as one",
         "Skip size-1 dims; dim d joins the previous one when, for every operand, "
         "previous stride == stride[d] * shape[d]. Return int64 arrays; no dims left "
         "gives shape [1] with stride 0.",
         ("tests/ch00/test_kernel_family.py::test_coalesce_merges_what_every_operand_walks_as_one",
          "tests/ch00/test_kernel_family.py::test_binary_on_every_layout_and_broadcast",
          "tests/ch00/test_tensor_views.py")),
        ("tensor/backend/reference/__init__.py", "softmax", "a numerically stable softmax",
         "Subtract the max along dim (keepdims=True) before exp; divide by the sum.",
         ("tests/ch00/test_tensor_backend.py::test_reference_softmax_against_torch",
           "tests/ch00/test_tensor_backend.py::test_reference_softmax_is_stable_on_extreme_rows")),
        ("tensor/_shape.py", "broadcast_shapes", "broadcast two shapes",
         "Pad the shorter shape on the left with ones, then settle each dim from the right: "
         "equal sizes stay, a 1 gives way to the other size, anything else is torch's error.",
         ("tests/ch00/test_shape_rules.py::test_broadcast_shapes_as_torch",
          "tests/ch00/test_shape_rules.py::test_broadcast_error_names_the_padded_dim_and_the_op",
          "tests/ch00/test_expand_and_shape_errors.py")),
        ("tensor/_shape.py", "matmul_shape", "the shape of a matrix product",
         "Refuse 0-d operands first. Then three cases by the second operand's dims: one "
         "(a column), two (a matrix every row meets), more (batched, the batch dims "
         "broadcast); each checks the inner sizes with its own sentence.",
         ("tests/ch00/test_shape_rules.py::test_matmul_shape_as_torch",
          "tests/ch00/test_tensor_errors.py::test_matmul_shape_errors")),
        ("tensor/_shape.py", "infer_size", "resolve the -1 of a requested shape",
         "One pass over the sizes, in order, to find the -1 and multiply the others; then "
         "the sizes that fit, then the two errors.",
         ("tests/ch00/test_shape_rules.py::test_infer_size_as_torch",
          "tests/ch00/test_tensor_errors.py::test_shape_op_errors")),
        ("tensor/_shape.py", "view_strides", "strides for a view, or None",
         "Empty or 0-d shapes first. Then walk the old dims from the right, growing a chunk "
         "until memory stops being contiguous; cover each chunk with new dims from the right.",
         ("tests/ch00/test_shape_rules.py::test_view_strides_as_torch",
          "tests/ch00/test_shape_rules.py::test_view_strides_of_empty_and_0d_shapes",
          "tests/ch00/test_tensor_views.py")),
        ("tensor/backend/kernels/strides.py", "storage_of", "a view as storage, offset, strides",
         "Strides in elements; the negative strides lower the first address, the positive "
         "ones raise the last; as_strided of the lowest corner element spans the two.",
         ("tests/ch00/test_kernel_family.py::test_storage_of_addresses_every_element",
          "tests/ch00/test_kernel_family.py::test_storage_of_an_empty_or_0d_array")),
        ("tensor/backend/kernels/elementwise.py", "map_kernel", "the map kernel: one operand",
         "Inside the cache context, define and return one jitted function with the "
         "signature the docstring gives: a scratch buffer, a cap, then a while loop over "
         "blocks, each block's elements through apply in a plain for loop.",
         ("tests/ch00/test_kernel_family.py::test_map_kernel_writes_exactly_its_range",
          "tests/ch00/test_kernel_family.py::test_map_kernel_gathers_at_most_a_block_at_a_time",
          "tests/ch00/test_kernel_family.py::test_unary_on_every_layout",
          "tests/ch00/test_kernel_family.py::test_kernels_are_cached_in_the_keyed_folder")),
        ("tensor/backend/kernels/elementwise.py", "zip_kernel", "the zip kernel: two operands",
         "map_kernel's loop with a second operand: its own scratch buffer, its own block "
         "start found with row_start, and apply2 on the pair.",
         ("tests/ch00/test_kernel_family.py::test_zip_kernel_writes_exactly_its_range",
          "tests/ch00/test_kernel_family.py::test_binary_on_every_layout_and_broadcast",
          "tests/ch00/test_kernel_family.py::test_kernels_are_cached_in_the_keyed_folder")),
        ("tensor/backend/kernels/reduce.py", "reduce_strided", "the strided reduction kernel",
         "prange over the outputs; for each, find its base, reduce the first row into an "
         "accumulator, then fold every other row into it: added, or kept when better.",
         ("tests/ch00/test_kernel_family.py::test_reduce_over_any_dims_on_every_layout",
          "tests/ch00/test_kernel_family.py::test_amax_and_amin_propagate_nan")),
        ("tensor/overrides.py", "dispatch", "the protocol's general path",
         "The top function mode first, off the stack while it answers; then the handlers "
         "of the arguments that take over; then the implementation.",
         ("tests/ch00/test_dispatch_paths.py", "tests/ch00/test_dispatch.py")),
        ("tensor/overrides.py", "_kind_of", "classify an argument type once",
         "Containers, then mappings, then types without a handler, then Tensor subclasses, "
         "then handlers; record the answer before returning it.",
         ("tests/ch00/test_dispatch_paths.py", "tests/ch00/test_dispatch.py")),
        ("tensor/overrides.py", "_tensor_types", "the Tensor types of a plain call",
         "Walk the positional arguments then the keyword values, opening one level of "
         "tuple or list; keep each Tensor's type once, in order.",
         ("tests/ch00/test_dispatch_paths.py",)),
        ("tensor/overrides.py", "relevant_args", "the arguments that take over",
         "One list, filled by the collector from the positional arguments, then from the "
         "keyword values when there are any.",
         ("tests/ch00/test_dispatch_paths.py", "tests/ch00/test_dispatch.py")),
        ("tensor/overrides.py", "disable_subclass_dispatch", "turn subclasses off for a while",
         "A generator context manager around a module counter: up before the block, down "
         "after it, whatever happens.",
         ("tests/ch00/test_dispatch_paths.py", "tests/ch00/test_dispatch.py")),
        ("tensor/_shape.py", "in_op", "name the op and its shapes in an error",
         "Write each shape as a list; one shape is singular, several are joined with commas "
         "and a last and.",
         ("tests/ch00/test_shape_helpers.py::test_in_op_names_the_op_and_its_shapes",
          "tests/ch00/test_shape_rules.py")),
        ("tensor/_shape.py", "contiguous_strides", "row-major strides",
         "From the last dim to the first, a running product of the sizes, a 0 counted as 1; "
         "reverse at the end.",
         ("tests/ch00/test_shape_helpers.py::test_contiguous_strides_as_torch",
          "tests/ch00/test_shape_rules.py")),
        ("tensor/_shape.py", "is_contiguous", "is a view row-major without gaps",
         "Walk the dims from the last, with the stride expected so far; size-1 dims are "
         "skipped; the first other dim with another stride answers False.",
         ("tests/ch00/test_shape_helpers.py::test_is_contiguous_as_torch",
          "tests/ch00/test_shape_helpers.py::test_is_contiguous_ignores_only_size_one_dims",
          "tests/ch00/test_shape_helpers.py::test_is_contiguous_compares_strides_by_value")),
        ("tensor/_shape.py", "linear_shape", "the shape of a linear layer's output",
         "Four checks in the docstring's order, each with torch's sentence; then the input's "
         "shape with out_features as its last size.",
         ("tests/ch00/test_shape_helpers.py::test_linear_shape_as_torch",
          "tests/ch00/test_shape_helpers.py::test_linear_shape_errors",
          "tests/ch00/test_shape_helpers.py::test_linear_shape_compares_sizes_by_value")),
        ("tensor/_shape.py", "window_count", "how many windows fit along an axis",
         "The span the first window may move; floor division by the stride, plus one. In "
         "ceil mode round up, then drop a last window that would start past the input.",
         ("tests/ch00/test_shape_helpers.py::test_window_count_as_torch_pools",
          "tests/ch00/test_shape_helpers.py::test_window_count_with_dilation_as_torch")),
        ("tensor/backend/reference/__init__.py", "binary", "two operands through NumPy",
         "The op table's NumPy function, as an array; pow first tries the special powers for "
         "a number exponent, and spreads a 0-d exponent over an array base.",
         ("tests/ch00/test_reference_kernels.py",)),
        ("tensor/backend/reference/__init__.py", "clamp", "limit to a range",
         "The lower bound first, then the upper, each in the array's dtype and each only "
         "when given; hand back a new array.",
         ("tests/ch00/test_reference_kernels.py",)),
        ("tensor/backend/reference/__init__.py", "log_softmax", "a numerically stable log_softmax",
         "As softmax: an empty array is copied; subtract the max along dim (kept), then "
         "subtract the log of the sum of the exps.",
         ("tests/ch00/test_reference_kernels.py",)),
        ("tensor/backend/reference/__init__.py", "linear", "the affine map",
         "A matrix product with the weight transposed, the bias added when there is one, "
         "returned as an array.",
         ("tests/ch00/test_reference_kernels.py",)),
    ),
    *_rows(
        "ch01",
        ("minifx/node.py", "Node.format_node", "one node's line of str(graph)",
         "placeholder, get_attr and output have their own forms; the rest print "
         "op[target=...](args = ..., kwargs = ...). _format_arg and pretty_target help.",
         ("tests/ch01/test_ch01_first_example.py",)),
        ("minifx/node.py", "pretty_target", "how a target prints in a node's line",
         "Strings as they are; builtins as builtins.name, _operator functions as "
         "operator.name; the rest by qualified_name (repr when it has no name).",
         ("tests/ch01/test_ch01_first_example.py",)),
        ("minifx/node.py", "qualified_name", "the dotted name of a target",
         "Special spellings first (an __fx_name__, a framework's, a builtin's bare name); "
         "then module and qualname, repaired when no path leads back to the object; then "
         "drop private module segments while the parent still exposes it.",
         ("tests/ch01/test_ch01_naming.py", "tests/ch01/test_ch01_first_example.py")),
        ("minifx/node.py", "type_repr", "how an annotation prints",
         "Classes by name (builtins bare, others qualified), the ellipsis and plain "
         "functions specially, and everything else by its repr.",
         ("tests/ch01/test_ch01_naming.py", "tests/ch01/test_ch01_first_example.py")),
        ("minifx/node.py", "_format_arg", "how an argument prints",
         "Recurse through lists, tuples and dicts; a Node prints with a %; everything else "
         "by str.",
         ("tests/ch01/test_ch01_naming.py", "tests/ch01/test_ch01_first_example.py")),
        ("minifx/node.py", "Node.__init__", "what a node holds",
         "Refuse a bad op or target first, each with its sentence; then set the fields, "
         "point _prev and _next at the node itself, and let _update_args_kwargs take "
         "args and kwargs.",
         ("tests/ch01/test_ch01_node.py",)),
        ("minifx/node.py", "copy_arg", "copy an argument, noting its nodes",
         "One walk that rebuilds the containers and notes every Node in found; "
         "lists and tuples item by item, dicts value by value, constants as they are, "
         "anything else through map_aggregate.",
         ("tests/ch01/test_ch01_node.py",)),
        ("minifx/node.py", "Node._update_args_kwargs", "keep users in sync with args",
         "Leave the users of the old inputs, copy the new args and kwargs with copy_arg "
         "into a fresh _input_nodes, then join the users of each new input.",
         ("tests/ch01/test_ch01_node.py",)),
    ),
    *_rows(
        "ch02",
        ("minifx/proxy.py", "TracerBase.create_arg", "turn a traced value into a node argument",
         "Proxies become their nodes; tuples, named tuples, lists, dicts, slices and ranges "
         "are rebuilt item by item; a traced dict key is a TraceError; constants and "
         "framework tensors stay; anything else is a NotImplementedError naming its type.",
         ("tests/ch02/test_ch02_tracer.py", "tests/ch02/test_ch02_proxy.py")),
        ("minifx/proxy.py", "_record_call", "record one call as a node",
         "find_proxy looks through args and kwargs for a Proxy, whose tracer records; ask "
         "each loaded framework's method_name of func: a name gives call_method, else "
         "call_function, through that tracer's create_proxy.",
         ("tests/ch02/test_ch02_proxy.py", "tests/ch02/test_ch02_tracer.py")),
        ("minifx/tracer.py", "Tracer.create_args_for_root", "one placeholder per parameter",
         "Names come from the co_varnames of the unwrapped root_fn's code (inspect.unwrap); "
         "skip self for a module, whose first argument is self.root; self._placeholder "
         "makes each one; "
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
        ("minifx/tracer.py", "Tracer.getattr", "parameter reads become get_attr",
         "Parameters of the root, and buffers when proxy_buffer_attributes is on, become "
         "one cached get_attr Proxy each (_proxy_for_attr); everything else passes.",
         ("tests/ch02/test_ch02_tracer.py",)),
        ("minifx/tracer.py", "Tracer._patch_modules", "patch the module class for the trace",
         "Per loaded framework, replace the module class's __getattr__ and __call__ with "
         "functions that ask the tracer's getattr and call_module hooks.",
         ("tests/ch02/test_ch02_tracer.py", "tests/ch02/test_ch02_trace_errors.py")),
        ("minifx/tracer.py", "Tracer.trace", "run the root on Proxies",
         "Module or function: pick root, framework and the function to run; set up the "
         "tracer's tables; make the arguments; call it under a _Patcher; record the output.",
         ("tests/ch02/test_ch02_tracer.py", "tests/ch02/test_ch02_proxy.py",
          "tests/ch02/test_ch02_trace_errors.py")),
        ("minifx/proxy.py", "_install_magic_methods", "give Proxy its operators",
         "Loop over the operator tables of magic_methods.py; for each entry make a small "
         "function that records the operator through the Proxy's tracer, name it, and "
         "set it on the class; the reflected ones swap the operands.",
         ("tests/ch02/test_ch02_proxy.py",)),
        ("minifx/tracer.py", "Tracer._specialize", "a concrete_args value, checked at run time",
         "map_aggregate over the value: each leaf gets a numbered placeholder (with the "
         "parameter's default) and, depending on its type, an assert node, a None check "
         "or a warning; the leaf itself goes back.",
         ("tests/ch02/test_ch02_tracer.py",)),
        ("minifx/tracer.py", "Tracer.create_arg", "tensors and modules met as arguments",
         "Proxies and plain constants first; containers to the base class; then ask the "
         "value's framework: parameter, other tensor or module, each looked up by identity "
         "in the root, each a get_attr node or the error the docstring gives.",
         ("tests/ch02/test_ch02_tracer.py",)),
        ("minifx/proxy.py", "find_proxy", "the Proxy that records a call",
         "Walk the arguments in the order they are written, into containers too, and "
         "answer the first Proxy met (or None); a quick look at the plain positional "
         "arguments first is allowed, as long as the order stays right.",
         ("tests/ch02/test_ch02_proxy.py",)),
        ("minifx/wrapping.py", "wrap", "register a function to record whole",
         "Find the name (a function's code name, or the str), refuse anything else; check "
         "that the caller's frame is module code; remember the caller's globals under "
         "(their id, the name); hand the argument back.",
         (_W + "test_wrap_registers_the_callers_globals_and_answers_its_argument",
          _W + "test_wrap_as_a_decorator_uses_the_code_name",
          _W + "test_wrap_refuses_what_is_neither_a_function_nor_a_name",
          _W + "test_wrap_inside_a_function_is_refused_with_the_reason",
          _W + "test_wrapped_calls_trace_like_torch_fx_and_the_globals_come_back",
          "tests/ch02/test_ch02_tracer.py::test_wrap_by_name_records_one_call",
          "tests/ch02/test_retrace.py::test_wrapped_functions_stay_leaves_on_a_retrace")),
        ("minifx/tracer.py", "_recording", "a function that records itself",
         "Return an inner function of any arguments: with a Proxy among them, record one "
         "call_function node of fn through that Proxy's tracer and mark it wrapped; "
         "without, call fn. Point its __wrapped__ at fn.",
         (_W + "test_recording_runs_the_function_without_a_proxy_and_records_with_one",
          _W + "test_wrapped_calls_trace_like_torch_fx_and_the_globals_come_back",
          _W + "test_autowrap_functions_trace_like_torch_fx",
          "tests/ch02/test_retrace.py::test_wrapped_functions_stay_leaves_on_a_retrace")),
        ("minifx/tracer.py", "_Patcher.patch_attr", "set an attribute for the trace only",
         "Look in vars(owner) before the change: was the name there, and what was it? Set "
         "the new value; push an undo that deletes or sets back.",
         (_W + "test_patch_attr_restores_own_attributes_and_removes_new_ones",
          _W + "test_patch_attr_undoes_even_when_the_body_raises",
          "tests/ch02/test_ch02_tracer.py::test_module_classes_are_patched_only_during_the_trace")),
        ("minifx/tracer.py", "_Patcher.patch_dict", "set a dict entry for the trace only",
         "As patch_attr, on a dict: note whether the key was there and its value, set it, "
         "push an undo that pops or puts back.",
         (_W + "test_patch_dict_restores_values_none_included_and_removes_new_keys",
          _W + "test_wrapped_calls_trace_like_torch_fx_and_the_globals_come_back",
          _W + "test_autowrap_functions_trace_like_torch_fx")),
        ("minifx/tracer.py", "Tracer._patch_wrapped_functions", "patch the wrapped functions",
         "Merge the two registries; for each entry find the function (globals, then "
         "builtins, else NameError) and patch the globals with its recording version; then "
         "let _patch_autowrap scan the root's globals and the autowrap modules.",
         (_W + "test_the_registries_are_merged_so_each_function_is_patched_once",
          _W + "test_a_torch_root_records_what_torch_fx_wrap_registered_like_torch_fx",
          _W + "test_a_name_that_is_nowhere_is_a_name_error",
          _W + "test_a_wrapped_builtin_is_patched_in_the_globals_and_removed_after",
          _W + "test_wrapped_calls_trace_like_torch_fx_and_the_globals_come_back",
          "tests/ch02/test_ch02_tracer.py::test_wrap_by_name_records_one_call",
          "tests/ch02/test_ch02_tracer.py::test_math_functions_are_wrapped_by_default")),
        ("minifx/tracer.py", "Tracer._patch_autowrap", "patch the autowrapped functions",
         "Skip a globals dict already visited (by id); else note it, and patch each public "
         "global whose value's id is an autowrap function's.",
         (_W + "test_each_globals_dict_is_scanned_once_per_trace",
          _W + "test_autowrap_functions_trace_like_torch_fx",
          "tests/ch02/test_ch02_tracer.py::test_autowrap_functions_are_leaves",
          "tests/ch02/test_ch02_tracer.py::test_math_functions_are_wrapped_by_default")),
        ("minifx/tracer.py", "Tracer._placeholder", "one parameter's placeholder",
         "concrete_args first (_specialize); else the default: none for a star name or a "
         "parameter without one, else a 1-tuple; create_proxy a placeholder with the "
         "parameter's annotation.",
         (_W + "test_placeholders_and_their_defaults_like_torch_fx",
          _W + "test_a_default_is_told_from_no_default_by_identity",
          _W + "test_a_concrete_arg_is_not_a_placeholder_like_torch_fx",
          "tests/ch02/test_ch02_tracer.py::test_placeholders_follow_the_signature")),
        ("minifx/proxy.py", "TracerBase.create_proxy", "record an operation, answer a Proxy",
         "create_arg the args and the kwargs; create_node with everything; wrap the node "
         "with the factory when one is given, else with self.proxy.",
         (_W + "test_create_proxy_records_names_types_and_uses_a_factory",
          "tests/ch02/test_ch02_proxy.py")),
        ("minifx/proxy.py", "Proxy.__getattr__", "proxy.name, recorded lazily",
         "Refuse dunder names with an AttributeError of the name; anything else is an "
         "Attribute of self and the name.",
         (_W + "test_a_dunder_attribute_is_an_attribute_error",
          _W + "test_a_name_with_dunders_on_one_side_only_is_an_attribute",
          _W + "test_attribute_is_lazy_and_keeps_its_node",
          "tests/ch02/test_ch02_proxy.py::test_method_call_is_call_method_and_attribute_read_is_getattr")),
        ("minifx/proxy.py", "Attribute.node", "the getattr node, made on first use",
         "If no node is kept yet, record getattr(root, attr) as a call_function through the "
         "tracer and keep its node; answer the kept node.",
         (_W + "test_attribute_is_lazy_and_keeps_its_node",
          _W + "test_an_attribute_read_twice_is_one_getattr_node_like_torch_fx",
          "tests/ch02/test_ch02_proxy.py::test_method_call_is_call_method_and_attribute_read_is_getattr")),
        ("minifx/tracer.py", "Tracer._collect_tensor_attrs", "find the root's plain tensors",
         "For every module and its path, look through its own vars: each tensor of a loaded "
         "framework goes into tensor_attrs under its id, with its dotted path; later paths "
         "overwrite earlier ones.",
         (_P + "test_a_tensor_at_several_paths_is_read_from_the_last_like_torch_fx",
          _P + "test_collect_tensor_attrs_remembers_each_tensor_by_identity",
          "tests/ch02/test_ch02_tracer.py::test_parameters_buffers_and_tensor_attributes_are_get_attr")),
        ("minifx/tracer.py", "Tracer._tensor_constant", "store a stray tensor on the root",
         "Trust tensor_attrs only when its entry holds this very value; else find the first "
         "free _tensor_constant<i>, set it on the root and remember it; a get_attr node "
         "either way.",
         (_P + "test_fresh_tensors_take_the_first_free_constant_names_like_torch_fx",
          _P + "test_tensor_constant_reuses_a_known_tensor_and_checks_it_is_the_same",
          "tests/ch02/test_ch02_tracer.py::test_tensors_met_as_arguments_become_get_attr_like_torch_fx",
          "tests/ch02/test_ch02_tracer.py::test_tensor_made_during_trace_becomes_tensor_constant")),
        ("minifx/tracer.py", "Tracer._proxy_for_attr", "one cached get_attr per attribute",
         "Walk the pairs; at the one whose value is attr_val, make its get_attr Proxy unless "
         "the cache has it, and answer the cached one; None after the walk.",
         (_P + "test_proxy_for_attr_finds_by_identity_and_caches_the_proxy",
          _P + "test_a_parameter_read_twice_is_one_get_attr_like_torch_fx",
          "tests/ch02/test_ch02_tracer.py::test_parameters_buffers_and_tensor_attributes_are_get_attr")),
        ("minifx/proxy.py", "Proxy.__iter__", "a, b = proxy",
         "Ask unpack_count about the caller's frame; with a count, index the Proxy that many "
         "times and iterate over the list; without, hand over to the tracer's iter.",
         (_P + "test_unpacking_records_each_item_like_torch_fx",
          _P + "test_a_loop_over_a_proxy_asks_the_tracer",
          "tests/ch02/test_ch02_proxy.py::test_unpacking_reads_the_count_from_bytecode",
          "tests/ch02/test_ch02_proxy.py::test_unpacking_three_ways")),
        ("minifx/tracer.py", "Tracer.__init__", "which functions record whole",
         "Gather the ids of the public callables of every autowrap module, add the ids of "
         "the autowrap functions; keep the modules as a list to search later; no submodule "
         "paths yet.",
         (_P + "test_tracer_init_collects_the_autowrap_ids_like_torch_fx",
          _W + "test_autowrap_functions_trace_like_torch_fx",
          "tests/ch02/test_ch02_tracer.py::test_math_functions_are_wrapped_by_default")),
        ("minifx/proxy.py", "TracerBase.create_node", "append a node, with its stack if asked",
         "Let the graph make the node from everything you were given; then, only when stack "
         "traces are asked for and the node has none, give it the user's stack.",
         (_P + "test_create_node_keeps_a_stack_trace_the_graph_gave_like_torch_fx",
          "tests/ch02/test_ch02_tracer.py::test_stack_traces_only_when_asked",
          _W + "test_create_proxy_records_names_types_and_uses_a_factory")),
    ),
    *_rows(
        "ch03",
        ("minifx/node.py", "map_aggregate", "apply a function to every leaf of an argument",
         "Rebuild tuples (named tuples too), lists, dicts and slices; everything else, "
         "Nodes included, is a leaf.",
         ("tests/ch03/test_node.py",)),
        ("minifx/node.py", "Node.prepend", "move a node in the linked list",
         "Refuse a node of another graph; unhook x from its neighbours, then hook it in "
         "between self._prev and self.",
         ("tests/ch03/test_node.py", "tests/ch03/test_graph_edit.py")),
        ("minifx/graph.py", "Graph.create_node", "make a node, name it, insert it",
         "Check op, args and kwargs; pick a name candidate and let the graph's Namespace "
         "make it unique; build the Node, hand it to self._insert, count it.",
         ("tests/ch03/test_node.py", "tests/ch03/test_graph_vs_torch.py")),
        ("minifx/graph.py", "Graph.inserting_before", "new nodes go before a node",
         "None means the start; refuse a node of another graph; an _InsertPoint that "
         "inserts with the node's prepend.",
         ("tests/ch03/test_graph_edit.py", "tests/ch03/test_node.py")),
        ("minifx/graph.py", "Graph.inserting_after", "new nodes go after a node",
         "None means the end; refuse a node of another graph; an _InsertPoint that "
         "inserts with the node's append.",
         ("tests/ch03/test_graph_edit.py", "tests/ch03/test_node.py")),
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
        ("minifx/graph.py", "Graph.node_copy", "copy a node from another graph",
         "map_arg the args and kwargs through arg_transform; create_node with the same "
         "op, target, name and type; give the copy its own meta dict.",
         ("tests/ch03/test_graph_edit.py",)),
        ("minifx/graph.py", "Graph.graph_copy", "copy a whole graph but its output",
         "Walk g's nodes; skip those val_map has; at the output, map its argument through "
         "val_map and return; else record node_copy's result in val_map.",
         ("tests/ch03/test_graph_edit.py",)),
        ("minifx/graph.py", "Graph.__str__", "print a graph",
         "A first line graph(): then one indented line per node.",
         ("tests/ch03/test_graph_core.py::test_str_is_torch_fx_str",)),
        ("minifx/graph.py", "Graph.__init__", "an empty graph around its sentinel",
         "Make the root with Node.__new__ and give it every field a node has, its links "
         "pointing at itself; new nodes go in with the root's prepend.",
         ("tests/ch03/test_graph_core.py::test_an_empty_graph_is_a_circle_of_one",
          "tests/ch03/test_graph_core.py::test_new_nodes_go_at_the_end_and_are_counted",
          "tests/ch03/test_graph_core.py::test_each_graph_has_its_own_root_namespace_and_codegen")),
        ("minifx/graph.py", "_NodeList.__iter__", "walk the circle, skipping erased nodes",
         "Start next to the root and stop when you are back at it; step forward or "
         "backward by the view's direction, reading the link after the yield.",
         ("tests/ch03/test_graph_core.py::test_the_walk_both_ways_is_torch_fx_s",
          "tests/ch03/test_graph_core.py::test_erasing_the_visited_node_and_the_next_is_safe",
          "tests/ch03/test_graph_core.py::test_a_node_inserted_after_the_visited_one_is_visited_next",
          "tests/ch03/test_graph_core.py::test_the_walk_is_lazy_and_skips_erased_nodes")),
        ("minifx/graph.py", "Graph._target_to_str", "the name a target suggests",
         "A callable by its __name__ (its type's when it has none); a string as it is, "
         "without a dunder's underscores; then snake_case.",
         ("tests/ch03/test_graph_core.py::test_names_from_targets_are_torch_fx_s",
          "tests/ch03/test_graph_core.py::test_a_callable_without_a_name_is_named_by_its_type",
          "tests/ch03/test_graph_core.py::test_nodes_are_named_from_their_target_as_torch_fx")),
        ("minifx/node.py", "Node.is_impure", "which nodes dead-code elimination keeps",
         "By op: placeholder and output always; call_function when marked or when a "
         "framework says so; call_module when the owning module's submodule says so.",
         ("tests/ch03/test_graph_core.py::test_which_nodes_are_impure_is_torch_fx_s",
          "tests/ch03/test_graph_core.py::test_framework_side_effects_are_torch_fx_s",
          "tests/ch03/test_graph_core.py::test_random_draws_of_tensor_are_impure",
          "tests/ch03/test_graph_core.py::test_marked_functions_and_impure_modules_are_impure",
          "tests/ch03/test_graph_core.py::test_only_call_module_asks_the_submodule_and_ops_compare_by_value")),
        ("minifx/graph.py", "_InsertPoint.__init__", "move the insertion point, remember the old",
         "Keep the graph and its current _insert, then install the new one right away.",
         ("tests/ch03/test_graph_io.py::test_the_insertion_point_moves_at_once_and_comes_back_as_torch_fx_s",
          "tests/ch03/test_graph_io.py::test_the_insert_point_keeps_what_exit_restores")),
        ("minifx/graph.py", "Graph.output", "the node that returns the result",
         "Refuse a second output node by name; else create_node with op and target "
         "output and the result as the only argument.",
         ("tests/ch03/test_graph_io.py::test_the_output_node_is_torch_fx_s",
          "tests/ch03/test_graph_io.py::test_a_second_output_is_refused_by_name")),
        ("minifx/graph.py", "Graph.output_node", "find the output node",
         "Search from the end of the graph for the first node whose op is output.",
         ("tests/ch03/test_graph_io.py::test_output_node_is_the_last_output_searched_from_the_end",
          "tests/ch03/test_graph_io.py::test_a_graph_without_output_node_says_so")),
        ("minifx/graph.py", "Graph._lint_targets", "targets must exist on the owning module",
         "Only get_attr and call_module targets are looked up, with fetch_path; turn its "
         "AttributeError into lint's RuntimeError, unchained.",
         ("tests/ch03/test_graph_io.py::test_get_attr_and_call_module_targets_must_exist_as_torch_fx_says",
          "tests/ch03/test_graph_io.py::test_every_node_is_checked_in_order")),
        ("minifx/graph.py", "Graph.__reduce__", "pickle a graph as a flat table",
         "Number the nodes; each row holds a node's fields, its input Nodes replaced by "
         "_NodeRef of their numbers.",
         ("tests/ch03/test_graph_io.py::test_a_pickled_graph_comes_back_as_torch_fx_s_does",
          "tests/ch03/test_graph_io.py::test_reduce_answers_a_flat_table_of_rows",
          "tests/ch03/test_graph_io.py::test_a_long_graph_pickles_where_torch_fx_s_overflows")),
        ("minifx/graph.py", "_rebuild_graph", "unpickle a graph from its table",
         "A new Graph with the given codegen; create the nodes row by row, turning each "
         "_NodeRef back into a node already made.",
         ("tests/ch03/test_graph_io.py::test_a_pickled_graph_comes_back_as_torch_fx_s_does",
          "tests/ch03/test_graph_io.py::test_rebuild_graph_makes_the_nodes_of_the_rows",
          "tests/ch03/test_graph_io.py::test_a_long_graph_pickles_where_torch_fx_s_overflows")),
        ("minifx/graph.py", "Graph.describe", "name a graph in an error message",
         "The owning module's class when there is one, the id in hex, the first three "
         "node names and an ellipsis when there are more.",
         ("tests/ch03/test_graph_io.py::test_describe_names_the_module_and_the_first_nodes",)),
        ("minifx/graph.py", "Graph.print_tabular", "print the graph as a table",
         "Five strings per node under a header; tabulate when it imports, else pad each "
         "column to its widest cell yourself.",
         ("tests/ch03/test_graph_io.py::test_print_tabular_without_tabulate_is_a_plain_table",
          "tests/ch03/test_graph_io.py::test_print_tabular_with_tabulate_hands_it_the_rows")),
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
        ("minifx/interpreter.py", "Interpreter.map_nodes_to_values",
         "look up the values a node reads",
         "map_arg a small function over args: it gives each Node's value from self.env, or "
         "raises the RuntimeError the docstring gives when there is none.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.fetch_args_kwargs_from_env",
         "a node's arguments, as values",
         "Map the node's args and its kwargs, each through map_nodes_to_values.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.placeholder", "hand out the run's arguments",
         "Each placeholder takes the next value of self.args_iter; a star parameter takes "
         "the rest; when they have run out, the default or a RuntimeError.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.run", "the run loop, freeing dead values",
         "Set up env and args_iter; walk the nodes, skipping those env already has; store "
         "run_node's value, free the values that die at this node, return at output; a "
         "node's error gets the node's line added.",
         ("tests/ch04/test_interpreter.py", "tests/ch04/test_shape_prop.py")),
        ("minifx/node.py", "fetch_path", "follow a dotted attribute path",
         "Split on '.', getattr one atom at a time; at a missing one return default if "
         "given, else raise an AttributeError naming the path so far and the type.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/passes/shape_prop.py", "ShapeProp.run_node", "record each value's shape",
         "Run the node as the Interpreter does (super()), then map_aggregate the result "
         "turning each tensor into extract_tensor_metadata(t): that is "
         "meta['tensor_meta'] when a tensor was found; meta['type'] is the result's type. "
         "Wrap a failure in a RuntimeError naming n.",
         ("tests/ch04/test_shape_prop.py",)),
        ("minifx/interpreter.py", "Interpreter.fetch_attr", "find what a target names",
         "fetch_path from self.module does the walk; turn its AttributeError into the "
         "RuntimeError the docstring gives.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.get_attr", "the get_attr opcode",
         "The target is a dotted path: let fetch_attr find it.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.call_function", "the call_function opcode",
         "The target is the callable itself; the arguments are already values.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.call_method", "the call_method opcode",
         "The first argument is the object, the target the method's name; the rest are "
         "the method's arguments.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.call_module", "the call_module opcode",
         "Find the submodule by its path and call it as eager code would.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "_message_with_node", "name the node in an error",
         "Build the 'While executing' part from the node's line, add its stack trace when "
         "it has one, and put the original message in front when there is one.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.boxed_run", "run on a list it empties",
         "Pair the graph's placeholders with the values, check the counts first, empty "
         "the caller's list, and run with the pairs as the initial environment.",
         ("tests/ch04/test_interpreter.py",)),
        ("minifx/interpreter.py", "Interpreter.__init__", "what every run reads",
         "Keep the module, a dict of its named modules, the graph to run (the given one or "
         "the module's), an empty env, the name and the two flags; with garbage collection "
         "on, the last-use table of that graph.",
         ("tests/ch04/test_interpreter_setup.py",
          "tests/ch04/test_interpreter.py::test_garbage_collection_frees_values_like_torch_fx",
          "tests/ch04/test_interpreter.py::test_run_another_graph_with_the_module_state")),
        ("minifx/interpreter.py", "Interpreter.output", "the output opcode",
         "The output node has one argument, already a value: hand it back untouched.",
         ("tests/ch04/test_interpreter_setup.py::test_output_gives_its_argument_as_it_is",
          "tests/ch04/test_interpreter.py::test_run_equals_eager_on_tensor_and_torch")),
        ("minifx/passes/shape_prop.py", "extract_tensor_metadata", "describe one tensor",
         "Shape, dtype and requires_grad from the tensor itself (a missing requires_grad is "
         "False); the other four fields from its framework's tensor_layout.",
         ("tests/ch04/test_shape_prop.py",)),
    ),
    *_rows(
        "ch05",
        ("minifx/transformer.py", "Transformer.placeholder", "a placeholder in the new graph",
         "Make a placeholder of the same name in the new graph, with the default that args "
         "carries (if any); hand it back as a Proxy of self.tracer, so that what is done "
         "with it records in the new graph.",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "Transformer.call_function", "re-record a function call",
         "The arguments are already Proxies of the new graph: let self.tracer record the "
         "call as a node of the same op and target, and return the Proxy it gives.",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "Transformer.transform", "run the graph into a new one",
         "Run the old graph with the Interpreter's run, without input/output processing: "
         "each opcode method records into new_graph, so the result holds Proxies. Give "
         "new_graph an output of their nodes, with the old output's meta, and put new_graph "
         "in a GraphModule of self.module.",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "Transformer.get_attr", "an attribute read, recorded",
         "Do not fetch the attribute: let self.tracer record a get_attr node of the same "
         "target, and return its Proxy.",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "Transformer.call_module", "a submodule call, recorded",
         "Find the submodule by its path, then hand it to the tracer's call_module hook "
         "together with its forward; the tracer decides (here: always a leaf).",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "Transformer.run_node", "remember which node is running",
         "Tell the tracer which old node is being run (source_node), run it as the "
         "Interpreter does, and forget it again whatever happens.",
         ("tests/ch05/test_transformer.py",)),
        ("minifx/transformer.py", "_TransformerTracer.create_node",
         "carry the old node's line and wrap mark",
         "Let the Tracer make the node; then, from source_node, copy the stack trace when "
         "the new node lacks one, and the is_wrapped mark when the target is the same.",
         ("tests/ch05/test_transformer.py",)),
    ),
    *_rows(
        "ch06",
        ("minifx/codegen.py", "CodeWriter.spell", "spell any argument as Python source",
         "Literals by repr (floats through spell_float), Nodes by name, containers item by "
         "item, slice, Ellipsis and enum members spelled out; what has no literal spelling "
         "becomes a global.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_hostile_names.py",
          "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.emit_placeholder", "a parameter of forward",
         "Check the target is an identifier; build the parameter from target, annotation "
         "and default into free_vars; a node named apart from its parameter gets a line.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_hostile_names.py")),
        ("minifx/codegen.py", "CodeWriter.emit_call_function", "one node's line of code",
         "operator_format and inplace_format give templates for operators; otherwise "
         "add_global names the function; getattr(x, 'name') prints as x.name; "
         "self.format_args spells the arguments; note wrapped functions.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_graph_module.py",
          "tests/ch06/test_codegen_writer.py")),
        ("minifx/codegen.py", "CodeWriter.emit_call_method", "a method call's line",
         "Spell the object, pick attribute syntax or getattr with a quoted name, and "
         "format the other arguments.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_hostile_names.py")),
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
        ("minifx/codegen.py", "CodeWriter.emit_output", "the return line",
         "Let the CodeGen write the return of the spelled argument, end the line, and "
         "note the return annotation when the node has a type.",
         ("tests/ch06/test_codegen.py",)),
        ("minifx/codegen.py", "CodeWriter.write", "walk the graph, one line per node",
         "Refuse an unknown op; in verbose mode let stack_comment write where the node came "
         "from; dispatch to the emit method named after the op; end most lines with "
         "emit_frees; finish.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_graph_module.py")),
        ("minifx/graph_module.py", "_forward_from_src", "run the source, keep its lines",
         "Name the source uniquely, put its lines in linecache (dropped when owner dies), "
         "compile it, exec it in a copy of the globals, and hand back forward.",
         ("tests/ch06/test_codegen.py", "tests/ch06/test_graph_module.py")),
        ("minifx/graph_module.py", "GraphModule.recompile", "regenerate forward",
         "Ask the graph for its python_code, with 'self' as the root module's name; keep the "
         "source in self._code; install what _forward_from_src makes as the forward of "
         "type(self); return the PythonCode.",
         ("tests/ch06/test_graph_module.py",)),
        ("minifx/graph_module.py", "_instance_class", "a class of its own per instance",
         "Combine cls with the framework's module class once (cached by the pair); then "
         "make a fresh subclass of that for this one instance.",
         ("tests/ch06/test_graph_module.py",)),
        ("minifx/codegen.py", "CodeWriter.emit_get_attr", "an attribute read's line",
         "The left side as every node's; the right side is the target spelled as a path "
         "from the module's name, with getattr for atoms that are no identifiers.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.emit_call_module", "a submodule call's line",
         "Spell the module as a path from the module's name, as get_attr does, and call "
         "it with the node's arguments spelled.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.format_args", "the inside of a call",
         "Spell the positional arguments, then the keyword ones as key = value; keys that "
         "cannot be keywords go into one ** dict at the end.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.finish", "the def line and the indented body",
         "Pick the body (or pass), let the body transformer see it, add the wrap lines "
         "above, then the def line from gen_fn_def and the body indented; hand back a "
         "PythonCode with the globals.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.add_global", "bind an object as a global",
         "Answer a known object as before; a package path goes through spell_package; "
         "otherwise name it with the namespace and bind it, refusing a name taken by "
         "another object.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.spell_package", "tensor.sigmoid, bound by its package",
         "Bind the first part of the path once, under its own name unless a node or "
         "parameter took it; spell the rest after it.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.spell_builtin", "getattr, unless a parameter took it",
         "A free name is its own spelling; a taken one gets one alias from the namespace, "
         "bound to the builtin, and keeps it.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.spell_type", "spell an annotation",
         "Classes, the empty tuple, X | Y unions, generics with their parameters, then "
         "anything else: each case in the order the docstring gives, binding what is no "
         "builtin.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "_names_in_use", "the names globals must not take",
         "One pass over the nodes: collect names, refusing a repeated or illegal one; a "
         "placeholder adds its parameter's name without stars.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "_package_path", "can a callable print as tensor.sigmoid",
         "Rule out what cannot be a path, ask qualified_name, check the package and the "
         "atoms, and make sure the path leads back to the very object.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/codegen.py", "CodeWriter.spell_float", "a float as source",
         "repr does it, except for infinity and nan, which are names of the code: spell "
         "the name as a builtin, keeping the sign.",
         ("tests/ch06/test_codegen_writer.py", "tests/ch06/test_codegen.py",
          "tests/ch06/test_hostile_names.py", "tests/ch06/test_shadowing_and_dict_roots.py")),
        ("minifx/graph_module.py", "_module_base_for", "which module class a root asks for",
         "A module root: its framework's module class. A dict root: the first value that "
         "its own framework calls a module or a tensor decides; none means tensor's.",
         (_GMB + "test_the_root_decides_the_module_class",
          _GM + "test_instances_share_one_combined_class_and_each_gets_its_own_subclass")),
        ("minifx/graph_module.py", "_install", "put one value in place, tensors as buffers",
         "Find the value's framework (from the table when one is given, filling it); a "
         "tensor that is no parameter is registered as a buffer, anything else is set.",
         (_GMB + "test_a_dict_root_installs_tensors_as_buffers_and_the_rest_as_attributes",
          _GMB + "test_install_asks_the_frameworks_table_first_and_fills_it",
          _GMB + "test_a_plain_tensor_attribute_becomes_a_buffer",
          _GM + "test_copies_only_what_the_graph_names")),
        ("minifx/graph_module.py", "GraphModule._parent_of",
         "walk to the module that holds a target",
         "Split off the last atom; answer from walked when the path is there; else walk from "
         "self, making missing modules empty, refusing anything that is no module; remember.",
         (_GMB + "test_parent_of_makes_the_missing_modules_and_remembers_each_path",
          _GMB + "test_parent_of_refuses_a_non_module_on_the_way",
          _GMB + "test_a_dict_root_installs_shallow_targets_first_like_torch_fx",
          _GM + "test_dict_root_puts_a_child_inside_its_parent",
          _GM + "test_dict_root_with_a_tensor_where_a_parent_module_should_be_is_refused",
          _GM + "test_submodule_api")),
        ("minifx/graph_module.py", "GraphModule._copy_attr", "copy one target from the root",
         "Walk the parent atoms on both sides at once (or take the pair from walked), making "
         "empty modules on ours, stopping early when ours is already the root's object; "
         "then install the last atom and forget the paths it replaced.",
         (_GMB + "test_a_module_root_copies_what_the_graph_names_like_torch_fx",
          _GMB + "test_the_missing_parts_of_a_target_are_named",
          _GMB + "test_siblings_walk_their_path_once",
          _GMB + "test_copy_attr_remembers_the_walked_paths_and_forgets_what_it_replaces",
          _GMB + "test_modules_are_compared_by_identity_not_equality",
          _GM + "test_copies_only_what_the_graph_names",
          _GM + "test_missing_target_named")),
        ("minifx/graph_module.py", "GraphModule.__init__",
         "copy what the graph names, then compile",
         "Initialise the module and name its class; then one pass over the get_attr and "
         "call_module nodes: copy from a module root, or collect a dict root's targets and "
         "install them shallow first; last, assign the graph.",
         (_GMB + "test_init_shares_its_tables_and_names_the_class",
          _GMB + "test_a_dict_root_missing_a_target_is_refused",
          _GMB + "test_a_dict_root_installs_shallow_targets_first_like_torch_fx",
          _GMB + "test_a_torch_root_passes_training_like_torch_fx",
          _GMB + "test_siblings_walk_their_path_once",
          _GM + "test_is_a_tensor_module_and_a_graph_module",
          _GM + "test_copies_only_what_the_graph_names",
          _GM + "test_dict_root",
          _GM + "test_dict_root_puts_a_child_inside_its_parent",
          _GM + "test_dict_root_with_a_tensor_where_a_parent_module_should_be_is_refused",
          _GM + "test_graph_setter_recompiles",
          _GM + "test_over_a_torch_root_it_is_a_torch_module_matching_torch_fx")),
        ("minifx/graph_module.py", "GraphModule.print_readable", "the code as a class",
         "The class line names the framework's package; under it the verbose code, indented; "
         "then each GraphModule child as a nested class; print if asked, return the text.",
         (_GMB + "test_print_readable_of_nested_graph_modules_like_torch_fx",
          _GM + "test_code_and_str_match_torch_fx",
          _GM + "test_print_readable_prints",
          _GM + "test_nested_graph_modules_print_readable_like_torch_fx",
          _GM + "test_print_readable_with_stack_traces_matches_torch_fx",
          _GM + "test_over_a_torch_root_it_is_a_torch_module_matching_torch_fx")),
        ("minifx/graph_module.py", "GraphModule.__deepcopy__",
         "a deep copy with a class of its own",
         "Make the new instance from the shared class and note it in memo first; copy the "
         "state and the graph through memo; give it the name; install the graph.",
         (_GMB + "test_deepcopy_keeps_the_identities_a_memo_shares",
          _GMB + "test_deepcopy_gets_a_class_of_its_own_next_to_the_original",
          _GMB + "test_deepcopy_runs_a_subclass_s_own_recompile",
          _GMB + "test_deepcopy_installs_the_graph_through_a_subclass_s_own_recompile",
          _GM + "test_deepcopy",
          _GM + "test_deepcopy_of_a_graph_edited_since_recompile_runs_the_edited_graph",
          _GM + "test_a_copy_keeps_its_generated_lines_for_tracebacks_after_the_original_dies",
          _GM + "test_over_a_torch_root_it_is_a_torch_module_matching_torch_fx")),
        ("minifx/graph_module.py", "GraphModule.delete_all_unused_submodules",
         "drop the submodules no node reaches",
         "Collect the used paths: every prefix of a get_attr or call_module target, and all "
         "that lies under a called module; delete every other named module.",
         (_GMB + "test_delete_all_unused_submodules_like_torch_fx",
          _GMB + "test_delete_all_unused_submodules_passes_over_a_target_not_installed_yet",
          _GM + "test_submodule_api")),
        ("minifx/graph_module.py", "GraphModule.delete_submodule", "remove one submodule",
         "Walk the parent atoms, answering False at a missing one or a non-module; the last "
         "atom must be one of the parent's registered submodules; delete it, answer True.",
         (_GMB + "test_delete_submodule_like_torch_fx", _GM + "test_submodule_api")),
        ("minifx/graph_module.py", "GraphModule.__reduce__", "pickle by parts",
         "The rebuild function, then a tuple: the logic class found on the shared class's "
         "MRO, the framework base, the state, the graph, the class name.",
         (_GMB + "test_pickle_keeps_the_subclass_the_name_and_the_state",
          _GM + "test_pickle_round_trip",
          _GM + "test_over_a_torch_root_it_is_a_torch_module_matching_torch_fx")),
        ("minifx/graph_module.py", "_rebuild_graph_module", "unpickle by parts",
         "A bare instance of a fresh instance class (no __init__), its dict updated with the "
         "state, its class renamed, then the graph assigned.",
         (_GMB + "test_rebuild_does_not_run_init_and_compiles_the_graph",
          _GMB + "test_pickle_keeps_the_subclass_the_name_and_the_state",
          _GM + "test_pickle_round_trip",
          _GM + "test_over_a_torch_root_it_is_a_torch_module_matching_torch_fx")),
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
        ("minifx/experimental/optimization.py", "fuse", "fold every Conv -> BN pair of a model",
         "Copy unless inplace, trace unless no_trace, edit a copy of the graph; per pattern of "
         "the framework, fold each matching pair whose layer has one reader and whose "
         "BatchNorm tracks running statistics; refuse training mode.",
         ("tests/ch07/test_fuse.py",)),
        ("minifx/subgraph_rewriter.py", "_SubgraphMatcher._match_node",
         "match one pattern node against the graph",
         "Same kind of node, consistent with what is already mapped, and args that match "
         "recursively; placeholders match anything.",
         ("tests/ch07/test_subgraph_rewriter.py",)),
        ("minifx/subgraph_rewriter.py", "_SubgraphMatcher._match_args",
         "match two argument lists item by item",
         "Same length; Nodes through _match_node, sequences recursively, a placeholder may "
         "stand for a constant (the same one each time), constants by type and value.",
         ("tests/ch07/test_subgraph_rewriter.py",)),
        ("minifx/subgraph_rewriter.py", "_is_convex", "would merging the nodes make a cycle",
         "Search forwards from the users outside the set; meeting the set again means a path "
         "left it and came back.",
         ("tests/ch07/test_subgraph_rewriter.py",)),
        ("minifx/subgraph_rewriter.py", "_SubgraphMatcher.match",
         "find every occurrence of the pattern",
         "Candidates per anchor in graph order; match the anchors one after the other, each "
         "attempt on a copy of the pairs; keep contained, convex, non-overlapping matches.",
         ("tests/ch07/test_subgraph_rewriter.py",)),
        ("minifx/subgraph_rewriter.py", "replace_pattern", "put the replacement in each match",
         "Per match: check the inputs agree, follow earlier replacements, copy the replacement "
         "graph in before the first reader, rewire the readers, erase the old nodes; then "
         "recompile and bring the replacement module's attributes.",
         ("tests/ch07/test_subgraph_rewriter.py",)),
    ),
    *_rows(
        "ch08",
        ("minifx/compiler/compiled.py", "describe", "the cache key of one input",
         "Tensors by TensorSpec(shape, dtype); lists, tuples and dicts item by item, "
         "tagged with their type; other values by (type name, value), or repr if unhashable.",
         ("tests/ch08/test_compile.py",)),
        ("minifx/compiler/compiled.py", "CompiledModel.__call__", "look the inputs up in the cache",
         "Bind the call to the signature (defaults too) unless it is all positional; the key "
         "describes each input; compile a key seen for the first time; run what the cache holds.",
         ("tests/ch08/test_compile.py",)),
        ("minifx/compiler/compiled.py", "CompiledModel._compile", "trace, then ask the backend",
         "Inputs that hold no tensor become concrete_args; trace the model with them; the "
         "backend's answer must be callable.",
         ("tests/ch08/test_compile.py",)),
        ("minifx/compiler/elementwise.py", "_canonical_name", "which operation a node performs",
         "Methods by their name; Python operators from _OPERATORS; other functions by "
         "qualified_name, split into the library package and the rest (_FUNCTIONS).",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/elementwise.py", "_bind", "arguments by parameter name",
         "Positional args fill the names in order; keywords fill the rest; a keyword that is no "
         "parameter passes only at its harmless value; anything odd gives None.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/elementwise.py", "as_pointwise", "is this node elementwise",
         "_canonical_name gives the op's name, then _bind its args to _PARAMETERS[op] "
         "(x.where(c, y) is reordered); clamp needs number bounds; operands are Nodes or "
         "numbers, at least one a Node.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/elementwise.py", "as_reduction", "is this node a row reduction",
         "Find the op (method or library function in REDUCTIONS), drop harmless keywords, "
         "bind to input, dim, keepdim; the dim kept must be the last.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/fusion.py", "_dtypes_fit", "can the kernels compute these dtypes",
         "No unknown dtype; comparisons: float operands, bool result; others: a float result, "
         "a bool condition for where, float or bool operands.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/fusion.py", "fusible_nodes", "every node a kernel may hold",
         "Per node in order: a pointwise form whose dtypes fit, or else a row reduction.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/fusion.py", "_joins", "may this node join a group with reductions",
         "An elementwise node needs no full shape yet, or the full or row shape; a reduction "
         "needs the same full shape and members of the two shapes only.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/fusion.py", "find_groups", "group neighbouring elementwise nodes",
         "Start from each unclaimed fusible node, last first; an input joins the group "
         "once all of its users are in it; each group and the list are in graph order.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/kernel.py", "start_kernel", "names, inputs and the kernel's name",
         "Reserve the kernel's own names first; collect the outside nodes the members read, "
         "once each; name the function after the first four distinct ops.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/kernel.py", "expression", "one operation as a scalar expression",
         "Pick the compute dtype (the common one for comparisons); clamp nests maximum and "
         "minimum; where reads its condition as bool; constant powers as ** n, sqrt or rsqrt; "
         "otherwise the op's template.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/kernel.py", "kernel_source", "write a fused kernel's source",
         "Names come from a Namespace; the outside nodes the members read are the array "
         "parameters (read as name[i]); each member is one scalar line in its compute "
         "dtype, reading the lines before it; the last one is stored into out[i].",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/fusion.py", "replace_group", "one kernel node for a group",
         "Collect the dtypes; a flat kernel, or a row kernel around the reductions; insert the "
         "call before the last member, fill its meta, move the readers, erase the group.",
         ("tests/ch08/test_fusion.py",)),
        ("minifx/compiler/fusion.py", "plan_buffers", "hand dead buffers to kernels",
         "For each kernel without a buffer, the first earlier fresh intermediate of its shape "
         "and dtype whose readers all ran before it, are fresh producers and did not write "
         "into it; append it as an argument.",
         ("tests/ch08/test_buffer_reuse.py",)),
    ),
    *_rows(
        "ch09",
        ("minifx/frameworks/torch_framework.py", "torch_qualified_name",
         "spell a torch function as torch.fx does",
         "__module__ + __name__ (never __qualname__); Tensor descriptors are "
         "torch.Tensor.name; a builtin without a module is looked up in torch and "
         "torch.nn.functional; torch._ops prints as torch.ops; not torch's gives None.",
         ("tests/ch09/test_parity.py", "tests/ch09/test_adapter_hooks.py",
          "tests/ch09/test_torch_names.py")),
        ("minifx/frameworks/torch_framework.py", "TorchFramework.method_name",
         "which torch callables are Tensor methods",
         "A member of _TENSOR_METHODS, or a property getter (named '__get__'), is a Tensor "
         "method: answer its name; anything else gives None.",
         ("tests/ch09/test_parity.py", "tests/ch09/test_adapter_hooks.py",
          "tests/ch09/test_torch_names.py")),
        ("minifx/frameworks/torch_framework.py", "_hooks_of", "name a module's forward hooks",
         "Pre-hooks, then hooks, from the module's two hook dicts; label each by its "
         "qualified name, or its type's name when it has none.",
         ("tests/ch09/test_adapter_hooks.py",)),
        ("minifx/frameworks/torch_framework.py", "refuse_lost_hooks",
         "refuse hooks a trace would drop",
         "No hooks: nothing to do. Else one RuntimeError saying where (the root or the "
         "submodule's path), the module's type, the hooks, and the two ways out.",
         ("tests/ch09/test_adapter_hooks.py",)),
        ("minifx/frameworks/torch_framework.py", "_torch_objects",
         "the torch objects dotted names name",
         "Follow each dotted name from the torch module one attribute at a time; keep what "
         "exists, as a frozen set.",
         ("tests/ch09/test_adapter_hooks.py",)),
        ("minifx/frameworks/torch_framework.py", "TorchFramework.has_side_effect",
         "does a torch call have a side effect",
         "The known set first; an op packet answers as its default overload; an overload by "
         "its schema's mutability, the set, or (when asked) its random seeding.",
         ("tests/ch09/test_adapter_hooks.py",)),
        ("minifx/frameworks/torch_framework.py", "torch_layout",
         "strides, memory format and qparams",
         "The first memory format the tensor is contiguous in (none for sparse); qparams by "
         "the quantization scheme, per tensor or per channel.",
         ("tests/ch09/test_adapter_hooks.py",)),
        ("minifx/compare.py", "load_root", "load the model named on the command line",
         "Split at the last colon; import a file or a module; fetch the name; build a class or "
         "call a builder; anything else that is no function or module is an error.",
         ("tests/ch09/test_compare_parts.py",)),
        ("minifx/compare.py", "_parse_shape", "read an --input-shape",
         "Shape before the colon, dtype after it; each problem a CompareError that quotes "
         "the text.",
         ("tests/ch09/test_compare_parts.py",)),
        ("minifx/compare.py", "output_difference", "why two outputs differ",
         "Recurse on what the expected value is: a tensor, a sequence, a dict, a plain "
         "value; name the place in each message.",
         ("tests/ch09/test_compare_parts.py",)),
        ("minifx/compare.py", "diff_rows", "line up two codes side by side",
         "Drop blank lines; match the _canonical forms with difflib's SequenceMatcher; "
         "equal runs give ' ' (or '~') rows, other runs pair up as '|', then '<' or '>'.",
         ("tests/ch09/test_compare_cli.py::test_side_by_side_marks_the_differences",
          "tests/ch09/test_compare_parts.py", "tests/ch09/test_diff_rows.py")),
        ("minifx/compare.py", "side_by_side", "print two texts in two columns",
         "diff_rows, perhaps only the differing rows; size the two columns from the width; "
         "headers and dashes; each row cut to its columns, the mark on its first line only.",
         ("tests/ch09/test_compare_parts.py",)),
        ("minifx/compare.py", "_compare_texts", "the graph and code verdicts",
         "For the graph and the code: rows, a verdict heading, the table unless there is "
         "nothing to show; then each known reason once.",
         ("tests/ch09/test_compare_parts.py",)),
        ("minifx/compare.py", "_compare_outputs", "the outputs verdict",
         "Run both sides; both ran: compare outputs; both failed alike: agreement; otherwise "
         "say which side raised.",
         ("tests/ch09/test_compare_parts.py",)),
    ),
    *_rows(
        "ch10",
        ("minifx/quantization/observer.py", "qparams_from_range", "scale and zero point",
         "Widen [min, max] to include 0 (float32). Affine: scale = (max - min) / (qmax - "
         "qmin), at least eps; zero point qmin - round(min / scale), clipped. Symmetric: "
         "scale = max(-min, max) / ((qmax - qmin) / 2); zero point 0 or the middle.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/observer.py", "ObserverBase.__init__", "an observer's settings",
         "Keep the settings; the integer range is given (both bounds, around 0) or follows "
         "from the dtype; start with an empty running range.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/observer.py", "ObserverBase._qparams",
         "qparams of a range, or the defaults",
         "Without data, torch's warning and scale 1, zero point 0; else qparams_from_range "
         "with the observer's settings.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/observer.py", "MinMaxObserver.observe", "track the range",
         "Keep the running min and max over every batch seen.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/observer.py", "HistogramObserver.observe",
         "add a batch to the histogram",
         "The first batch sets range and counts; a batch past the range widens it, rebinning "
         "the counts first; then add the batch's counts.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/observer.py", "HistogramObserver.calculate_qparams",
         "qparams of the best clipping range",
         "Search the histogram for the clipping range of least error, then its qparams; "
         "without data, the defaults.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/qconfig.py", "QConfigMapping.qconfig_for",
         "which qconfig a module gets",
         "The module name, then each parent (drop the last dotted part, down to ''), "
         "then object_type, then global_qconfig.",
         ("tests/ch10/test_observers.py",)),
        ("minifx/quantization/prepare.py", "node_kind", "how a node takes part",
         "By the module's type, the function or the method name, in the op table of the "
         "backend; a binary op needs two tensors.",
         ("tests/ch10/test_passes.py::test_each_node_has_its_kind",
          "tests/ch10/test_passes.py::test_a_binary_op_needs_two_tensors_and_an_unknown_op_stays_float")),
        ("minifx/quantization/prepare.py", "_Observers.observe", "put one observer after a node",
         "Name it by the count, add the module, insert its node after the watched one, and "
         "give it the node's other readers.",
         ("tests/ch10/test_passes.py::test_observers_go_where_torch_puts_them_and_are_shared_as_torch_shares_them",)),
        ("minifx/quantization/prepare.py", "_Observers.observe_inputs",
         "observe a node's inputs",
         "Each tensor input not observed yet gets an observer; a cat makes all of them, and "
         "its output's, the first input's observer.",
         ("tests/ch10/test_passes.py::test_observers_go_where_torch_puts_them_and_are_shared_as_torch_shares_them",)),
        ("minifx/quantization/prepare.py", "insert_observers", "the observer-insertion pass",
         "Walk the nodes; by kind and qconfig: share the input's observer, or observe the "
         "inputs and then the output (after a fused ReLU; fixed qparams for fixed ops).",
         ("tests/ch10/test_passes.py::test_observers_go_where_torch_puts_them_and_are_shared_as_torch_shares_them",
          "tests/ch10/test_passes.py::test_the_int8_model_is_torchs")),
        ("minifx/quantization/convert.py", "insert_quantize_dequantize",
         "observers become quantize / dequantize",
         "Per observer node: its qparams as two named buffers, two get_attr nodes, a quantize "
         "and a dequantize in its place; warn once about observers without data.",
         ("tests/ch10/test_passes.py::test_the_reference_model_is_torchs",
          "tests/ch10/test_passes.py::test_an_uncalibrated_observer_warns_once_naming_every_silent_observer")),
        ("minifx/quantization/lower.py", "_lower_layer", "swap a layer for its int8 twin",
         "Only with a quantize as its only reader; build the twin from the float module, its "
         "quantized weight and the quantize node's qparams; bypass the sandwich.",
         ("tests/ch10/test_passes.py::test_the_int8_model_is_torchs",
          "tests/ch10/test_passes.py::"
          "test_a_layer_mapped_to_none_between_quantized_ones_stays_float_as_torchs")),
        ("minifx/quantization/lower.py", "_lower_binary", "an add or mul in int8",
         "Take in the ReLU that follows; with a quantize as only reader, one call of the "
         "quantized op on the quantized inputs with the output's qparams.",
         ("tests/ch10/test_passes.py::test_the_int8_model_is_torchs",)),
        ("minifx/quantization/lower.py", "lower_to_quantized", "the lowering pass",
         "Walk the nodes; by kind, lower layers, binary ops, ops that run on the integers "
         "and size(); then drop unused submodules and recompile.",
         ("tests/ch10/test_passes.py::test_the_int8_model_is_torchs",)),
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
         ("tests/ch11/test_round_trip.py", "tests/ch11/test_copy_state.py")),
        ("minifx/convert/twins.py", "refuse_lost_settings",
         "refuse settings the twin cannot take",
         "Compare the two classes' constructor arguments; a setting only torch has is lost "
         "unless it holds its default; name every lost one in one TwinError.",
         ("tests/ch11/test_errors.py", "tests/ch11/test_graph_pass.py")),
        ("minifx/convert/twins.py", "make_twin", "build a torch leaf's tensor.nn twin",
         "Find the twin class; refuse lost settings; build it from the module's attributes "
         "named like its constructor's arguments; copy the weights; keep the mode.",
         ("tests/ch11/test_graph_pass.py", "tests/ch11/test_errors.py",
          "tests/ch11/test_convert_everyday.py::"
          "test_multihead_attention_converts_with_its_settings_and_weights")),
        ("minifx/convert/graph_pass.py", "GraphConverter.get_attr",
         "a weight becomes a tensor",
         "Fetch the value from the root; a torch tensor is converted once into the "
         "attributes; anything else is a problem.",
         ("tests/ch11/test_graph_pass.py",)),
        ("minifx/convert/graph_pass.py", "GraphConverter.call_module",
         "a leaf becomes its twin",
         "Make the twin once per target and keep it in the attributes; a TwinError is a "
         "problem naming the node and the class.",
         ("tests/ch11/test_graph_pass.py",)),
        ("minifx/convert/graph_pass.py", "GraphConverter.call_function",
         "map a torch function to tensor's",
         "table.functions first; getattr on a Node needs an attribute tensor has; "
         "operators go through check_operator; Python's own functions pass; anything "
         "else is a problem with a hint (and the target stays).",
         ("tests/ch11/test_round_trip.py", "tests/ch11/test_graph_pass.py",
          "tests/ch11/test_convert_calls.py")),
        ("minifx/convert/graph_pass.py", "GraphConverter.check_operator",
         "an operator on a tensor needs its dunder",
         "Only operands known to be tensors count; the dunder, the plain one for an in-place "
         "operator, the reflected one when a number comes first.",
         ("tests/ch11/test_graph_pass.py", "tests/ch11/test_errors.py")),
        ("minifx/convert/graph_pass.py", "GraphConverter.keywords",
         "the keywords the twin keeps",
         "Find the twin and its keyword names; keep what it accepts; drop torch's defaults; "
         "note the rest.",
         ("tests/ch11/test_errors.py", "tests/ch11/test_graph_pass.py")),
        ("minifx/convert/graph_pass.py", "GraphConverter.argument",
         "an argument in the new graph",
         "Nodes map to their copies; other values through the value converter, a refusal "
         "becoming a problem.",
         ("tests/ch11/test_graph_pass.py",)),
        ("minifx/convert/graph_pass.py", "GraphConverter.convert", "the walk over the graph",
         "One rule per op gives the target; map args and kept keywords through argument; "
         "create the copy with the same name and a converted type; keep the meta.",
         ("tests/ch11/test_graph_pass.py",)),
        ("minifx/convert/graph_pass.py", "tensor_valued_nodes",
         "which nodes hold tensors",
         "Run a copy of the graph on copies of the inputs with an Interpreter that notes the "
         "nodes whose values are torch tensors.",
         ("tests/ch11/test_graph_pass.py", "tests/ch11/test_errors.py")),
        ("minifx/convert/graph_pass.py", "torch_to_tensor", "the conversion pass",
         "Refuse what is not a model; check weights, hooks and inputs; trace with stack "
         "traces; convert; tidy the user's module; raise every problem, or build the "
         "GraphModule.",
         ("tests/ch11/test_graph_pass.py", "tests/ch11/test_errors.py")),
    ),
    *_rows(
        "ch12",
        ("tensor/dispatch.py", "_push", "put a mode on the stack",
         "Append to the stack; the first mode on an empty stack also turns the router on.",
         ("tests/ch12/test_mode_stack.py",)),
        ("tensor/dispatch.py", "_pop", "take the top mode off the stack",
         "Pop the last mode and return it; the stack left empty turns the router off.",
         ("tests/ch12/test_mode_stack.py",)),
        ("tensor/dispatch.py", "call_with_modes", "hand a primitive to the top mode",
         "The top mode leaves the stack while its handler runs and comes back after, "
         "whatever happens; use the stack helpers that also switch the router.",
         ("tests/ch12/test_modes.py", "tests/ch12/test_mode_stack.py")),
        ("tensor/dispatch.py", "TensorDispatchMode.__enter__", "enter a mode, once",
         "Refuse a mode that is already somewhere on the stack; otherwise push it and hand "
         "it back for the with statement's as.",
         ("tests/ch12/test_mode_stack.py",)),
        ("tensor/dispatch.py", "TensorDispatchMode.__exit__", "leave a mode, from the top",
         "Only the mode on top may leave; an empty stack or another mode on top is the "
         "stack error. Then pop.",
         ("tests/ch12/test_mode_stack.py",)),
        ("tensor/dispatch.py", "_kernel", "the front end computes while a kernel runs",
         "Remember whether the router was on; only then switch it off before the block "
         "and on again after it, whatever the block does.",
         ("tests/ch12/test_mode_stack.py",)),
        ("minifx/experimental/proxy_tensor.py", "_Recorder.node_of",
         "find or make the node of a tensor argument",
         "Look the array's identity up among the bound nodes first. Else a name: the "
         "module's, a refusal for a view of traced memory, or a new numbered constant; "
         "then a get_attr node, bound.",
         ("tests/ch12/test_make_fx_recording.py",)),
        ("minifx/experimental/proxy_tensor.py", "_Recorder.as_arg",
         "a nested value with each tensor as its node",
         "Recurse: a Tensor becomes its node; a tuple or a list is rebuilt as the same type "
         "from its items; a dict keeps its keys; anything else comes back as it is.",
         ("tests/ch12/test_make_fx_as_arg.py",)),
        ("minifx/experimental/proxy_tensor.py", "_Recorder.__tensor_dispatch__",
         "record a primitive call as a node",
         "A decomposition runs instead, with the recorder entered again; otherwise make "
         "the node from the arguments' nodes (arg_nodes, as_arg), run the primitive "
         "beneath the mode, bind a Tensor result to the node.",
         ("tests/ch12/test_make_fx.py", "tests/ch12/test_make_fx_recording.py")),
        ("minifx/experimental/proxy_tensor.py", "make_fx", "trace a function by running it",
         "Check the mode, split the table by key kind; the traced function builds a graph "
         "and a recorder, fakes the inputs when asked, makes the placeholders, runs fn "
         "under the stacked modes, writes the output, tidies and wraps the graph.",
         ("tests/ch12/test_make_fx_recording.py",)),
        ("minifx/passes/fake_tensor_prop.py", "FakeTensorProp.run_node",
         "record each node's fake value",
         "Let the Interpreter run the node; map_aggregate over the result keeps fake "
         "tensors and numbers, makes real tensors fake with the pass's mode, and turns the "
         "rest into None; store it in meta unless it is None.",
         ("tests/ch12/test_fake_tensor_prop.py",)),
        ("minifx/passes/fake_tensor_prop.py", "FakeTensorProp.propagate",
         "fake inputs, then the run",
         "Turn each tensor argument into its fake twin with the pass's mode, leave the "
         "others, and hand them to the method that runs without converting.",
         ("tests/ch12/test_fake_tensor_prop.py",)),
        ("minifx/passes/fake_tensor_prop.py", "FakeTensorProp.propagate_dont_convert_inputs",
         "run the graph under the fake mode",
         "Enter the pass's mode around the Interpreter's own run of the arguments.",
         ("tests/ch12/test_fake_tensor_prop.py",)),
    ),
]


# The second level of each hint (``hint chNN.K --more``), keyed by the function's
# qualified name: the order of the steps and the traps, still in words. Neither
# level is the code (tests/learn checks that no hint holds a line of the reference).
MORE_HINTS: dict[str, str] = {
    "_ordered_types":
        "A type met before is skipped, so each type appears once. Compare a new type with "
        "the earlier ones in order: before the first one it is a subclass of, it goes in; "
        "when there is none, at the end. issubclass, not equality.",
    "_collect":
        "found is a list you append to, in argument order. Inert kinds are skipped; a "
        "container recurses into the item, a mapping into its values; a handler is always "
        "kept, a plain Tensor subclass only when _subclass_dispatch_off is false. A type "
        "missing from _KIND is classified by _kind_of.",
    "handle_tensor_function":
        "Every handler gets the same tuple of types. When all of them decline, raise a "
        "TypeError that names the function (_describe) and each type as module.qualname.",
    "coalesce":
        "Keep one list of strides per operand, built beside the new shape. A merged dim "
        "multiplies the last size by shape[d], and each operand's last stride becomes its "
        "(inner) stride at d. The merge needs every operand to agree: one that does not "
        "keeps the dims apart.",
    "softmax":
        "An empty array comes back as a copy. The max keeps its reduced axis so that it "
        "broadcasts against the input, and so does the sum; NumPy's reduce ufuncs take an "
        "axis and keepdims.",
    "broadcast_shapes":
        "Fill a result list of the padded length from its last position to its first, so "
        "that the first mismatch met is the last one; the dimension in the message is that "
        "position. The text is torch's sentence, then in_op with the op's name and the two "
        "shapes as given (not padded).",
    "matmul_shape":
        "Count the rows of the first operand as the product of all its sizes but the last "
        "(math.prod of an empty tuple is 1). A column result drops the last size; a matrix "
        "result swaps it for the columns; a batched one checks the batch broadcast before "
        "the inner sizes, and its count B is the product of the broadcast batch shape.",
    "infer_size":
        "Remember the index of the -1 and the product of the sizes that are not -1. A "
        "shape without -1 fits when that product is numel. With a -1 the product must be "
        "non-zero and divide numel; when it is 0 and numel is 0 too, the -1 is ambiguous.",
    "view_strides":
        "Keep a position in the new shape (from its last dim), the chunk's element count "
        "and the new dims' element count. When a chunk ends, take new dims until their "
        "count reaches the chunk's (size-1 dims always join), then compare the two; the next "
        "chunk starts at the stride of the dim before. Any new dim not taken means None.",
    "storage_of":
        "Divide each byte stride by the item size. The lowest address is the sum of "
        "(size - 1) * stride over the negative strides; the highest, over the positive ones. "
        "Index each dim with a one-long slice, at its last element when the stride is "
        "negative, else at its first; NumPy's as_strided on that corner, with the span's "
        "length and the item size as stride, is the storage; the offset is minus the lowest.",
    "map_kernel":
        "The cap is the range's length when the last stride is 1, else BLOCK. Each turn of "
        "the while loop asks _next_block for the block's length and start, gets the block "
        "with _block, writes the matching slice of out element by element, and moves k on "
        "by the block's length. Decorate the inner function as the docstring says.",
    "zip_kernel":
        "The cap needs both last strides to be 1. The block's row is k // shape[-1] and its "
        "column k % shape[-1]; _next_block gives the first operand's start, the second's is "
        "its row start plus the column times its last stride. Same decorator as map_kernel, "
        "without fastmath.",
    "reduce_strided":
        "The number of rows is the product of every reduced size but the last. For output k, "
        "position gives the base; reduce_run reduces row 0 (the accumulator) and then each "
        "other row; op 0 or 1 adds, 2 or 3 asks _better whether the row's value replaces "
        "the accumulator. Keep the decorator of the stub.",
    "Node.format_node":
        "The users part is [num_users=N]; a node with a type shows it first, through "
        "type_repr. A placeholder with args prints (default=...) after its target. Output "
        "prints as return and its argument. The other ops spell the target with "
        "pretty_target and args and kwargs with _format_arg.",
    "Node.__init__":
        "Test op against OPCODES, then callable(target) for call_function and "
        "isinstance(target, str) for the others; each message starts with Node and the "
        "name. Both edge dicts start empty, the links point at self, and _args and "
        "_kwargs must exist before _update_args_kwargs runs, because it reads "
        "_input_nodes.",
    "copy_arg":
        "Compare type(a) with tuple, list and dict by identity, so that a named tuple "
        "falls through to the general walk. In the list/tuple loop a Node is mapped "
        "(when node_map is given) and then noted; an item that is neither a Node nor a "
        "plain constant is copied by calling copy_arg on it. Build a list, and turn it "
        "into a tuple when a was one.",
    "Node._update_args_kwargs":
        "pop this node from each old input's users (with a default); assign a new dict "
        "to _input_nodes before copying; tuple(new_args) and dict(new_kwargs) go through "
        "copy_arg with that dict; an empty kwargs becomes {}; setdefault adds this node "
        "to each input's users.",
    "Graph.__init__":
        "Node's own __new__, called with the Node class, gives an object with no fields; set "
        "graph, name, op, target, users, _input_nodes, meta, _erased, _args, _kwargs and type "
        "by hand, then _prev and _next to the root itself. _insert is the root's bound "
        "prepend; _len starts at 0; Namespace() and CodeGen() are new for each graph.",
    "_NodeList.__iter__":
        "It is a generator. cur starts at root._next (root._prev when not forward); "
        "keep going until cur is the root again; yield cur unless it is erased; only then move cur "
        "to cur._next (or cur._prev).",
    "Graph._target_to_str":
        "Whether the target is callable decides. For a callable, getattr with a default reads "
        "__name__, the default being the name of the target's type (a partial has no "
        "__name__). A dunder starts and ends with '__': cut two characters from each end. "
        "snake_case is imported from namespace.",
    "Node.is_impure":
        "Return early for placeholder and output. For call_function, test membership in "
        "_side_effectful_functions, then ask has_side_effect with impure_random. For "
        "call_module, only with graph.owning_module: get_submodule raises AttributeError when "
        "the path is missing (pure); else the submodule's _is_impure, read with getattr and a "
        "default of False, made a bool. Everything else is False.",
    "_InsertPoint.__init__":
        "Three assignments: the graph into self._graph, the graph's insertion function as it "
        "is now into self._orig, then new_insert becomes the graph's _insert. __enter__ does "
        "nothing; __exit__ restores _orig.",
    "Graph.output":
        "find_nodes(op='output') gives the existing ones; the message names the first. "
        "create_node('output', 'output', (result,), type_expr=type_expr); the target "
        "names the node.",
    "Graph.output_node":
        "Loop over reversed(self.nodes) and return the first node with op 'output'; after "
        "the loop, raise.",
    "Graph._lint_targets":
        "Skip (continue) every op but get_attr and call_module. Call fetch_path(module, "
        "target) in a try; when it raises AttributeError, raise a RuntimeError from None "
        "instead, its message putting the AttributeError's text after 'but '.",
    "Graph.__reduce__":
        "A dict from node to position (enumerate over self.nodes); map_arg over args and "
        "kwargs with a function that answers _NodeRef(index[n]); the rows in a list; "
        "return the function _rebuild_graph itself and the pair (rows, self._codegen).",
    "_rebuild_graph":
        "Keep a list of the nodes made; map_aggregate each row's args and kwargs with a "
        "function that answers nodes[a.index] for a _NodeRef and a itself otherwise; "
        "create_node(op, target, args, kwargs, name, type_expr), then set its meta.",
    "Graph.describe":
        "type(module).__name__ for the class; itertools.islice(self.nodes, 3) for the first "
        "names; len(self.nodes) > 3 decides the ', ...'; f'{id(self):#x}' for the id.",
    "Graph.print_tabular":
        "Build header and rows first. Import tabulate from its package inside a try. On "
        "ImportError: widths from max(len) per column over header and rows, a helper that "
        "joins the cells, each left-justified to its width, with two spaces and rstrips, and "
        "one print of the lines joined by newlines. Else print what tabulate makes of the "
        "rows with the header as headers.",
    "Graph.__str__":
        "Join the lines with newlines, with none at the end; each node's line is "
        "format_node's text indented by four spaces.",
    "pretty_target":
        "Look at the target's __module__ and __name__: modules 'builtins' and '_operator' "
        "get the prefixes builtins. and operator.; for everything else ask qualified_name, "
        "and fall back to repr when it raises RuntimeError (a functools.partial).",
    "qualified_name":
        "Look __fx_name__ up on the type, not the instance. getattr with a default reads "
        "__name__, __qualname__ and __module__ (a descriptor has no __module__). _resolve "
        "follows a module name and a dotted path, giving None when it fails; compare its "
        "answer with is. A lambda's qualname contains '<lambda>'. Work on the module's "
        "parts as a list and stop at the first parent that does not give the object.",
    "type_repr":
        "A generic alias like list[int] is not a class: check for types.GenericAlias. "
        "Compare the class's __module__ with 'builtins'. The ellipsis is a singleton: "
        "test it with is. types.FunctionType recognises a plain function.",
    "_format_arg":
        "Test Node first. Join the spelled items with ', '. A tuple of one item needs the "
        "trailing comma, as Python writes it. Dict keys print with str, values recursively.",
    "TracerBase.create_arg":
        "The order of the checks matters: Proxy first, then the exact fast types (plain "
        "constants, Nodes, a tuple, an empty dict), then objects with __fx_create_arg__, "
        "then containers by isinstance. A named tuple is rebuilt from its items as "
        "positional arguments; a list stays a list. A Proxy or Node as a dict key is a "
        "TraceError that says where (user_location).",
    "_record_call":
        "No Proxy among the arguments is a TraceError. The first loaded framework that "
        "answers a method name wins. args and kwargs go to create_proxy as they are: it "
        "turns them into node arguments itself.",
    "Tracer.create_args_for_root":
        "co_varnames lists positional, keyword-only, then the *args and **kwargs names. A "
        "module's forward gets self.root as its first argument, with no placeholder. A "
        "tuple of concrete_args pairs with the names by position (a RuntimeError when the "
        "counts differ). Only keyword-only or variadic parameters flatten root_fn.",
    "Tracer.path_of_module":
        "submodule_paths maps modules to paths; a miss there still falls back to the "
        "search. Two modules can be equal without being the same object. The NameError "
        "names the module's type and the root's type, and where it was called "
        "(user_location).",
    "Tracer.call_module":
        "Ask path_of_module first: is_leaf_module needs the path. A module traced through "
        "is checked by its framework, then forward runs with the same arguments and its "
        "result is returned. A leaf gives the Proxy of its one call_module node.",
    "Tracer.getattr":
        "Ask the value's framework whether it is a parameter, and whether it is a tensor. "
        "Search the parameters first, then (only with the flag) the buffers; a search "
        "that finds nothing falls through to the next case. The cache dict belongs to "
        "one trace: trace makes it and the patched __getattr__ passes it in.",
    "Tracer._patch_modules":
        "loaded_frameworks() gives each framework, whose module_class is patched. Read "
        "the original methods before patching, and bind them as default arguments of the "
        "new functions, or every closure sees the last framework's. The forward handed "
        "to call_module is a small function of (*args, **kwargs) calling the original "
        "__call__ on the module. Look the forward's __globals__ up with getattr and "
        "defaults, since a module may lack either.",
    "Tracer.trace":
        "The framework of the root, asked is_module, tells the two cases apart. Read the "
        "function's __globals__ and its return annotation before create_args_for_root, which may "
        "hand back another function (a flattened signature). Enter the _Patcher with a "
        "with statement, so a failing forward still restores the module class. The "
        "output node is created with create_node (op and target both 'output'), its "
        "single argument the result turned into a node argument.",
    "_install_magic_methods":
        "_mm.dunder and _mm.reflected_dunder give the names, _mm.operator_function the "
        "operator. A function defined in a loop reads the loop variable when it runs, not "
        "when it is made: bind the operator as a default argument. The recorded kwargs "
        "are an empty dict. setattr on the Proxy class itself, after setting __name__.",
    "Tracer._specialize":
        "A counter from itertools, started at one, numbers the placeholders. The default "
        "is the signature's parameter of that name; inspect.Parameter.empty means none. "
        "Compare the leaf's exact type, not isinstance: an IntEnum member is not checked. "
        "The assert node's first argument is the Proxy comparison itself (a Proxy ==, "
        "which records a node). The warning points at the caller's caller.",
    "Tracer.create_arg":
        "The framework's is_parameter, is_tensor and is_module answer the kinds; test the "
        "parameter before the tensor (a parameter is a tensor too). Loop over the named "
        "members and compare with is. The message of each NameError may add where it "
        "happened (user_location).",
    "find_proxy":
        "A loop over args may return a Proxy it meets before any container, and must "
        "stop at the first container, which may hide an earlier one. Then let "
        "map_aggregate visit (args, kwargs) with a function that appends each Proxy to a "
        "list and returns its argument unchanged.",
    "CodeWriter.spell_float":
        "Strip the leading '-' to find the bare text; self.custom_builtins holds inf and "
        "nan. Replace the bare text in the repr by spell_builtin's answer.",
    "map_aggregate":
        "Test for a leaf first (not one of _CONTAINERS). A named tuple is rebuilt from its "
        "items as positional arguments, a plain tuple from the list of items; lists stay "
        "lists; dicts keep their keys; a slice maps start, stop and step.",
    "Node.prepend":
        "Return at once when x is self. Compare graphs by identity. Unhooking: x's "
        "previous node's next becomes x's next, and x's next node's previous becomes x's "
        "previous. Then four links change: the old previous of self points forward to x, "
        "x back to it and forward to self, self back to x. The graph's count does not "
        "change: x was already one of its nodes (or is counted by create_node).",
    "Graph.create_node":
        "Check in this order: op, then args, then kwargs, after None became an empty "
        "tuple or dict, so that a refused node is never inserted. The candidate is the "
        "given name, else the target turned into a name by _target_to_str; create_name "
        "adds _1, _2 ... and fixes illegal characters. The Node constructor takes the "
        "graph, name, op, target, args, kwargs and type_expr.",
    "Graph.inserting_before":
        "The start of the graph is just after the root sentinel: answer the other "
        "method's result for the root. Compare graphs by identity. _InsertPoint takes the "
        "graph and the function that will insert each new node; it swaps the graph's own "
        "and puts it back when the with block ends.",
    "Graph.inserting_after":
        "The end of the graph is just before the root sentinel. Each new node is appended "
        "right after the anchor, so later ones land between it and the earlier ones.",
    "Node.replace_input_with":
        "A small function gives new_input for old_input (identity, not equality) and "
        "anything else unchanged; map it over args and kwargs, and set both through "
        "_update_args_kwargs, which fixes the users of the old and the new input.",
    "Node.replace_all_uses_with":
        "With propagate_meta, before any user changes: refuse (a RuntimeError naming "
        "replace_with and saying its meta would be lost) when replace_with already has "
        "meta, else copy this node's meta into it. Each user kept swaps its input with "
        "replace_input_with.",
    "Graph.erase_node":
        "Three RuntimeErrors, in this order, each naming the node: of another graph, "
        "erased already, still has users (their count and names). Then link the previous "
        "and next nodes to each other (both directions), mark it erased, clear its args "
        "and kwargs through _update_args_kwargs, and count one node less.",
    "Graph.eliminate_dead_code":
        "The impurity test is the one given, else Node.is_impure. Return whether anything "
        "was erased. Erasing while walking the nodes backwards is safe: erase_node keeps "
        "the erased node's own links.",
    "Graph.lint":
        "Keep the nodes seen and the names seen. Per node: it is of this graph, its op is "
        "one of OPCODES, its name is new; each input is of this graph, seen already, and "
        "lists this node as a user; each user reads this node back. After the walk: no "
        "output, two outputs, or an output that is not last are RuntimeErrors. With an "
        "owning module, check the targets too.",
    "Graph.node_copy":
        "arg_transform is applied to Nodes only (map_arg), inside containers too. Pass the "
        "old node's name as the name: this graph's namespace adds a number if it is taken. "
        "copy.copy of the meta gives a new dict holding the same values.",
    "Graph.graph_copy":
        "The inputs of each copy are looked up in val_map, which the earlier copies (or "
        "the caller) filled in. Nodes are copied in g's order, so an input is always "
        "mapped before its user. The output node is never copied; return_output_node "
        "pairs the mapped value with that node. Falling off the end gives None.",
    "last_uses":
        "The result maps a node to the values that die there. A set of the values already "
        "met tells whether this is the first meeting going backwards, which is the last "
        "use going forwards. A node's inputs are its _input_nodes.",
    "Interpreter.run_node":
        "fetch_args_kwargs_from_env gives the concrete args and kwargs. The opcode methods "
        "all take (target, args, kwargs); look the method up on self by the op's name, so "
        "that a subclass's override runs.",
    "Interpreter.map_nodes_to_values":
        "Test membership in env (a value may be None or falsy). The message names n, the "
        "node being run, and then the missing input; both print as their names.",
    "Interpreter.fetch_args_kwargs_from_env":
        "n.args is a tuple and n.kwargs a dict, and map_arg keeps those types; hand both to "
        "map_nodes_to_values with n as the second argument, and return them as a pair.",
    "Interpreter.placeholder":
        "The target is the parameter's name: one that starts with '*' drains the iterator "
        "into a list. next() raises StopIteration when nothing is left: catch it, use "
        "args[0] when args is not empty, else raise the message the docstring gives, "
        "with its cause suppressed.",
    "Interpreter.run":
        "Keep the codegen's process_inputs/process_outputs behind hasattr checks. Inside "
        "the loop, wrap only run_node in the try. The freeing comes after the value is "
        "stored and before the output check; user_to_last_uses has no entry for a node "
        "that frees nothing. In the except: re-raise bare when extra_traceback is off; a "
        "KeyError becomes a RuntimeError raised from it; any other exception gets new "
        "args (the new message, then the old args after the first) and is re-raised.",
    "fetch_path":
        "Use a private sentinel both for 'no default given' and for a missing attribute: "
        "None may be a real default or a real value. The message names the path up to and "
        "including the missing atom, then the type it was missing from.",
    "ShapeProp.run_node":
        "Any exception of the Interpreter's run_node becomes a RuntimeError showing the "
        "node (format_node) and its meta, chained to the original. The function you map "
        "sets a flag (nonlocal) when it meets a tensor (framework_of(obj).is_tensor).",
    "Interpreter.fetch_attr":
        "Catch only AttributeError. The message puts the error's own text after the "
        "words the docstring gives; raise it from None so that no 'During handling' "
        "context is printed.",
    "Interpreter.get_attr":
        "One call: self.fetch_attr with the target (a str). Read it at every run: "
        "nothing is cached, so a parameter changed between runs is seen.",
    "Interpreter.call_function":
        "Call the target with the positional arguments unpacked and the keyword "
        "arguments unpacked too; return what it returns.",
    "Interpreter.call_method":
        "Split args into the object and the rest. getattr on the object itself (not its "
        "type) finds the method bound to it; call it with the rest and the kwargs.",
    "Interpreter.call_module":
        "self.fetch_attr gives the module. Calling the module object (not its forward) "
        "runs its forward hooks, as eager mode does; pass both args and kwargs.",
    "_message_with_node":
        "e.args may be empty. The node's line is what format_node returns. The original "
        "message and the node are separated by one blank line; the trace follows the "
        "'Original traceback:' line on the next line.",
    "Interpreter.boxed_run":
        "Collect the placeholder nodes in graph order. Compare the lengths before "
        "touching the list; zip the two into a dict before clearing it (zip is lazy). "
        "run takes initial_env as a keyword and no positional arguments.",
    "Transformer.placeholder":
        "The target is the name, a str. The default exists only when args is not empty; "
        "otherwise it is inspect.Signature.empty. A Proxy, not a Node, goes back: the "
        "Interpreter hands it to the next opcode methods.",
    "Transformer.call_function":
        "Nothing runs: the Transformer records. The tracer's create_proxy takes the op "
        "name, the target, args and kwargs, and builds the node from the Proxies inside.",
    "Transformer.transform":
        "The result is None for a graph without output: then add no output. Otherwise map "
        "every Proxy in it to its node (other values stay) and give that to the new "
        "graph's output. The old output node is the last node of self.graph.",
    "Transformer.get_attr":
        "fetch_attr would read the value now: a method called on it later would run "
        "instead of being recorded. The tracer's create_proxy takes the op name, the "
        "target, and the (empty) args and kwargs it was given.",
    "Transformer.call_module":
        "The submodule object comes from the Interpreter's fetch_attr. The hook takes the "
        "module, the function to run if it were traced through (its forward), then args "
        "and kwargs; it returns the Proxy to hand back.",
    "Transformer.run_node":
        "Set the attribute on self.tracer before calling the Interpreter's run_node "
        "through super(); a try/finally puts None back, so an error in a rule does not "
        "leave a stale node behind. Return what super() gave.",
    "_TransformerTracer.create_node":
        "super().create_node with every argument unchanged. source_node may be None "
        "(nothing is being transformed). Compare targets with is. Write the mark into "
        "node.meta, and return the node in every case.",
    "CodeWriter.spell":
        "Test the exact type against the plain literal types first: that is the common "
        "case, and an IntEnum member must not print as a number. A named tuple is a tuple "
        "with _fields: check it before tuples. One-item tuples need the trailing comma. "
        "An Enum's class is bound with its __name__ as the hint; a member name that is no "
        "identifier is indexed with a _quote'd string. For a repr-literal object, only the "
        "text before the first parenthesis can be a custom builtin's name.",
    "CodeWriter.emit_placeholder":
        "Strip the stars with lstrip; more than two stripped is an error too. The default "
        "exists when node.args is not empty. The parameter keeps its stars "
        "(node.target, not the stripped one). The extra line assigns the bare target to "
        "the node's name and ends with a newline.",
    "CodeWriter.emit_call_function":
        "Spell every argument with self.spell. An in-place template is a statement: the "
        "node's value is its first argument, assigned after ';  '. Only getattr with two "
        "args, no kwargs and a plain identifier becomes attribute syntax (format_target). "
        "A node whose meta says is_wrapped registers its function in self.wrapped.",
    "CodeWriter.emit_call_method":
        "is_plain_identifier decides between the two forms. The getattr form calls the "
        "result: getattr(obj, 'name') followed by the argument list. format_args takes "
        "the args after the first and the kwargs.",
    "CodeWriter.emit_output":
        "generate_output takes the argument and a function that spells values (pass the "
        "method itself). The newline is a separate piece of the body. The annotation "
        "starts with a space and an arrow; an empty spelling leaves it empty.",
    "format_target":
        "The usual case is one plain name, joined with a dot. Otherwise build from the "
        "base one dotted atom at a time: an atom that is not an identifier (a digit, a "
        "keyword) goes through getattr_name, quoted with _quote.",
    "Namespace.create_name":
        "Look the object up (by id) in _obj_to_name first. _split_name gives no base for "
        "an illegal name: clean it, then split again. A name ending in _N keeps its number "
        "unless taken; else count on from _base_count. A name in _illegal gets a number "
        "unless it names that very object. Record the name, the count and the object.",
    "CodeWriter.emit_frees":
        "Use the nodes' names, joined with ' = '. The piece starts with a semicolon and "
        "two spaces and ends with ' = None' and a newline; with nothing to free, only the "
        "newline.",
    "_forward_from_src":
        "next() on the counter numbers the file. splitlines(True) keeps the line ends "
        "that linecache expects. Register the finalizer only when an owner is given. "
        "exec fills the namespace dict it is given: read forward out of it, then set the "
        "_fx_compiled attribute on that function.",
    "GraphModule.recompile":
        "python_code carries .src and .globals; compiled_code(reuse, src) reuses a compiled "
        "code object for the same source. forward goes on type(self), a class that this "
        "instance alone has, so two GraphModules never share a forward.",
    "CodeWriter.write":
        "previous_comment starts as None and is replaced by what stack_comment returns. "
        "The emit method is looked up by name on self, 'emit_' followed by the op. "
        "Placeholders add parameters and the output writes its own line end, so neither "
        "gets emit_frees. The PythonCode is what finish returns.",
    "_module_base_for":
        "isinstance tells a dict root from a module root. framework_of gives each value's "
        "adapter, which has is_module, is_tensor and module_class; the default is "
        "tensor_framework's. Return inside the loop, at the first value that qualifies.",
    "_install":
        "With a table, look the value's type up in it first; on a miss, ask framework_of and "
        "store its answer under the type. Then the framework's is_tensor and is_parameter "
        "decide between registering the value as a buffer of the module under the field "
        "(register_buffer) and setattr.",
    "GraphModule._parent_of":
        "rpartition on a dot gives the path and the field; splitting an empty string on dots "
        "would give [''], so walk no atom for an empty path. add_module registers a new empty "
        "module; isinstance against type(self)._module_base is the module test. Store the "
        "module found under the path before returning.",
    "GraphModule._copy_attr":
        "rpartition on a dot splits prefix and field. Walk both sides with getattr: the "
        "root's with _MISSING as the default (a missing atom there is the error), ours with "
        "None (a missing atom here is made). 'is' tells a module already copied whole. Store "
        "(root's module, ours) under the prefix. After _install, delete the walked paths "
        "equal to the target or under it (the target and a dot).",
    "GraphModule.__init__":
        "type(self) is the instance's own class, so renaming it renames only this module. "
        "Build walked, the dict targets, the parents and frameworks tables before the loop. "
        "Sorting the dict targets by how many dots they hold is stable. Assigning self.graph "
        "goes through the property setter, which recompiles.",
    "GraphModule.print_readable":
        "The package is type(self)._module_base.__module__ up to its first dot. The source is "
        "the graph's python_code with root_module 'self' and verbose on, its src without "
        "leading newlines. The parts list starts with an empty string, so joining with "
        "newlines puts a blank line before each child; only children that are GraphModules "
        "(isinstance) go in.",
    "GraphModule.__deepcopy__":
        "The shared class is the second entry (index 1) of the instance class's __mro__; the "
        "framework base's __new__ makes the bare instance, of the class that _instance_class "
        "builds from the shared class and the base. Update the result's __dict__ with the "
        "deep copy of self._state(). Compare the result's recompile with "
        "GraphModule.recompile to choose the path.",
    "GraphModule.delete_all_unused_submodules":
        "For a path split on dots, the prefixes are the joins of path[:i] for i from 1 to "
        "its length. get_submodule finds a called module; its named_modules() names are "
        "relative, so prefix them with the target and a dot (skip the empty name).",
    "Interpreter.__init__":
        "Copy the module's named_modules into a dict now, so that a submodule added later is "
        "not in it. Choose the graph with an 'is not None' test on the argument. last_uses of "
        "that graph is the table; set it only when garbage_collect_values is true.",
    "Interpreter.output":
        "args is the tuple of the node's arguments with the Nodes already replaced by values; "
        "the output node has exactly one.",
    "extract_tensor_metadata":
        "getattr with a default of False reads requires_grad safely; bool() makes it a bool. "
        "The tensor's framework (framework_of) has tensor_layout, which answers a tuple of "
        "four for the tensor: unpack it with * into TensorMetadata after the first three "
        "fields.",
    "wrap":
        "callable() and isinstance(..., str) tell the two forms apart. Take the current frame "
        "from inspect: its f_back is the caller's frame. The caller's code name "
        "(f_code.co_name) is '<module>' for module code, and its f_globals is the dict to "
        "remember.",
    "_recording":
        "find_proxy over the positional and keyword arguments answers the first Proxy or "
        "None. That Proxy's tracer records the call with create_proxy; the result's node meta "
        "takes the mark. Set __wrapped__ on the inner function after defining it.",
    "_Patcher.patch_attr":
        "vars(owner) is the owner's own dict: before setattr, read whether the name is a key "
        "of it and what it holds there (get, so that a missing name gives None). Append a "
        "lambda (delattr or setattr) to self._undo; bind owner, name and original when the "
        "lambda is made.",
    "_Patcher.patch_dict":
        "Before setting, read whether the key is in d and its value (get). The undo is a "
        "small inner function: a key that was new is popped with a default of None, so a key "
        "already gone is no error; otherwise the original value goes back under the name. "
        "Append the undo to self._undo.",
    "Tracer._patch_wrapped_functions":
        "{**a, **b} merges the registries (same keys collapse). Each key is (id, name); the "
        "value is the globals dict. getattr(builtins, name, None) finds a builtin. "
        "patcher.patch_dict(globals, name, _recording(original)).",
    "Tracer._patch_autowrap":
        "The visited ids are a set kept on the tracer, in _autowrap_visited. Iterate over a "
        "list made of the globals' items, since patching writes to that dict; a global "
        "qualifies when its name has no leading underscore and its value's id is one of "
        "_autowrap_function_ids.",
    "Tracer._placeholder":
        "Test concrete_args first: it may be None, and the name must be one of its keys. "
        "Otherwise look the parameter up by name in the signature's parameters; its default "
        "is inspect.Parameter.empty when there is none. _annotation of the signature and the "
        "name gives the type_expr.",
    "TracerBase.create_proxy":
        "self.create_arg turns a tuple into a tuple and a dict into a dict, Proxies into "
        "Nodes. Pass name and type_expr on to create_node in its order.",
    "Proxy.__getattr__":
        "A dunder name both starts and ends with two underscores (str's startswith and "
        "endswith); the AttributeError carries the bare name as its only argument. Any other "
        "name makes the lazy Attribute from this Proxy and the name, which records nothing "
        "yet.",
    "Attribute.node":
        "self._node starts as None. The tracer's create_proxy answers a Proxy: keep its node. "
        "The target is the builtin getattr; the args are the root and the attribute name "
        "(self.root and self.attr), the kwargs empty.",
    "Tracer._collect_tensor_attrs":
        "self.submodule_paths maps each module to its path. vars of a module holds its own "
        "attributes; ask each loaded framework (loaded_frameworks, fetched once before the "
        "loops) whether a value is_tensor. Join the path and the name with a dot unless the "
        "path is empty.",
    "Tracer._tensor_constant":
        "Look the value's id up in self.tensor_attrs with get: it gives (value, path) or "
        "None; compare the stored value with 'is'. itertools.count and hasattr on the root "
        "find the free name; setattr puts the tensor on the root.",
    "Tracer._proxy_for_attr":
        "Compare each value with attr_val by identity ('is'), not ==. The cache is keyed by "
        "the name; on a miss the tracer's own create_proxy makes a get_attr Proxy of that "
        "name, with empty args and kwargs, and the cache keeps it.",
    "Tracer.__init__":
        "One set built over the name and value pairs of every module's vars: keep the id of "
        "a value that is callable and whose name has no leading underscore; then add the ids "
        "of the autowrap functions to it. Copy the modules into a list; no paths yet (None).",
    "TracerBase.create_node":
        "Pass name and type_expr on in the graph's order. Two conditions, both needed: the "
        "tracer's flag is on, and the node's stack_trace is still empty (a falsy value); the "
        "text comes from the user_stack_trace helper.",
    "Proxy.__iter__":
        "Take the current frame from inspect: its f_back is the frame doing the unpacking. "
        "unpack_count of that frame answers n or None. Index self from 0 to n - 1 into a list "
        "first, then return an iterator over the list.",
    "GraphModule.delete_submodule":
        "Split the target on dots and unpack: every atom but the last is the prefix, the last "
        "the field. hasattr and getattr walk; isinstance against type(self)._module_base; the "
        "parent's _modules dict (read with getattr and an empty default) holds the registered "
        "submodules; delattr removes one.",
    "GraphModule.__reduce__":
        "The shared class is the second entry (index 1) of the instance class's __mro__; the "
        "logic class is the first class on the shared class's own __mro__ whose __dict__ does "
        "not hold _module_base (next over a generator). Return a 2-tuple: the function and "
        "the tuple of its arguments.",
    "_rebuild_graph_module":
        "base.__new__(cls) makes an instance without running __init__; "
        "_instance_class(logic, base) is cls. Assign gm.graph last: the setter recompiles.",
    "_instance_class":
        "issubclass tells whether cls already has the module class. The combined class is "
        "made with type(name, bases, namespace): bases (cls, base) so GraphModule's "
        "methods come first; its namespace holds __module__ and _module_base. The final "
        "class has only the combined one (or cls) as its base and the same __module__.",
    "CodeWriter.emit_get_attr":
        "format_target takes the root's name, the target and the getattr spelling "
        "(self.getattr_name: a parameter may have taken the name getattr). Append one "
        "piece, 'lhs = path', to self.body.",
    "CodeWriter.emit_call_module":
        "Take the left side before spelling anything: spelling may bind globals, and the "
        "order of the globals follows the order of the code. format_args takes node.args "
        "and node.kwargs.",
    "CodeWriter.format_args":
        "is_plain_identifier tells which keys can be keywords. Keep the kwargs' order. The "
        "dict of the other keys is spelled like any argument (a dict literal) after two "
        "stars. An empty kwargs adds nothing.",
    "CodeWriter.finish":
        "A list concatenation, then 'or' for the empty case. add_global(wrap, 'wrap') "
        "gives the name to call; quote each function's name with _quote and join the "
        "calls with newlines. Indent with a replace of every newline by a newline and "
        "four spaces, after stripping the leading newlines, and indent the first line too.",
    "CodeWriter.add_global":
        "Cache in self._spelled_as keyed by id(obj), in both branches. _package_path "
        "gives the path or None. namespace.create_name(hint, obj) returns the same name "
        "for the same object. The error compares with is.",
    "CodeWriter.spell_package":
        "str.partition splits off the package. self._package_names remembers the chosen "
        "name per package; sys.modules gives the module to bind. Only a name in "
        "self.taken needs namespace.create_name.",
    "CodeWriter.spell_builtin":
        "self._builtin_names remembers each alias. The value comes from "
        "self.custom_builtins when the name is there, else from the builtins module "
        "(imported as _builtins).",
    "CodeWriter.spell_type":
        "A generic alias such as list[int] is an instance of type in some versions: test "
        "for __origin__ too. typing.get_args gives a union's members and a generic's "
        "parameters. Each recursive answer may be None: wrap it in str() before joining.",
    "_names_in_use":
        "Two sets: node names, and the parameters; the answer is their union. Check a name "
        "against the names seen so far before adding it. lstrip removes the stars.",
    "_package_path":
        "Test callable first, then builtins classes. Catch RuntimeError and AttributeError "
        "around qualified_name. partition the path on the first dot; every atom of the "
        "rest must be a plain identifier before _resolve(package, rest) is compared "
        "with the object by is.",
    "fuse_conv_bn_weights":
        "Work on the NumPy arrays (._array). A missing BN weight means ones, a missing BN "
        "bias or conv bias zeros. Reshape the scale to (-1, 1, 1, ...) so that it scales "
        "dim 0 of the weight; cast back to the weight's dtype. Return two Parameters with "
        "the conv weight's requires_grad.",
    "matches_module_pattern":
        "A node without args cannot match. Walk the pattern and the pair (first argument, "
        "node) together: each must be a Node of op call_module, with a str target found in "
        "modules, whose module's type is the expected one exactly (not a subclass).",
    "replace_node_module":
        "The TypeError names the node and its target. Update both places: the modules "
        "dict under the full target, and the attribute of the parent module under the "
        "last name.",
    "_SubgraphMatcher._match_node":
        "A pattern node already mapped matches only its graph node; a graph node serves "
        "one pattern node only. _same_kind compares op and target. Map the pair before "
        "looking at the args; then the counts of args and the kwargs' names must agree, "
        "and _match_args compares the args followed by the kwargs' values.",
    "fuse":
        "The model's framework gives the triples (its fusion_patterns). Build modules from the "
        "traced module's named_modules() and deepcopy traced.graph before editing. Walking "
        "the graph's nodes while erasing the visited one is safe. The layer node is the "
        "BatchNorm node's first argument; check its users, then track_running_stats, then the "
        "training flags of both modules. The message names targets and type names as they "
        "are, unquoted.",
    "_SubgraphMatcher._match_args":
        "zip the two lists after comparing their lengths; stop at the first pair that fails. "
        "Test both-Nodes first, then both-sequences. A pattern Node facing a constant must be "
        "a placeholder; use nodes_map to remember what it stood for. A graph Node facing a "
        "pattern constant fails. Compare constants with type(...) is type(...) too.",
    "_is_convex":
        "An iterative depth-first search: a stack seeded with the outside users of the "
        "set's nodes, a seen set so each node is expanded once, and each popped node's users "
        "pushed. The set itself is only ever met coming back.",
    "_SubgraphMatcher.match":
        "A nested recursive function of (anchor index, pairs so far): past the last anchor, "
        "record a _Found; else, for each candidate, copy the pairs, try _match_node, and on "
        "success recurse with the next index. The list of candidates is built once, before "
        "the search. Filter with _is_contained and _is_convex(_compute_nodes(m)), then "
        "_without_overlaps.",
    "replace_pattern":
        "The placeholders of the replacement graph, in order, are what val_map maps to the "
        "match's placeholder_nodes. graph_copy returns one Node or a tuple: make it a tuple. "
        "Keep a dict from each replaced result to its new node, for later matches. Erase "
        "match.nodes_map[pn] for the pattern's nodes in reverse, skipping placeholders and "
        "the output. Only a module replacement (not a Graph) has attributes to copy.",
    "describe":
        "A tensor's spec holds its shape as a tuple. A list or tuple becomes (its type's "
        "name, the tuple of described items); a dict ('dict', pairs of key and described "
        "value). Try hash on other values: a TypeError means unhashable, use repr instead.",
    "find_groups":
        "Map each node to its index, to sort groups. Walking backwards, a node starts a "
        "group when it is fusible and not taken. Grow until nothing joins: an input may "
        "join when fusible, free, all its users in the group, and _joins accepts it (it "
        "gives the new read set, or False). Reverse the list of groups at the end.",
    "kernel_source":
        "start_kernel gives the Namespace, the input nodes and the function's name. A "
        "constant operand goes through _constant; a Node in another dtype than the compute "
        "dtype is converted with _numpy_spelling. Loop over out.size. Import scalar only "
        "when a line uses it.",
    "CompiledModel.__call__":
        "Binding gives an ordered mapping of parameter names to values: its values, in "
        "order, are the inputs, and the mapping itself goes to _compile. Use the cache's get "
        "and compare with None (a cached callable is never None). Store the compiled "
        "callable before calling it.",
    "CompiledModel._compile":
        "A dict comprehension over the bound arguments keeps those where _holds_tensor is "
        "false; an empty dict becomes None. The name in the message falls back to repr when "
        "the backend has no __name__ (getattr with a default).",
    "_canonical_name":
        "Test op first: call_method, then call_function, else None. A call_method target "
        "must be a str. qualified_name may raise for odd targets: catch RuntimeError and "
        "AttributeError. Split the name at the first dot (str.partition): the package, then "
        "the rest that _FUNCTIONS knows.",
    "_bind":
        "zip the names with the args (after the length check) into a dict. Walk kwargs: a key "
        "already bound is a clash; a key among names is bound; otherwise look it up in "
        "_HARMLESS and compare the value with !=, and on a mismatch or an unknown key give up.",
    "as_reduction":
        "The call_function branch asks qualified_name inside a try (RuntimeError, "
        "AttributeError give None) and partitions it at the first dot. Filter the kwargs "
        "before _bind: drop a key when _REDUCTION_HARMLESS has it with that same value. "
        "keepdim is compared with 'is True'; _last_dim judges dim.",
    "_dtypes_fit":
        "np.dtype compares equal to None's default dtype, so test None with 'is' before any "
        "'in'. Unpack where's condition from the operands when form.operands[0] is a Node. "
        "A comparison's operands must all be in _FLOATS.",
    "fusible_nodes":
        "as_pointwise first; when it gives None try _reduction and go on to the next node "
        "either way. The dtypes for _dtypes_fit are node_dtype of the node and of each of "
        "form.input_nodes.",
    "_joins":
        "_reads of a node's form is None for an elementwise node. An elementwise node returns the "
        "full shape unchanged. A reduction checks every member of the group (not only the "
        "ones added last) against its own shape and row_shape of it.",
    "start_kernel":
        "Create each reserved name before any other. A list and a membership test keep "
        "first-use order (a set would not). dict.fromkeys over the ops keeps the distinct "
        "ones in order; slice the first four and join them with underscores.",
    "expression":
        "np.result_type over the dtypes of form.input_nodes for a comparison. clamp: wrap "
        "the maximum first, then the minimum, each only when its bound is not None. where: "
        "condition as np.dtype(np.bool_). _pow_as gives 'mul', 'sqrt', 'rsqrt' or None; "
        "the 'mul' case writes the exponent from _small_integer.",
    "replace_group":
        "The full shape is the _reads of the first member whose form is a Reduction (next "
        "with a default of None). The work counts every member when full is None, else the "
        "reductions and the members whose node_shape is full. Insert before the last member "
        "(the graph's inserting_before) and create_node with a name; erase in reversed order.",
    "plan_buffers":
        "Keep the node order as a list and a position dict. Only a kernel whose reuse is "
        "None looks for a buffer; walk order[:position[node]] and stop at the first that "
        "fits (break). A candidate needs users; each user must come before the kernel, be "
        "_fresh, and have no writes_into of that candidate's name.",
    "as_pointwise":
        "None for anything that cannot fuse. The method form of where has self second. "
        "_bind gives None when the arguments do not fit. clamp needs number (or None) "
        "bounds, not both None, and its operand is the input; other ops need every "
        "parameter bound. The answer is a Pointwise of op, operands and the bounds.",
    "torch_qualified_name":
        "No __name__ gives None. A method descriptor counts only when torch.Tensor has "
        "that very object under that name. A missing module is looked for in torch, then "
        "torch.nn.functional; a module outside the torch package gives None. "
        "segment_reduce is exported as _segment_reduce.",
    "TorchFramework.method_name":
        "torch passes Tensor.add itself for c + x, and a property's __get__ for x.shape: "
        "both answer their own name. Some callables have no __name__: read it with a "
        "default.",
    "_hooks_of":
        "Walk two (kind, dict) pairs in order, pre-hooks first; the dicts' values are the "
        "hooks. getattr with a default of None reads __qualname__; fall back to "
        "type(hook).__name__.",
    "refuse_lost_hooks":
        "Ask _hooks_of; an empty list means return. The 'where' part is built with a "
        "conditional on qualname; the hooks are joined with ', '. Copy the message's "
        "wording from the docstring: the tests compare it whole.",
    "_torch_objects":
        "Start each name at the torch module and getattr each dotted atom with a default of "
        "None, so a missing one ends the walk with None. Collect the objects that are not "
        "None; _side_effects caches the answer for the names DCE needs.",
    "TorchFramework.has_side_effect":
        "Membership in _side_effects() first. isinstance against torch._ops.OpOverloadPacket "
        "to swap in its default overload (getattr with None), then against "
        "torch._ops.OpOverload for the three questions; the random one only when "
        "impure_random is set, with getattr and a False default.",
    "torch_layout":
        "next() over a generator of the formats with None as its default. is_sparse "
        "decides both the format and the stride. Compare qscheme() with "
        "torch.per_tensor_affine and torch.per_tensor_symmetric; the per-channel case "
        "turns its tensors into lists and adds q_per_channel_axis(). Keep the keys in the "
        "docstring's order.",
    "load_root":
        "Split the spec at its last colon (rpartition). Path(...).is_file() tells a file; "
        "the regular expression _MODULE_PATH tells a module name. Catch AttributeError "
        "from fetch_path and TypeError from building a class, raising from None. A class "
        "is a type that subclasses torch.nn.Module; inspect.isfunction and _is_builder "
        "tell a builder.",
    "_parse_shape":
        "partition(':') splits shape and dtype text. A list comprehension of int() over "
        "the comma pieces that are not blank; a ValueError from int becomes the first "
        "message. getattr(torch, name, None) and isinstance(..., torch.dtype) check the "
        "dtype.",
    "output_difference":
        "Test the expected value's kind with isinstance: torch.Tensor, then (tuple, list), "
        "then dict. Recurse with where extended by [i] or [key!r], returning the first "
        "problem. Catch the AssertionError of assert_close and keep its first line.",
    "diff_rows":
        "_canonical(line, ours=...) gives (text, why): match on the texts, keep why for "
        "'~' rows. In an equal run a row is ' ' when the raw lines are identical, else '~' "
        "with the reason. Elsewhere pair left and right line by line; leftovers are '<' "
        "(left only) or '>' (right only). Turn autojunk off.",
    "side_by_side":
        "Filter the rows when only_differences. texts = the left sides (or '') plus the "
        "left header; the column is min(longest, (width - 3) // 2). The second header "
        "line is dashes as long as each header. For each row, zip its left and right pieces "
        "of _cut, padding the shorter side with ''. rstrip every line.",
    "_compare_texts":
        "One loop over the pairs (title, left, right). A row's mark in ' ~' means the same. "
        "A dict (dict.fromkeys) keeps the reasons once each, in order. The heading's "
        "verdict has three values. Skip the table only when only_differences and every "
        "mark is ' '.",
    "_compare_outputs":
        "_run gives (output, error) for each side. Compare type names, not types: each "
        "library may raise its own class. Build the problem text with one line per side and "
        "a conditional inside the f-string. The function returns whether there is no "
        "problem.",
    "qparams_from_range":
        "Work in float32; min and max may be arrays (one per channel). The scale never "
        "drops below eps. Symmetric: zero point 0 when signed, else (qmin + qmax + 1) // 2, "
        "shaped like the scale. Affine: round to nearest even, then clip to [qmin, qmax]. "
        "Return a float32 scale and an int64 zero point.",
    "MinMaxObserver.observe":
        "An empty batch changes nothing. The running values start at +inf and -inf; "
        "combine with np.minimum and np.maximum and keep float32.",
    "ObserverBase.__init__":
        "Call the module's __init__ first. Test the two bounds with 'is None' and compare the "
        "two answers: they must agree. quant_min <= 0 <= quant_max is one chained "
        "comparison. A float32 infinity, and its negative, start the range.",
    "ObserverBase._qparams":
        "Warn a UserWarning with stacklevel 3 (the caller's caller). np.shape of "
        "lo gives the shape for np.ones and np.zeros. Pass the observer's own settings to "
        "qparams_from_range in its order.",
    "HistogramObserver.observe":
        "Cast and flatten first, then return on an empty batch. has_data tells the first "
        "batch. Compare the widened (lo, hi) pair with the current one as a tuple; rebin "
        "only when it changed. histogram_of counts over the current range.",
    "HistogramObserver.calculate_qparams":
        "Both branches end in _qparams and convert the answer with float() and int(). "
        "search_clipping_range takes the counts, the range as floats and dst_nbins.",
    "node_kind":
        "_module gives the node's module or None. For a module, compare its exact type with "
        "the sets, in the docstring's order. For a function, the binary check comes first "
        "and returns either way; then a loop over the other kinds' names.",
    "_Observers.observe":
        "Read the count, then add one. add_submodule on the GraphModule and a dict entry. "
        "Insert with the graph's inserting_after and call_module. replace_all_uses_with "
        "takes a filter that spares the observer node itself.",
    "_Observers.observe_inputs":
        "The cat's inputs are its first argument, a list. Filter Nodes, skip those "
        "observed. For cat, the shared object is the module of the first input's observer "
        "node (its target); register it under each other observer's target, then observe "
        "the cat node with it.",
    "insert_observers":
        "Iterate over list(gm.graph.nodes). The qconfig is looked up only for kinds other "
        "than float and info. A set of nodes to skip holds the ReLUs taken in by a binary "
        "op. The observer for a fixed op comes from FIXED_QPARAMS; every observer goes "
        "through backend.wrap_observer. Recompile at the end.",
    "insert_quantize_dequantize":
        "Collect the targets of observers without data in a list while walking. Silence "
        "warnings around calculate_qparams with warnings.catch_warnings and simplefilter. "
        "register_buffer keeps the qparams; insert the four nodes before the observer "
        "node; warn after the loop with stacklevel 3.",
    "_lower_layer":
        "_only_quantize_reader gives the quantize node or None. setdefault on float_layers "
        "both reads and records. _attr_value reads a get_attr node's value. Then "
        "replace_node_module and _bypass.",
    "_lower_binary":
        "binary_name(node) picks the pair of ops. Unpack the two dequantize nodes from "
        "node.args; the quantize node's args 1 and 2 are the scale and zero point nodes. "
        "Insert before the quantize node; erase the quantize node, then the ReLU, then "
        "node; _drop the two dequantize nodes.",
    "lower_to_quantized":
        "Iterate over a list of the nodes: lowering erases some. node.graph is None for an "
        "erased one. The call_module override of the kind comes right after node_kind. Use "
        "_is_dequantize on the first argument (or on every argument, or every item of the "
        "cat's list).",
    "QConfigMapping.qconfig_for":
        "Try 'a.b.c', 'a.b', 'a', then '' in module_name_qconfigs, and stop after ''. Only "
        "when no name matches does object_type_qconfigs decide; else global_qconfig "
        "(which may be None).",
    "ConversionTable.nearby":
        "Several full names share a last part (torch.relu, torch.nn.functional.relu): "
        "keep a list per last part, in offers() order. Match against the last parts only, "
        "then expand each match to its full names and cut to limit.",
    "copy_state":
        "Parameters and buffers together, on both sides, not recursive: children are "
        "copied by their own call. Different names: one TwinError listing both sides, "
        "sorted. A shape mismatch: a TwinError naming the attribute and both shapes. "
        "values.tensor converts, and keeps a Parameter a Parameter.",
    "refuse_lost_settings":
        "_settings of each class gives name -> inspect.Parameter. Skip names the twin has "
        "and attributes the module lacks. A parameter without default has "
        "inspect.Parameter.empty as its default. Spell each lost one with !r; raise after "
        "the loop.",
    "make_twin":
        "table.modules maps torch classes to tensor.nn classes. A dict comprehension over "
        "_settings(twin_class) with hasattr as the filter; then the _READ_FROM entries "
        "whose class name matches. Catch TypeError and ValueError around the construction "
        "only, raising from None. train(module.training) reaches the twin's own layers.",
    "GraphConverter.get_attr":
        "fetch_path follows the dotted target from self.root. _is_torch_tensor tells a "
        "tensor. Only a target not yet in the attributes is converted.",
    "GraphConverter.call_module":
        "Look the submodule up on self.root with get_submodule. Catch TwinError only; the "
        "class name is both in the 'what' and the hint.",
    "GraphConverter.check_operator":
        "The operator's __name__ ('add', 'iadd') is what dunder and reflected_dunder take; "
        "inplace_methods names the in-place ones. A list of flags tells which operands are "
        "known tensors. The problem names the first method of the list you built.",
    "GraphConverter.keywords":
        "Three cases pick the twin and the torch function: a method tensor has (no torch "
        "function), a call_function whose target changed, anything else (return kwargs). "
        "_keyword_names gives None for **kwargs. Compare with the default using !=.",
    "GraphConverter.argument":
        "Test for a Node first. Catch only TypeError from the value converter; the "
        "hint is about the type's name; return the value unchanged after noting it.",
    "GraphConverter.convert":
        "A dict from op to bound method. map_aggregate with a lambda that binds the node as "
        "a default argument (n=node) calls argument for each leaf. create_node takes op, "
        "target, args, kwargs, name and type_expr; copy.copy the meta.",
    "tensor_valued_nodes":
        "A small Interpreter subclass whose run_node calls super() and records into a set "
        "from the enclosing function. Wrap a single input in a tuple. deepcopy both the "
        "GraphModule and the inputs; run under torch.no_grad().",
    "torch_to_tensor":
        "isinstance for torch.nn.Module and inspect.isfunction for the refusal. The Tracer's "
        "record_stack_traces and proxy_buffer_attributes are plain attributes. Remember "
        "the names in vars(module) before tracing, and delete what is new after (only when the "
        "root is the module). Keep the model's name in its own variable.",
    "GraphConverter.call_function":
        "A twin in table.functions replaces the target. builtins.getattr on a Node: a "
        "problem when tensor lacks the attribute (table.attributes), with self.hint. "
        "_operator targets go through check_operator. passes_through, or not using torch: "
        "keep. Otherwise a problem naming the torch function (_torch_name), hinted by its "
        "last part; the target stays.",
    "dispatch":
        "Normalise kwargs first and find the relevant arguments once. With a mode: pop "
        "it from _function_modes, compute the types (the ordered found types as a tuple, "
        "or the plain Tensor types when that tuple is empty), ask it, and append it back "
        "in a finally. Compare its answer with NotImplemented by identity. Then "
        "handle_tensor_function when something was found, else the implementation.",
    "_kind_of":
        "Guard each issubclass with isinstance(t, type). getattr with a default of None "
        "covers both a missing and a None handler. The Tensor test needs _base_tensor to "
        "be set. Store the kind in _KIND under t, then return it.",
    "_tensor_types":
        "One list of types; for each value of args followed by the kwargs' values, iterate "
        "over it when it is a tuple or list, else over a one-item tuple of it. isinstance "
        "with _base_tensor (and _base_tensor not None), then append type(item) when new. "
        "Return a tuple.",
    "relevant_args":
        "A fresh empty list; _collect over args into it; when kwargs is truthy, _collect "
        "over its values into the same list; return the list.",
    "disable_subclass_dispatch":
        "It is decorated with contextlib.contextmanager, so the body is a generator: "
        "declare the counter global, add one, yield inside a try, subtract one in the "
        "finally. Never set it to a fixed value.",
    "in_op":
        "Turn each shape into str(list(shape)). With one, the word is shape; with more, "
        "shapes, then all but the last joined by a comma and a space, the word and, and "
        "the last. Mind the leading space and the parentheses.",
    "contiguous_strides":
        "Keep a step starting at 1 and a list; for each size from the last: append the "
        "step, then multiply the step by max(size, 1). The list is built backwards: "
        "reverse it into a tuple.",
    "is_contiguous":
        "zip the reversed shape with the reversed strides; expected starts at 1. A size of "
        "1 is skipped entirely (its stride is not looked at, expected does not change). "
        "Otherwise compare the stride, then multiply expected by the size.",
    "linear_shape":
        "len(w) != 2 first; then an empty x; then the inner sizes, with rows as "
        "math.prod of x without its last size; then the bias, compared as a tuple with the "
        "three allowed shapes. The error sentences are in the docstring, word for word.",
    "window_count":
        "The span is the padded size less the dilated kernel's reach less one. Floor "
        "division by the stride, plus one; in ceil mode, the negation trick rounds the "
        "division up (negate, floor-divide, negate), then the window count drops by one "
        "when the last window's start (windows before it times the stride) reaches the "
        "size plus the padding.",
    "binary":
        "Two pow cases before the general one: when _powers.is_number(b), ask "
        "_powers.by_other_ops with the module itself (_self), a and b, and return its "
        "answer unless None; else, when b has no dims and a has some, replace b by a full "
        "array of a's shape holding b's value. Finish with _array of _NUMPY[op].",
    "clamp":
        "np.maximum with a.dtype.type(lo) when lo is not None (0 is a bound, test for "
        "None), then np.minimum with hi likewise. np.array of the result makes it a new "
        "array even when no bound was given.",
    "log_softmax":
        "np.maximum.reduce with axis=dim and keepdims=True for the max; np.add.reduce of "
        "np.exp(shifted) with the same arguments for the sum; the empty case returns "
        "a.copy() before any reduction (a max over nothing raises).",
    "linear":
        "np.matmul of x and w.T; add b only when it is not None; wrap with _array, the "
        "module's helper that turns a NumPy scalar back into an array.",
    "call_with_modes":
        "Keep the mode you took off in a local. Call its __tensor_dispatch__ with the four "
        "arguments as they came (types, args and kwargs untouched) and return its answer "
        "from inside a try whose finally pushes the same mode back. The order matters: "
        "take off first, then call, so the handler's own primitive calls see the stack "
        "without it.",
    "_Recorder.__tensor_dispatch__":
        "Look func up in the decomposition dict; when found, use the recorder itself as a "
        "context manager around the decomposition's call and return what it gives. Else "
        "build the node with graph.call_function before running anything, passing the "
        "positional arguments through arg_nodes and the keyword ones through as_arg (func "
        "as the second argument of both, for the error message). "
        "Only a Tensor result gets bind; tuples and numbers are returned unbound.",
    "_push":
        "The stack is the module's list _modes, newest last. After appending, a length of "
        "one means this was the first mode: call the helper that sets the routing flag and "
        "tells tensor.ops, with True. Return nothing.",
    "_pop":
        "list.pop on the stack gives the mode and raises on an empty one by itself. After "
        "popping, an empty stack means the last mode left: call the routing helper with "
        "False. Then return the mode.",
    "TensorDispatchMode.__enter__":
        "Membership in _modes is the test (in, not the top only). The message starts with "
        "the class's __name__. Use _push, not a bare append, so the router follows; return "
        "self.",
    "TensorDispatchMode.__exit__":
        "Two ways to be out of order: nothing on the stack, or the last item is not this "
        "very object (identity). Raise before touching the stack; else _pop and return "
        "nothing.",
    "_kernel":
        "A generator: read _routing into a local before yielding. When it was on, route "
        "off, then yield inside try, and in finally route on again; when it was off, the "
        "same try and finally touch nothing. One yield, no value.",
    "_Recorder.node_of":
        "The order: bound node (self.nodes by id of the array), then self.named, then the "
        "memory test (only for a tensor without a name), then the constant: its prefix by "
        "isinstance of tensor.nn.Parameter, its number by counting the constants whose "
        "names start with the prefix, stored in self.constants. create_node with op "
        "get_attr, the target, and name from _attr_node_name; bind before returning.",
    "_Recorder.as_arg":
        "Four cases, the Tensor one first: hand it to node_of with the primitive as the "
        "second argument, so that its error names the primitive. For a tuple or a list, "
        "call the method again on each item, collect the answers in a list, and give that "
        "list to the value's own class (type of the value), which makes a tuple a tuple "
        "again. For a dict, a comprehension over its items that keeps each key and recurses "
        "on each value. Anything else, a string included (it is iterable, but not a "
        "container here), is returned untouched; never write into the value you were given.",
    "make_fx":
        "The ValueError comes before the inner function exists. Inside: primitive keys are "
        "tensor.ops.OpOverload instances; by_array maps id(value._array) to the first name "
        "(setdefault). Placeholders are graph.placeholder(f-string arg{i}_1), bound only "
        "for Tensors. _Modes takes the fake mode, the recorder and the decomposer or None. "
        "Output through _output_arg, then eliminate_dead_code. Root: the constants plus "
        "the named tensors whose name some get_attr node targets.",
    "FakeTensorProp.propagate":
        "A list built from args: from_tensor of self._mode for a Tensor, the argument "
        "itself otherwise; unpack it into propagate_dont_convert_inputs and return its "
        "answer.",
    "FakeTensorProp.propagate_dont_convert_inputs":
        "self._mode is a context manager; inside its block, return what the parent "
        "class's run gives for the unpacked arguments (the Interpreter's loop).",
    "FakeTensorProp.run_node":
        "Check FakeTensor before Tensor: a FakeTensor is a Tensor too, and must not be "
        "made fake again. The mode is self._mode. The nested helper returns one leaf's "
        "value; map_aggregate rebuilds the containers. Compare the mapped whole with None "
        "before writing n.meta['val'].",
}


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
