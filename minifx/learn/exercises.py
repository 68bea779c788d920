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
         ("tests/ch00/test_kernels.py", "tests/ch00/test_tensor_views.py")),
        ("tensor/backend/reference/__init__.py", "softmax", "a numerically stable softmax",
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
         "_canonical_name gives the op's name, then _bind its args to _PARAMETERS[op] "
         "(x.where(c, y) is reordered); clamp needs number bounds; operands are Nodes or "
         "numbers, at least one a Node.",
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
         "A member of _TENSOR_METHODS, or a property getter (named '__get__'), is a Tensor "
         "method: answer its name; anything else gives None.",
         ("tests/ch09/test_parity.py",)),
        ("minifx/compare.py", "diff_rows", "line up two codes side by side",
         "Drop blank lines; match the _canonical forms with difflib's SequenceMatcher; "
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
    *_rows(
        "ch12",
        ("tensor/dispatch.py", "call_with_modes", "hand a primitive to the top mode",
         "The top mode leaves the stack while its handler runs and comes back after, "
         "whatever happens; use the stack helpers that also switch the router.",
         ("tests/ch12/test_modes.py",)),
        ("minifx/experimental/proxy_tensor.py", "_Recorder.__tensor_dispatch__",
         "record a primitive call as a node",
         "A decomposition runs instead, with the recorder entered again; otherwise make "
         "the node from the arguments' nodes (arg_nodes, as_arg), run the primitive "
         "beneath the mode, bind a Tensor result to the node.",
         ("tests/ch12/test_make_fx.py",)),
        ("minifx/passes/fake_tensor_prop.py", "FakeTensorProp.run_node",
         "record each node's fake value",
         "Let the Interpreter run the node; map_aggregate over the result keeps fake "
         "tensors and numbers, makes real tensors fake with the pass's mode, and turns the "
         "rest into None; store it in meta unless it is None.",
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
    "Node.format_node":
        "The users part is [num_users=N]; a node with a type shows it first, through "
        "type_repr. A placeholder with args prints (default=...) after its target. Output "
        "prints as return and its argument. The other ops spell the target with "
        "pretty_target and args and kwargs with _format_arg.",
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
    "diff_rows":
        "_canonical(line, ours=...) gives (text, why): match on the texts, keep why for "
        "'~' rows. In an equal run a row is ' ' when the raw lines are identical, else '~' "
        "with the reason. Elsewhere pair left and right line by line; leftovers are '<' "
        "(left only) or '>' (right only). Turn autojunk off.",
    "qparams_from_range":
        "Work in float32; min and max may be arrays (one per channel). The scale never "
        "drops below eps. Symmetric: zero point 0 when signed, else (qmin + qmax + 1) // 2, "
        "shaped like the scale. Affine: round to nearest even, then clip to [qmin, qmax]. "
        "Return a float32 scale and an int64 zero point.",
    "MinMaxObserver.observe":
        "An empty batch changes nothing. The running values start at +inf and -inf; "
        "combine with np.minimum and np.maximum and keep float32.",
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
    "GraphConverter.call_function":
        "A twin in table.functions replaces the target. builtins.getattr on a Node: a "
        "problem when tensor lacks the attribute (table.attributes), with self.hint. "
        "_operator targets go through check_operator. passes_through, or not using torch: "
        "keep. Otherwise a problem naming the torch function (_torch_name), hinted by its "
        "last part; the target stays.",
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
