"""Chapter 12: fake tensors have the real result's shape, dtype and strides, and fail alike.

The oracle is the real computation: every primitive of `tensor.ops` (the
test fails if one is added without a sample here) and a sweep of public
ops are run on random inputs, contiguous and not, then on their fake twins
under a FakeTensorMode; shape, dtype and strides must be equal. Bad input
must raise the same exception, with the same message, both ways.
"""

import tracemalloc

import numpy as np
import pytest

import tensor
import tensor.nn.functional as F
from tensor import ops
from tensor.fake import FakeTensor, FakeTensorMode
from tests import models

rng = np.random.default_rng(0)


def r(*shape, dtype=np.float32):
    return tensor.from_numpy(rng.standard_normal(shape).astype(dtype))


def transposed(*shape):
    return r(*reversed(shape)).t() if len(shape) == 2 else r(*shape).permute(0, 2, 1)


X = r(3, 4)
XT = transposed(3, 4)
IMG = r(2, 3, 8, 8)
SAMPLES = {  # primitive -> argument lists; each is checked real against fake
    **{op.name: [(X,), (XT,)] for op in tensor._ops.OPS if op.kind == "unary"},
    **{op.name + "_": [(X,), (XT,)] for op in tensor._ops.OPS if op.kind == "unary"},
    **{name: [(r(3, 1, 4), r(2, 4)), (XT, 2.0), (1.5, X), (X, XT)]
       for name in ("add", "sub", "mul", "div", "pow", "maximum", "minimum")},
    **{name: [(tensor.tensor([[1, 2], [3, 4]]), tensor.tensor([3, 1]))]
       for name in ("bitwise_and", "bitwise_or")},
    **{name: [(r(3, 1, 4), r(2, 4)), (XT, 0.0)] for name in ("gt", "lt", "ge", "le", "eq", "ne")},
    "where": [(X > 0, X, XT), (r(2, 1) > 0, r(1, 3), r(2, 3))],
    "clamp": [(X, -0.5, 0.5), (XT, None, 0.1)],
    **{name: [(X, (1,), False), (r(2, 3, 4), (0, 2), True), (XT, (), False)]
       for name in ("sum", "mean", "amax", "amin")},
    "argmax": [(X, 1, False), (X, None, False), (r(2, 3, 4), 2, True)],
    "softmax": [(X, 1), (XT, 0)],
    "log_softmax": [(X, 1)],
    "matmul": [(r(2, 3, 4), r(4, 5)), (r(4), r(4)), (r(4), r(4, 2)), (r(3, 4), r(4)),
               (r(2, 1, 3, 4), r(5, 4, 2)), (XT, r(4, 2))],
    "linear": [(r(5, 3), r(4, 3), r(4)), (r(2, 5, 3), r(4, 3), None)],
    "conv2d": [(IMG, r(4, 3, 3, 3), r(4), (1, 1), (1, 1), (1, 1), 1),
               (IMG, r(6, 1, 3, 3), None, (2, 2), (0, 1), (2, 1), 3)],
    "max_pool2d": [(IMG, (2, 2), (2, 2), (0, 0), (1, 1), False),
                   (r(2, 3, 7, 7), (3, 3), (2, 2), (1, 1), (1, 1), True)],
    "avg_pool2d": [(IMG, (2, 2), (2, 2), (0, 0), False, True),
                   (r(2, 3, 7, 7), (3, 3), (2, 2), (1, 1), True, False)],
    "adaptive_avg_pool2d": [(IMG, (3, 3)), (IMG, (1, 1))],
    "batch_norm": [(IMG, r(3), r(3).abs(), r(3), r(3), 1e-5)],
    "layer_norm": [(r(2, 5, 4), 1, r(4), r(4), 1e-5), (r(2, 5, 4), 2, None, None, 1e-5)],
    "embedding": [(tensor.tensor([[0, 2], [1, 1]]), r(3, 4))],
    "view": [(X, 12), (X, 2, -1)],
    "reshape": [(XT, 12), (X, (4, 3))],
    "permute": [(r(2, 3, 4), 2, 0, 1)],
    "transpose": [(r(2, 3, 4), 0, 2)],
    "t": [(X,)],
    "expand": [(r(1, 4), 3, 4), (r(3, 1), (2, 3, 5))],
    "unsqueeze": [(XT, 1), (X, 0)],
    "squeeze": [(r(3, 1, 4), 1), (r(1, 3, 1),)],
    "getitem": [(X, (slice(None), slice(1, 3))), (r(4, 6), (slice(None, None, 2), 1)),
                (X, (None, Ellipsis, 0)), (X, tensor.tensor([0, 2]))],
    "clone": [(X,), (XT,)],
    "to_dtype": [(X, tensor.float64), (X, tensor.int64)],
    "copy_": [(r(3, 4), r(4))],
    "cat": [([X, r(2, 4)], 0), ([X, XT], 1)],
    "stack": [([X, XT], 1)],
    "full": [((2, 3), 1.5, tensor.float32), ((4,), 2, tensor.int64)],
    "rand": [((2, 3), tensor.float32)],
    "randn": [((3, 2, 1), tensor.float64)],
    "arange": [(0, 5, 1, tensor.int64), (1.0, 2.0, 0.3, tensor.float32),
               (5, -1, -2, tensor.float64), (3, 3, 1, tensor.int64)],
}


