"""Every zoo model converts to tensor and computes what torch computes (float32 tolerance)."""

import copy

import numpy as np
import pytest
import torch

import minifx
import tensor
from minifx.convert import torch_to_tensor
from minifx.convert.table import conversion_table
from minifx.convert.values import ValueConverter
from tests.ch11.ch11_models import ZOO, resnet_50, small_cnn


def as_tensor_inputs(inputs):
    values = ValueConverter(conversion_table())
    return [values.tensor(x) for x in inputs]


def assert_same(ours, theirs):
    """torch.testing.assert_close (float32 defaults) on every output, nested."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tensor.Tensor), type(ours)
        torch.testing.assert_close(torch.from_numpy(ours.numpy().copy()), theirs)
    elif isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
    else:
        assert ours == theirs


@pytest.mark.parametrize("name", sorted(ZOO))
def test_converted_model_matches_torch(name):
    model, inputs = ZOO[name]()
    converted = torch_to_tensor(copy.deepcopy(model) if isinstance(model, torch.nn.Module)
                                else model, inputs)
    assert isinstance(converted, tensor.nn.Module)
    assert isinstance(converted, minifx.GraphModule)
    converted.graph.lint()
    with torch.no_grad():
        expected = model(*inputs)
    assert_same(converted(*as_tensor_inputs(inputs)), expected)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_converted_code_names_no_torch(name):
    model, inputs = ZOO[name]()
    converted = torch_to_tensor(model)
    assert "torch" not in converted.code
    for node in converted.graph.nodes:
        if node.op == "call_module":
            assert type(converted.get_submodule(node.target)).__module__.startswith("tensor.nn")
        if node.op == "get_attr":
            value = converted
            for atom in node.target.split("."):
                value = getattr(value, atom)
            assert isinstance(value, tensor.Tensor)


def test_every_torch_function_becomes_its_tensor_namesake():
    """Where the torch graph calls torch.X, the converted graph calls tensor.X."""
    model, inputs = ZOO["mlp"]()
    theirs = minifx.symbolic_trace(model)
    ours = torch_to_tensor(model)
    pairs = list(zip(theirs.graph.nodes, ours.graph.nodes))
    assert len(pairs) == len(theirs.graph.nodes) == len(ours.graph.nodes)
    functions = 0
    for before, after in pairs:
        assert (before.op, before.name) == (after.op, after.name)
        if before.op == "call_function":
            functions += 1
            assert after.target.__module__.replace("tensor", "torch") == before.target.__module__
            assert after.target.__name__ == before.target.__name__
    assert functions == 3
    assert ours.code == theirs.code.replace("torch.", "tensor.")


def test_the_code_reads_tensor_where_torch_read_torch():
    model, _ = ZOO["small_cnn"]()
    theirs = minifx.symbolic_trace(model).code
    ours = torch_to_tensor(model).code
    assert "torch.relu(" in theirs and "tensor.relu(" in ours
    # F.max_pool2d records torch's return_indices=False; tensor's has no such
    # argument, and at torch's default it changes nothing, so it is dropped.
    assert ", return_indices = False" in theirs
    assert ours == theirs.replace("torch.", "tensor.").replace(", return_indices = False", "")


def test_weights_are_copied_not_shared():
    model, inputs = ZOO["mlp"]()
    converted = torch_to_tensor(model)
    assert np.array_equal(converted.fc1.weight.numpy(), model.fc1.weight.detach().numpy())
    with torch.no_grad():
        model.fc1.weight.add_(1.0)
    assert not np.array_equal(converted.fc1.weight.numpy(), model.fc1.weight.detach().numpy())
    assert isinstance(converted.fc1.weight, tensor.nn.Parameter)


def test_tied_weights_stay_tied():
    """TinyGPT's output layer is F.linear with the token embedding's weight."""
    model, inputs = ZOO["tiny_gpt"]()
    converted = torch_to_tensor(model)
    tied = [n for n in converted.graph.nodes if n.op == "get_attr" and n.target == "tok.weight"]
    assert len(tied) == 1
    # Zero the embedding table of the twin: the output layer reads the same
    # array (one tensor Parameter for one torch Parameter), so the logits are 0.
    converted.tok.weight.zero_()
    logits = converted(*as_tensor_inputs(inputs))
    assert not logits.numpy().any()


def test_batchnorm_state_is_copied():
    model, _ = small_cnn()
    converted = torch_to_tensor(model)
    for name in ("bn1", "bn2"):
        ours, theirs = converted.get_submodule(name), model.get_submodule(name)
        for key, value in theirs.state_dict().items():
            np.testing.assert_array_equal(ours.state_dict()[key].numpy(), value.numpy())
        assert int(ours.num_batches_tracked.item()) == int(theirs.num_batches_tracked)
        assert (ours.eps, ours.momentum) == (theirs.eps, theirs.momentum)


# Batch statistics of a batch of 2 over 1x1 maps (ResNet-18's last stage at
# 32x32) divide by a variance of two values and magnify rounding; 64x64 and a
# batch of 4 give each channel enough values to be well conditioned.
@pytest.mark.parametrize("name,shape", [("small_cnn", (4, 3, 16, 16)),
                                        ("resnet_18", (4, 3, 64, 64))])
def test_train_mode_batchnorm_matches_torch_and_moves_the_same_statistics(name, shape):
    model, _ = ZOO[name]()
    inputs = (torch.randn(*shape),)
    model.train()
    converted = torch_to_tensor(copy.deepcopy(model))
    assert converted.training
    assert all(m.training for m in converted.modules())
    for _ in range(2):  # two steps: the second uses statistics the first moved
        with torch.no_grad():
            expected = model(*inputs)
        assert_same(converted(*as_tensor_inputs(inputs)), expected)
    ours, theirs = converted.state_dict(), model.state_dict()
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        torch.testing.assert_close(torch.from_numpy(ours[key].numpy().copy()), value)


def test_training_flags_are_kept_per_module():
    model, _ = small_cnn()
    model.train()
    model.bn2.eval()
    converted = torch_to_tensor(model)
    assert converted.training and converted.bn1.training and not converted.bn2.training


def test_resnet50_at_batch_8():
    model, inputs = resnet_50(image=32, batch=8)
    converted = torch_to_tensor(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    assert_same(converted(*as_tensor_inputs(inputs)), expected)


def test_converted_model_traces_again_with_tensor():
    """The result is an ordinary tensor model: minifx traces it like any other."""
    model, inputs = ZOO["mixed"]()
    converted = torch_to_tensor(model)
    again = minifx.symbolic_trace(converted)
    assert again.code == converted.code
    first = again(*as_tensor_inputs(inputs))
    second = converted(*as_tensor_inputs(inputs))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("name", ["mlp", "encoder_block"])
def test_converted_model_compiles_with_the_numba_backend(name):
    """Chapter 8's minifx.compile takes the converted model like any tensor model."""
    model, inputs = ZOO[name]()
    converted = torch_to_tensor(model)
    compiled = minifx.compile(converted, backend="numba")
    ours = as_tensor_inputs(inputs)
    np.testing.assert_allclose(compiled(*ours).numpy(), converted(*ours).numpy(),
                               rtol=1e-6, atol=1e-6)


def test_constants_made_in_forward_are_copied_and_the_model_left_alone():
    class Constant(torch.nn.Module):
        def forward(self, x):
            return x * torch.tensor([1.0, 2.0, 3.0]) + torch.ones(3)

    model = Constant()
    converted = torch_to_tensor(model)
    # Both tensors are made while tracing, from Python values: constants.
    assert [n.target for n in converted.graph.nodes if n.op == "get_attr"] == [
        "_tensor_constant0", "_tensor_constant1"]
    assert not hasattr(model, "_tensor_constant0")  # tracing stored them; conversion took them
    x = torch.randn(2, 3)
    assert_same(converted(*as_tensor_inputs((x,))), model(x))
