"""minifx.passes.infra's PassManager behaves as torch.fx's, scenario by scenario.

Each test writes one scenario once, as a function of a library (``Lib``), and
runs it twice: through torch.fx's PassManager on a torch module traced by
torch.fx, and through minifx's on a tensor module traced by minifx. What the
two report (the calls the passes saw, in order; the modified flags; the
solved order; the errors, by type and the words that name the culprit) must
be the same.
"""

from __future__ import annotations

import abc
from typing import Any, NamedTuple

import pytest
import torch
import torch.fx as tfx
import torch.fx.passes.infra.pass_base as t_base
import torch.fx.passes.infra.pass_manager as t_pm
from hypothesis import given, settings
from hypothesis import strategies as st

import minifx
import minifx.passes.infra.pass_base as m_base
import minifx.passes.infra.pass_manager as m_pm
import tensor


class Lib(NamedTuple):
    name: str
    fx: Any
    base: Any  # the pass_base module
    pm: Any  # the pass_manager module
    lib: Any  # torch or tensor

    def traced(self) -> Any:
        """A traced ``x + y`` then ``* 2``, by the library's own tracer."""
        lib = self.lib

        class Adder(lib.nn.Module):
            def forward(self, x, y):
                return lib.add(x, y) * 2

        return self.fx.symbolic_trace(Adder())


TORCH = Lib("torch", tfx, t_base, t_pm, torch)
MINIFX = Lib("minifx", minifx, m_base, m_pm, tensor)


def both(scenario):
    """The scenario's report from torch.fx and from minifx; they must be equal."""
    theirs, ours = scenario(TORCH), scenario(MINIFX)
    assert ours == theirs
    return ours


def outcome(call):
    """What ``call()`` returned, or the error it raised: its type, its cause's type, its text."""
    try:
        return ("returned", call())
    except Exception as e:  # noqa: BLE001 (the error is the result being compared)
        cause = type(e.__cause__).__name__ if e.__cause__ is not None else None
        return ("raised", type(e).__name__, cause, str(e))


def logging_pass(name: str, log: list, lib: Lib, modifies: int = 0):
    """A pass that logs its name and reports ``modified`` for its first ``modifies`` calls."""
    calls = [0]

    def fn(gm):
        calls[0] += 1
        log.append(name)
        return lib.base.PassResult(gm, calls[0] <= modifies)

    fn.__name__ = name
    return fn


# -- order and fixed point --------------------------------------------------

def test_passes_run_in_list_order_once_when_nothing_changes():
    def scenario(lib):
        log = []
        passes = [logging_pass(n, log, lib) for n in "cab"]
        result = lib.pm.PassManager(passes, steps=4)(lib.traced())
        return log, result.modified, type(result).__name__

    assert both(scenario) == (["c", "a", "b"], False, "PassResult")