def fake_args(mode, value):
    if isinstance(value, tensor.Tensor):
        return mode.from_tensor(value)
    if isinstance(value, (tuple, list)):
        return type(value)(fake_args(mode, v) for v in value)
    return value


def assert_same_metadata(fake, real):
    if isinstance(real, (tuple, list)):
        for f, x in zip(fake, real):
            assert_same_metadata(f, x)
        return
    assert isinstance(fake, FakeTensor)
    assert (fake.shape, fake.dtype, fake.stride()) == (real.shape, real.dtype, real.stride())


def test_every_primitive_has_samples():
    assert set(SAMPLES) == set(ops.PRIMITIVES)


@pytest.mark.parametrize("name, index", [(n, i) for n in sorted(SAMPLES)
                                         for i in range(len(SAMPLES[n]))])
def test_primitive_meta_equals_real(name, index):
    primitive, args = ops.PRIMITIVES[name], SAMPLES[name][index]
    if name.endswith("_"):  # in place: give each run its own destination
        args = (args[0].clone() if args[0].is_contiguous() else args[0].t().clone().t(),
                *args[1:])
    real = primitive(*args)
    with FakeTensorMode() as mode:
        fake = primitive(*fake_args(mode, args))
    assert_same_metadata(fake, real)


PUBLIC = [  # public calls, as a user writes them
    lambda x: x + x.t().t(),
    lambda x: (x.t() * 2.0).sum(0),
    lambda x: tensor.relu(x).permute(1, 0).contiguous().view(-1),
    lambda x: x.t().reshape(-1),
    lambda x: x[1:, ::2].unsqueeze(0).expand(3, 2, 2),
    lambda x: F.softmax(x, dim=-1).argmax(1),
    lambda x: tensor.cat([x, x.t().t()], dim=1).mean(dim=1, keepdim=True),
    lambda x: (x > 0).long().float() @ x.t(),
    lambda x: tensor.stack([x, x], dim=2).flatten(1),
    lambda x: x.max(dim=1).values.double(),
    lambda x: F.gelu(x, approximate="tanh"),
    lambda x: F.layer_norm(x, (4,)),
    lambda x: tensor.where(x > 0, x, 0.5),
    lambda x: x.clamp(min=0.0).rsqrt(),
    lambda x: x.chunk(2, dim=1)[1],
    lambda x: tensor.zeros(3, 4) + tensor.ones_like(x),
]


@pytest.mark.parametrize("index", range(len(PUBLIC)))
def test_public_ops_fake_equal_real(index):
    fn = PUBLIC[index]
    x = r(3, 4)
    real = fn(x)
    with FakeTensorMode() as mode:
        fake = fn(mode.from_tensor(x))
    assert_same_metadata(fake, real)


@pytest.mark.parametrize("build", [
    lambda: (tensor.nn.Conv2d(3, 8, 3, stride=2, padding=1), r(2, 3, 16, 16)),
    lambda: (tensor.nn.Sequential(tensor.nn.Linear(6, 5), tensor.nn.GELU(), tensor.nn.LayerNorm(5)),
             r(2, 7, 6)),
    lambda: (models.resnet18(tensor.nn, width=8).eval(), r(2, 3, 32, 32)),
])
def test_modules_fake_equal_real(build):
    model, x = build()
    real = model(x)
    with FakeTensorMode() as mode:
        fake = model(mode.from_tensor(x))
    assert_same_metadata(fake, real)


