"""Interpreter: run a graph one node at a time, in Python.

A GraphModule runs its generated ``forward``. An Interpreter runs the same
graph by walking ``graph.nodes`` and calling one method per opcode
(``placeholder``, ``get_attr``, ``call_function``, ``call_method``,
``call_module``, ``output``). Each method is a place to step in: override
``call_function`` and you change what every function call does; override
``run_node`` and you see every value as it is made (that is how ShapeProp,
in passes/shape_prop.py, records shapes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .graph import Graph
from .node import Argument, Node, Target, fetch_path, last_uses, map_arg


class Interpreter:
    """Run ``module``'s graph node by node; override a method to change one step.

    ``run(*args)`` calls ``run_node`` on each node in order, and ``run_node``
    calls the method named after the node's opcode with the node's target
    and its arguments, in which every Node has been replaced by the value it
    produced. ``self.env`` maps each node to its value. With
    ``garbage_collect_values`` (the default) a value leaves ``env`` right
    after its last user runs, so a long graph does not hold every
    intermediate tensor at once; turn it off to inspect them all afterwards.

    ``graph`` (optional) runs that graph instead of ``module.graph``, with
    ``module`` still answering ``get_attr`` and ``call_module``.
    """

    # --8<-- [start:init]
    def __init__(self, module: Any, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        """Set up what every run reads, as torch.fx's Interpreter does.

        ``self.module`` is ``module``; ``self.submodules`` a dict of its
        ``named_modules()``, taken now (a submodule added later is not in
        it); ``self.graph`` is ``graph`` when given, else ``module.graph``;
        ``self.env`` an empty dict; ``self.name`` ``"Interpreter"``;
        ``self.garbage_collect_values`` the flag; ``self.extra_traceback``
        True. With the flag on, ``self.user_to_last_uses`` is
        ``last_uses(self.graph)`` (of the graph that runs, so computed once
        here, not per run); with it off the attribute is not set at all.
        """
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph: Graph = graph if graph is not None else module.graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        # Set to False to let a node's error through without the added context.
        self.extra_traceback = True
        if garbage_collect_values:
            self.user_to_last_uses = last_uses(self.graph)
    # --8<-- [end:init]

    # --8<-- [start:run]
    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run the graph on ``args`` and return what its ``output`` node returns.

        ``initial_env`` may give values for some nodes in advance: it becomes
        ``self.env`` (else a new empty dict), and a node already in
        ``self.env`` is not run (partial evaluation). ``self.args_iter`` is an
        iterator over ``args``, which the ``placeholder`` method consumes.
        With ``enable_io_processing``, the graph's code generator
        (``self.graph._codegen``) may reshape the inputs
        (``process_inputs(*args)``) and the result (``process_outputs``),
        when it has those methods.

        Each other node, in graph order, gets its value from
        ``self.run_node(node)``, stored in ``self.env``. With
        ``self.garbage_collect_values``, the values whose last use is that
        node (``self.user_to_last_uses``) then leave ``self.env`` at once.
        The ``output`` node's value is the result; a graph without one gives
        None.

        When a node raises and ``self.extra_traceback`` is on, the error
        names the node: its message becomes ``_message_with_node(e, node)``
        (the original message, then ``While executing`` and the node's
        line). The exception keeps its type (``except ValueError`` still
        works) and its other args; a ``KeyError``, whose message would print
        quoted on one line, becomes a ``RuntimeError`` of that message,
        raised from the KeyError. With ``extra_traceback`` off the error
        passes unchanged.
        """
        self.env = initial_env if initial_env is not None else {}
        codegen = self.graph._codegen
        # A code generator may reshape the inputs and outputs (torch.fx's
        # pytree codegen does); minifx's default one takes them as they are.
        if enable_io_processing and hasattr(codegen, "process_inputs"):
            args = codegen.process_inputs(*args)
        self.args_iter: Iterator[Any] = iter(args)

        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if not self.extra_traceback:
                    raise
                message = _message_with_node(e, node)
                if isinstance(e, KeyError):  # it would print the message quoted, on one line
                    raise RuntimeError(message, *e.args[1:]) from e
                e.args = (message, *e.args[1:])  # same type: `except ValueError` still works
                raise
            if self.garbage_collect_values:
                for value in self.user_to_last_uses.get(node, ()):
                    del self.env[value]
            if node.op == "output":
                result = self.env[node]
                if enable_io_processing and hasattr(codegen, "process_outputs"):
                    result = codegen.process_outputs(result)
                return result
        return None
    # --8<-- [end:run]

    # --8<-- [start:boxed_run]
    def boxed_run(self, args_list: list[Any]) -> Any:
        """Run on the values in ``args_list`` and empty the list first.

        Clearing the caller's list drops its references to the inputs, so
        an input can be freed as soon as its last user has run. The values go
        to the placeholders, in order, through ``initial_env`` of ``run``. A
        count that differs from the graph's placeholders is a RuntimeError:
        ``Interpreter.boxed_run: the graph has <P> placeholders but <A>
        arguments were given``, and the list is left as it was.
        """
        placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(args_list) != len(placeholders):
            raise RuntimeError(
                f"Interpreter.boxed_run: the graph has {len(placeholders)} placeholders "
                f"but {len(args_list)} arguments were given")
        env = dict(zip(placeholders, args_list))
        args_list.clear()
        return self.run(initial_env=env)
    # --8<-- [end:boxed_run]

    # --8<-- [start:run_node]
    def run_node(self, n: Node) -> Any:
        """Run one node: look up its arguments' values, then call ``self.<n.op>``."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)
    # --8<-- [end:run_node]

    # --8<-- [start:placeholder]
    def placeholder(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """The next argument of ``run`` (from ``self.args_iter``).

        A target starting with ``*`` (``*args``) takes all the arguments that
        are left, as a list. A placeholder with a default (``args[0]``) uses
        it when the arguments have run out; without one, that is a
        ``RuntimeError``: ``Expected positional argument for parameter
        <target>, but one was not passed in`` (not chained to the
        StopIteration).
        """
        assert isinstance(target, str)
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not "
                "passed in") from None
    # --8<-- [end:placeholder]

    # --8<-- [start:opcodes]
    def get_attr(self, target: Target, args: tuple[Argument, ...],
                 kwargs: dict[str, Any]) -> Any:
        """The attribute of the module at the dotted path ``target``
        (``"layer1.0.weight"``), looked up with ``self.fetch_attr`` at every run,
        so a missing one is its ``RuntimeError``."""
        assert isinstance(target, str)
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple[Argument, ...],
                      kwargs: dict[str, Any]) -> Any:
        """``target(*args, **kwargs)``, with the keyword arguments as given: override
        to swap or instrument free functions."""
        assert callable(target)
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """``args[0].<target>(*args[1:], **kwargs)``: the method named ``target``
        (a str) of the first argument's value, looked up on that value (so a
        subclass's own method runs), called with the other arguments and the
        keyword arguments."""
        self_obj, *args_tail = args
        assert isinstance(target, str)
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """Call the submodule at the dotted path ``target`` (``self.fetch_attr``) with
        ``args`` and ``kwargs``; a leaf runs whole, uninterpreted. The call goes
        through the module's ``__call__``, not ``forward``, so its hooks run as
        in eager mode."""
        assert isinstance(target, str)
        submod = self.fetch_attr(target)
        return submod(*args, **kwargs)

    # --8<-- [end:opcodes]

    # --8<-- [start:output]
    def output(self, target: Target, args: tuple[Argument, ...],
               kwargs: dict[str, Any]) -> Any:
        """What the graph returns: the output node's only argument (``args[0]``),
        whatever its structure (a value, a tuple, a dict ...), as it is."""
        return args[0]
    # --8<-- [end:output]

    # --8<-- [start:helpers]
    def fetch_attr(self, target: str) -> Any:
        """Follow the dotted path ``target`` from the module (``"layer1.0.weight"``).

        A missing atom is a ``RuntimeError``: ``Node referenced nonexistent
        target <what fetch_path says>``, whose text names the path up to the
        missing atom; it is raised without the AttributeError as its context
        (``from None``).
        """
        try:
            return fetch_path(self.module, target)
        except AttributeError as e:
            raise RuntimeError(f"Node referenced nonexistent target {e}") from None
    # --8<-- [end:helpers]

    # --8<-- [start:lookups]
    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``n.args`` and ``n.kwargs`` with every Node replaced by its value.

        Both go through ``self.map_nodes_to_values`` (with ``n``, for the
        error message); the answer is the pair (a tuple, a dict).
        """
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        assert isinstance(args, tuple) and isinstance(kwargs, dict)
        return args, kwargs

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        """Replace each Node inside ``args`` (nested anyhow) by its value in ``env``.

        Containers are rebuilt as ``map_arg`` rebuilds them. A Node without a
        value in ``self.env`` (freed too early, or from another graph) is a
        RuntimeError: ``Node <n> referenced nonexistent value <the node>! Run
        Graph.lint() to diagnose such issues``.
        """
        def load_arg(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() "
                    "to diagnose such issues")
            return self.env[n_arg]

        return map_arg(args, load_arg)
    # --8<-- [end:lookups]


# --8<-- [start:message_with_node]
def _message_with_node(e: Exception, node: Node) -> str:
    """The error's message, followed by the node that raised it (and where it was traced).

    The text is the exception's first arg, a blank line, then ``While
    executing `` and the node's line (``node.format_node()``). A node with a
    ``stack_trace`` adds a line ``Original traceback:`` and then that trace.
    An exception without args gives the ``While executing`` part alone.
    """
    where = f"While executing {node.format_node()}"
    if node.stack_trace:
        where += f"\nOriginal traceback:\n{node.stack_trace}"
    return f"{e.args[0]}\n\n{where}" if e.args else where
# --8<-- [end:message_with_node]
