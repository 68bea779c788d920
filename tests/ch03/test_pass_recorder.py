"""The recorder keeps what each pass step did, as JSON data: checked on real rewrites.

The rewrites are chapter 3's (add -> mul by a target swap; add -> bitwise_and
by insert, replace and erase), a Transformer (a new graph) and ShapeProp
(meta only). Where torch.fx can say what the graph or the code must be after
the step, the same rewrite is run on a torch module by torch.fx and the
recorded text must be its text with ``torch`` read as ``tensor``.
"""

from __future__ import annotations

import copy
import json

import pytest
import torch
import torch.fx as tfx
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

import minifx
import tensor
from minifx.passes.infra.pass_base import PassResult
from minifx.passes.infra.pass_manager import PassManager, pass_result_wrapper
from minifx.passes.infra.recorder import Recorder
from minifx.passes.shape_prop import ShapeProp


def traced(fx, lib):
    class Adder(lib.nn.Module):
        def forward(self, x, y):
            return lib.add(x, y) * 2

    return fx.symbolic_trace(Adder())


def add_to_mul(lib):
    def add_to_mul(gm):
        modified = False
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == lib.add:
                node.target = lib.mul
                modified = True
        return PassResult(gm, modified)
    return add_to_mul


def add_to_and(gm, lib=tensor):
    """Chapter 3's second rewrite: a new node after add, its users moved over, add erased."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target == lib.add:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(lib.bitwise_and, node.args, node.kwargs)
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.recompile()


def ids(snapshot):
    return {e["name"]: e["id"] for e in snapshot["nodes"]}


def as_tensor(text):
    return text.replace("torch", "tensor")


def test_the_target_swap_is_one_changed_node_and_its_code():
    pm = PassManager([add_to_mul(tensor)], record=True)
    result = pm(traced(minifx, tensor))
    theirs = add_to_mul(torch)(traced(tfx, torch)).graph_module
    theirs.recompile()

    (step,) = pm.recorder.steps
    before, after = ids(step["before"]), ids(step["after"])
    assert before == after  # every node survived, each keeps its id
    assert (step["name"], step["round"], step["modified"]) == ("add_to_mul", 0, True)
    assert step["changed"] == [{"node": before["add"],
                                "fields": {"target": ["tensor.add", "tensor.mul"]}}]
    assert step["added"] == step["erased"] == step["replaced"] == step["meta_changes"] == []
    assert "add = tensor.add(x, y)" in step["before"]["code"]
    assert step["after"]["code"] == result.graph_module.code == as_tensor(theirs.code)
    assert step["after"]["graph"] == as_tensor(str(theirs.graph))


def test_insert_replace_erase_is_recorded_with_who_replaced_whom():
    recorder = Recorder()
    gm = recorder.wrap(pass_result_wrapper(add_to_and))(traced(minifx, tensor)).graph_module
    theirs = traced(tfx, torch)
    add_to_and(theirs, torch)

    (step,) = recorder.steps
    before, after = ids(step["before"]), ids(step["after"])
    assert step["name"] == "add_to_and" and step["modified"] is True
    assert step["added"] == [after["bitwise_and"]] and step["erased"] == [before["add"]]
    assert step["replaced"] == [{"node": before["add"], "by": [after["bitwise_and"]]}]
    assert step["changed"] == [{"node": before["mul"], "fields": {
        "args": ["(%add, 2)", "(%bitwise_and, 2)"],
        "inputs": [[before["add"]], [after["bitwise_and"]]]}}]
    assert {k: v for k, v in after.items() if k != "bitwise_and"} == \
        {k: v for k, v in before.items() if k != "add"}
    assert step["after"]["graph"] == str(gm.graph) == as_tensor(str(theirs.graph))
    assert step["after"]["code"] == as_tensor(theirs.code)
    users = {e["name"]: e["users"] for e in step["after"]["nodes"]}
    assert users["x"] == users["y"] == [after["bitwise_and"]]


def test_ids_survive_many_steps_and_a_pass_that_returns_a_new_graph():
    def copy_module(gm):
        return PassResult(minifx.GraphModule(gm, copy.deepcopy(gm.graph)), False)

    pm = PassManager([add_to_mul(tensor), copy_module, pass_result_wrapper(add_to_and)],
                     steps=3, record=True)
    pm(traced(minifx, tensor))
    steps = pm.recorder.steps
    # Round 0: swap (modified), copy, add_to_and (no add left: wrapper says modified);
    # round 1 again modified by the wrapper's guess; round 2 is the last allowed.
    assert [(s["name"], s["round"]) for s in steps] == [
        (n, r) for r in range(3) for n in ("add_to_mul", "copy_module", "add_to_and")]
    first = ids(steps[0]["before"])
    for s in steps:
        assert ids(s["before"]) == ids(s["after"]) == first  # nothing added or erased
    assert all(not (s["changed"] or s["added"] or s["erased"]) for s in steps[1:])
    assert steps[1]["before"]["graph"] == steps[1]["after"]["graph"]


def test_a_transformer_step_follows_nodes_by_name_into_the_new_graph():
    class SigmoidToNeg(minifx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is tensor.sigmoid:
                return super().call_function(tensor.neg, args, kwargs)
            return super().call_function(target, args, kwargs)

    def f(x):
        return tensor.sigmoid(x) + 1

    recorder = Recorder()
    gm = minifx.symbolic_trace(f)
    new = recorder.run(lambda m: SigmoidToNeg(m).transform(), gm, name="SigmoidToNeg")
    (step,) = recorder.steps
    before, after = ids(step["before"]), ids(step["after"])
    assert step["modified"] is None  # a bare module: the pass did not say
    assert step["erased"] == [before["sigmoid"]] and step["added"] == [after["neg"]]
    assert step["replaced"] == [{"node": before["sigmoid"], "by": [after["neg"]]}]
    assert before["x"] == after["x"] and before["add"] == after["add"]
    assert step["after"]["code"] == new.code and "tensor.neg(x)" in new.code


def test_shape_prop_is_recorded_as_meta_changes_with_torch_s_shapes():
    def shapes(gm):
        ShapeProp(gm).propagate(tensor.ones(2, 3), tensor.ones(2, 3))
        return PassResult(gm, False)

    pm = PassManager([shapes], record=True)
    pm(traced(minifx, tensor))
    theirs = traced(tfx, torch)
    TorchShapeProp(theirs).propagate(torch.ones(2, 3), torch.ones(2, 3))
    torch_shapes = {n.name: list(n.meta["tensor_meta"].shape) for n in theirs.graph.nodes
                    if "tensor_meta" in n.meta}

    (step,) = pm.recorder.steps
    names = {e["id"]: e["name"] for e in step["after"]["nodes"]}
    shapes_seen = {names[m["node"]]: m["after"]["shape"] for m in step["meta_changes"]
                   if m["key"] == "tensor_meta"}
    assert shapes_seen == torch_shapes and len(shapes_seen) == 5  # output too
    assert all(m["before"] is None for m in step["meta_changes"])
    kinds = {m["after"] for m in step["meta_changes"] if m["key"] == "type"}
    assert kinds == {"tensor.Tensor"}
    mul = next(e for e in step["after"]["nodes"] if e["name"] == "mul")
    assert mul["meta"]["tensor_meta"] == {"shape": [2, 3], "dtype": "tensor.float32"}
    assert step["changed"] == [] and step["before"]["code"] == step["after"]["code"]


def test_only_json_data_of_meta_is_kept_and_the_whole_record_is_json():
    def tag(gm):
        for node in gm.graph.nodes:
            node.meta["fused"] = ["add", "mul"] if node.name == "mul" else None
            node.meta["handle"] = object()  # not data: left out
        return PassResult(gm, True)

    pm = PassManager([tag], record=True)
    pm(traced(minifx, tensor))
    data = json.loads(pm.recorder.to_json())
    assert data == pm.recorder.as_dict()
    (step,) = data["steps"]
    assert {(m["key"], str(m["after"])) for m in step["meta_changes"]} == {
        ("fused", "['add', 'mul']")}  # None before and None after is no change
    assert all("handle" not in e["meta"] and "stack_trace" not in e["meta"]
               for e in step["after"]["nodes"])


def test_checkpoints_split_a_pass_into_its_rewrites():
    recorder = Recorder()

    def swap_each(gm):
        recorder.checkpoint(gm, "start")
        for node in gm.graph.nodes:
            if node.op == "call_function":
                node.target = {tensor.add: tensor.sub, tensor.mul: tensor.div}.get(
                    node.target, node.target)
                recorder.checkpoint(gm, f"swapped {node.name}")

    gm = minifx.symbolic_trace(lambda x: tensor.mul(tensor.add(x, 1), 2))
    swap_each(gm)
    assert [s["name"] for s in recorder.steps] == ["swapped add", "swapped mul"]
    assert [s["changed"][0]["fields"]["target"] for s in recorder.steps] == [
        ["tensor.add", "tensor.sub"], ["tensor.mul", "tensor.div"]]
    assert recorder.describe().splitlines() == [
        "0. swapped add (modified=None): add.target: tensor.add -> tensor.sub",
        "1. swapped mul (modified=None): mul.target: tensor.mul -> tensor.div"]


def test_recording_does_not_change_what_the_manager_reports():
    def returns_int(gm):
        return 3

    errors = []
    for record in (False, True):
        with pytest.raises(Exception, match="returns_int") as info:
            PassManager([returns_int], record=record)(traced(minifx, tensor))
        errors.append((type(info.value), type(info.value.__cause__), str(info.value)))
    assert errors[0] == errors[1] and errors[0][1] is TypeError
    plain = PassManager([add_to_mul(tensor)], steps=2)(traced(minifx, tensor))
    recorded = PassManager([add_to_mul(tensor)], steps=2, record=True)(traced(minifx, tensor))
    assert (plain.modified, plain.graph_module.code) == \
        (recorded.modified, recorded.graph_module.code)


def test_recording_needs_a_graph():
    with pytest.raises(TypeError, match="needs a GraphModule"):
        Recorder().snapshot(tensor.nn.Linear(2, 2))


def test_a_torch_fx_run_is_recorded_as_ours_is():
    """The recorder reads torch.fx's graphs too (to compare a pass with torch.fx's run of it):
    the same rewrite by torch.fx's PassManager gives the same step, field for field."""
    from torch.fx.passes.infra.pass_manager import PassManager as TorchPassManager

    ours = PassManager([pass_result_wrapper(add_to_and)], record=True)
    ours(traced(minifx, tensor))
    theirs = Recorder()
    TorchPassManager([theirs.wrap(pass_result_wrapper(lambda gm: add_to_and(gm, torch)),
                                  name="add_to_and")])(traced(tfx, torch))

    def readable(step):
        names = {e["id"]: e["name"] for e in step["before"]["nodes"] + step["after"]["nodes"]}
        nodes = [{k: v for k, v in e.items() if k not in ("id", "inputs", "users", "meta")}
                 for e in step["after"]["nodes"]]
        return (nodes, [names[i] for i in step["added"]], [names[i] for i in step["erased"]],
                as_tensor(step["after"]["graph"]), as_tensor(step["after"]["code"]))

    (mine,), (torch_step,) = ours.recorder.steps, theirs.steps
    assert readable(mine) == readable({**torch_step, "after": {
        **torch_step["after"], "nodes": [{**e, "target": as_tensor(e["target"])}
                                         for e in torch_step["after"]["nodes"]]}})
    mul = next(e for e in torch_step["after"]["nodes"] if e["name"] == "mul")
    assert mul["args"] == "(%bitwise_and, 2)"