BAD = [
    lambda x: x + r(5),
    lambda x: x @ r(3, 2),
    lambda x: x.view(5, -1),
    lambda x: x.t().view(12),
    lambda x: tensor.cat([x, r(3, 5)], dim=0),
    lambda x: F.linear(x, r(2, 5)),
    lambda x: F.conv2d(x.reshape(1, 1, 3, 4), r(2, 3, 1, 1)),
    lambda x: F.conv2d(x.reshape(1, 1, 3, 4), r(2, 1, 5, 5)),
    lambda x: x.expand(2, 3, 5),
    lambda x: x.sum(dim=3),
    lambda x: tensor.stack([x, x.t()]),
    lambda x: F.layer_norm(x, (3,)),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_the_same_error_under_fake_tensors(index):
    x = r(3, 4)
    with pytest.raises(Exception) as real:
        BAD[index](x)
    with FakeTensorMode() as mode, pytest.raises(Exception) as fake:
        BAD[index](mode.from_tensor(x))
    assert type(fake.value) is type(real.value)
    assert str(fake.value) == str(real.value)


def test_creation_under_the_mode_is_fake_and_allocates_nothing():
    tracemalloc.start()
    try:
        with FakeTensorMode():
            made = [tensor.empty(256, 3, 224, 224), tensor.zeros(1024, 1024, 64),
                    tensor.randn(4096, 4096, dtype=tensor.float64), tensor.full((1000, 1000), 2)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert all(isinstance(t, FakeTensor) for t in made)
    assert made[3].dtype == tensor.int64 and made[2].stride() == (4096, 1)
    assert peak < 1e6


def test_a_fake_tensor_has_no_data_and_keeps_its_mode():
    mode = FakeTensorMode()
    fake = mode.from_tensor(r(2, 3).t())
    assert fake.stride() == (1, 3) and fake.fake_mode is mode
    assert repr(fake) == "FakeTensor(..., size=(3, 2), dtype=tensor.float32)"
    for read in (lambda: fake.numpy(), lambda: fake.sum().item(), lambda: fake.tolist(),
                 lambda: bool(fake.sum() > 0)):
        with pytest.raises(RuntimeError, match="no data"):
            read()
    later = tensor.relu(fake) + 1.0  # outside the with block: the mode comes back
    assert isinstance(later, FakeTensor) and later.shape == (3, 2)
    assert isinstance(ops.add(fake, fake), FakeTensor)


def test_resnet50_batch_256_propagates_in_well_under_100_mb():
    from minifx import symbolic_trace
    from minifx.passes.fake_tensor_prop import FakeTensorProp

    gm = symbolic_trace(models.resnet50(tensor.nn).eval())
    x = tensor.empty(1, 3, 224, 224)
    mode = FakeTensorMode()
    big = mode.from_tensor(x).expand(256, 3, 224, 224).contiguous()
    tracemalloc.start()
    try:
        out = FakeTensorProp(gm, mode).propagate_dont_convert_inputs(big)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.shape == (256, 1000)
    assert peak < 20e6  # real activations: several GB


@pytest.mark.parametrize("name, args", [
    ("add", (r(2, 3), r(4, 3))),
    ("matmul", (r(2, 3), r(4, 5))),
    ("matmul", (r(3), r(4))),
    ("linear", (r(2, 3), r(4, 5), None)),
    ("where", (r(2, 1) > 0, r(3, 3), r(3, 3))),
    ("arange", (0, 5, 0, tensor.int64)),
    ("arange", (0, 5, -1, tensor.int64)),
])
def test_a_primitive_called_directly_fails_alike_real_and_fake(name, args):
    with pytest.raises(RuntimeError) as real:
        ops.PRIMITIVES[name](*args)
    with FakeTensorMode() as mode, pytest.raises(RuntimeError) as fake:
        ops.PRIMITIVES[name](*fake_args(mode, args))
    assert str(fake.value) == str(real.value)


@pytest.mark.parametrize("args", [(7,), (2, 9), (1, 2, 0.3), (5, -1, -2), (0.5, 4),
                                  (1, 10, 3, tensor.float64), (2.5, 0, -0.5, tensor.int64)])
def test_the_arange_primitive_computes_tensor_arange(args):
    """tensor.ops.arange(start, end, step, dtype) is tensor.arange, every argument given."""
    expected = tensor.arange(*args[:3], **({"dtype": args[3]} if len(args) == 4 else {}))
    start, end = (0, args[0]) if len(args) == 1 else args[:2]
    step = args[2] if len(args) > 2 else 1
    got = ops.arange(start, end, step, expected.dtype)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_ops_on_fake_tensors_answer_fake_tensors_without_their_handler(monkeypatch):
    """While the mode is on, a FakeTensor goes through the public API as a plain Tensor
    would (its handler only brings a mode back after the with block), and the results
    are FakeTensors still: operators, functionals with a real weight, reductions,
    views, in-place ops."""
    asked = []
    handler = FakeTensor.__tensor_function__.__func__
    monkeypatch.setattr(FakeTensor, "__tensor_function__",
                        classmethod(lambda *a, **k: asked.append(a[1]) or handler(*a, **k)))
    weight = tensor.randn(4, 3)
    with FakeTensorMode() as mode:
        x = mode.from_tensor(tensor.randn(2, 3))
        y = x + 1.0
        outs = [y, 2.0 * x, tensor.relu(x), tensor.nn.functional.linear(x, weight), x.sum(1),
                x.t(), x.reshape(3, 2), x.clone().add_(y), tensor.cat([x, y])]
    assert asked == []
    assert all(isinstance(o, FakeTensor) and o.fake_mode is mode for o in outs)
    assert [tuple(o.shape) for o in outs] == [(2, 3), (2, 3), (2, 3), (2, 4), (2,), (3, 2),
                                              (3, 2), (2, 3), (4, 3)]
    later = y * 2.0  # after the with block, the handler brings the mode back
    assert len(asked) == 1 and isinstance(later, FakeTensor)