@pytest.mark.parametrize("steps", [None, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("modifies", [(0, 0), (1, 0), (2, 1), (3, 3), (9, 0)])
def test_rounds_repeat_until_no_pass_modifies_or_steps_run_out(steps, modifies):
    def scenario(lib):
        log = []
        passes = [logging_pass("a", log, lib, modifies[0]),
                  logging_pass("b", log, lib, modifies[1])]
        result = lib.pm.PassManager(passes, steps=steps)(lib.traced())
        return log, result.modified

    log, modified = both(scenario)
    rounds = min(steps or 1, max(modifies) + 1)  # the last round is the one that changed nothing
    assert log == ["a", "b"] * rounds and modified == (max(modifies) > 0)


def test_the_module_a_pass_returns_is_the_one_the_next_pass_gets_and_it_is_recompiled():
    def scenario(lib):
        seen = []

        def swap_add(gm):  # edits the graph in place, without recompiling
            for node in gm.graph.nodes:
                if node.target == lib.lib.add:
                    node.target = lib.lib.mul
            return lib.base.PassResult(gm, True)

        def fresh(gm):  # returns a new GraphModule on a copy of the graph
            import copy
            new = lib.fx.GraphModule(gm, copy.deepcopy(gm.graph))
            return lib.base.PassResult(new, False)

        def look(gm):
            seen.append(type(gm).__name__)
            return lib.base.PassResult(gm, False)

        gm = lib.traced()
        result = lib.pm.PassManager([swap_add, look, fresh, look])(gm)
        x, y = lib.lib.tensor([2.0, 3.0]), lib.lib.tensor([4.0, 5.0])
        return (seen, result.graph_module is gm, result.modified,
                gm(x, y).tolist(), "mul(x, y)" in gm.code)

    assert both(scenario) == (["Adder", "GraphModule"], False, True, [16.0, 30.0], True)


# -- constraints --------------------------------------------------------------

PASS_NAMES = "abcde"


def constrained(lib: Lib, pairs: list[tuple[int, int]], order: list[int]):
    """Passes named by ``order`` and this_before_that constraints for ``pairs``."""
    log: list[str] = []
    passes = {i: logging_pass(PASS_NAMES[i], log, lib) for i in set(order)}
    constraints = [lib.pm.this_before_that_pass_constraint(passes[a], passes[b])
                   for a, b in pairs if a in passes and b in passes and a != b]
    return log, [passes[i] for i in order], constraints


pair = st.tuples(st.integers(0, 4), st.integers(0, 4))


@settings(deadline=None, max_examples=60)
@given(pairs=st.lists(pair, max_size=6), order=st.permutations(range(5)))
def test_constraints_are_solved_to_the_same_order_or_the_same_error(pairs, order):
    def scenario(lib):
        log, passes, constraints = constrained(lib, pairs, order)
        pm = lib.pm.PassManager(passes, constraints)
        result = outcome(lambda: pm(lib.traced()).modified)
        return result[:3] + (("Circular dependency" in result[3]),) if result[0] == "raised" \
            else (result, log)

    both(scenario)


@settings(deadline=None, max_examples=60)
@given(pairs=st.lists(pair, max_size=4), order=st.permutations(range(5)))
def test_validate_constraints_accepts_and_refuses_the_same_lists(pairs, order):
    def scenario(lib):
        _, passes, constraints = constrained(lib, pairs, order)
        pm = lib.pm.PassManager(passes, constraints)
        result = outcome(pm.validate_constraints)
        return result[:3] + ("constraint violated" in result[3],) if result[0] == "raised" \
            else result

    both(scenario)


def test_a_cycle_names_its_passes_and_added_constraints_are_solved_again():
    def scenario(lib):
        log, passes, constraints = constrained(lib, [(2, 0)], [0, 1, 2])
        pm = lib.pm.PassManager(passes, constraints)
        pm(lib.traced())
        pm.add_constraint(lib.pm.this_before_that_pass_constraint(passes[1], passes[2]))
        pm(lib.traced())
        first = list(log)
        pm.add_constraint(lib.pm.this_before_that_pass_constraint(passes[0], passes[1]))
        err = outcome(lambda: pm(lib.traced()))
        return first, err[:3], "Circular dependency" in err[3]

    # c before a: b and c wait on nothing and keep their places; then b before c.
    first, err, _ = both(scenario)
    assert first == ["b", "c", "a", "b", "c", "a"] and err == ("raised", "RuntimeError", None)
    # torch.fx prints the passes' reprs; minifx names them.
    *_, text = outcome(lambda: scenario_error(MINIFX))
    assert all(f"'{n}'" in text for n in "abc")


def scenario_error(lib):
    _, passes, constraints = constrained(lib, [(2, 0), (1, 2), (0, 1)], [0, 1, 2])
    lib.pm.PassManager(passes, constraints)(lib.traced())


# -- what a pass may return ------------------------------------------------------

@pytest.mark.parametrize("returns", ["none", "module", "int"])
def test_a_pass_must_return_a_pass_result(returns):
    def scenario(lib):
        def plain(gm):
            return {"none": None, "module": gm, "int": 3}[returns]

        err = outcome(lambda: lib.pm.PassManager([plain])(lib.traced()))
        return err[:3], "PassResult" in err[3] or "plain" in err[3]

    assert both(scenario) == (("raised", "Exception", "TypeError"), True)


@pytest.mark.parametrize("returns", ["none", "module", "result", "int"])
def test_pass_result_wrapper(returns):
    def scenario(lib):
        def plain(gm):
            if returns == "result":
                return lib.base.PassResult(gm, False)
            return {"none": None, "module": gm, "int": 3}[returns]

        wrapped = lib.pm.pass_result_wrapper(plain)
        gm = lib.traced()
        direct = wrapped(gm)
        direct = None if direct is None else (direct.graph_module is gm, direct.modified)
        managed = outcome(lambda: lib.pm.PassManager([wrapped])(gm).modified)
        return wrapped.__name__, direct, managed[:3]

    both(scenario)


def test_pass_result_wrapper_of_none_and_of_a_callable_object():
    class Doubler:
        def __call__(self, gm):
            return None

    def scenario(lib):
        return lib.pm.pass_result_wrapper(None), lib.pm.pass_result_wrapper(Doubler()).__name__

    assert both(scenario) == (None, "Doubler")


def test_pass_result_is_a_named_pair():
    def scenario(lib):
        r = lib.base.PassResult(graph_module="gm", modified=True)
        gm, modified = r
        return tuple(r), r.graph_module, r.modified, gm, modified, isinstance(r, tuple)

    both(scenario)


# -- PassBase ----------------------------------------------------------------------

def test_pass_base_runs_requires_call_ensures_and_is_abstract():
    def scenario(lib):
        log = []

        class Logged(lib.base.PassBase):
            def requires(self, gm):
                log.append("requires")

            def call(self, gm):
                log.append("call")
                return lib.base.PassResult(gm, True)

            def ensures(self, gm):
                log.append("ensures")

        class Refuses(Logged):
            def requires(self, gm):
                raise ValueError("no add allowed")

        result = lib.pm.PassManager([Logged()], steps=2)(lib.traced())
        refused = outcome(lambda: lib.pm.PassManager([Logged(), Refuses()])(lib.traced()))
        abstract = outcome(lambda: lib.base.PassBase())
        return (log, result.modified, refused[:3], "Refuses" in refused[3],
                "'Logged'" in refused[3], abstract[:2], issubclass(lib.base.PassBase, abc.ABC))

    log, *_ = both(scenario)
    assert log == ["requires", "call", "ensures"] * 3


def test_an_error_in_a_pass_names_it_and_the_passes_before_it():
    def scenario(lib):
        log = []

        def broken(gm):
            raise KeyError("boom")

        passes = [logging_pass("first", log, lib), logging_pass("second", log, lib), broken]
        err = outcome(lambda: lib.pm.PassManager(passes)(lib.traced()))
        return err[:3], [w in err[3] for w in ("'broken'", "'first'", "'second'")], log

    assert both(scenario) == (("raised", "Exception", "KeyError"), [True] * 3,
                              ["first", "second"])


# -- checks --------------------------------------------------------------------------

@pytest.mark.parametrize("after_each", [False, True])
def test_the_check_runs_first_and_after_each_pass_when_asked(after_each):
    def scenario(lib):
        log = []
        passes = [logging_pass("a", log, lib, 1), logging_pass("b", log, lib)]
        pm = lib.pm.PassManager(passes, steps=3, run_checks_after_each_pass=after_each)
        pm.add_checks(lambda gm: log.append("check"))
        pm(lib.traced())
        return log

    log = both(scenario)
    assert log.count("check") == (5 if after_each else 1)


def test_a_check_takes_one_argument():
    def scenario(lib):
        pm = lib.pm.PassManager()
        err = outcome(lambda: pm.add_checks(lambda gm, strict: None))
        return err[:3], "one" in err[3]

    assert both(scenario) == (("raised", "TypeError", None), True)


@pytest.mark.parametrize("suppress", [False, True])
def test_lint_as_the_check_catches_a_pass_that_breaks_the_graph(suppress):
    """The check before the passes raises as it is; after a pass, wrapped and naming it.
    ``suppress_check_failures`` changes neither, in torch.fx 2.13 as here."""
    def scenario(lib):
        def cross_graph(gm):  # a new node reads an input of another graph
            stranger = next(iter(lib.traced().graph.nodes))
            with gm.graph.inserting_before(gm.graph.output_node()):
                gm.graph.call_function(lib.lib.neg, (stranger,))
            return lib.base.PassResult(gm, True)

        pm = lib.pm.PassManager([cross_graph], run_checks_after_each_pass=True,
                                suppress_check_failures=suppress)
        pm.add_checks(lambda gm: gm.graph.lint())
        after = outcome(lambda: pm(lib.traced()))
        broken = lib.traced()
        cross_graph(broken)
        before = outcome(lambda: pm(broken))
        return after[:3], "'cross_graph'" in after[3], before[:3]

    assert both(scenario) == (("raised", "Exception", "RuntimeError"), True,
                              ("raised", "RuntimeError", None))
