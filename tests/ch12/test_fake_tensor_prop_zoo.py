"""FakeTensorProp equals ShapeProp, shapes, dtypes and strides, on every tensor model of the zoos.

The zoos: tests/models.py (the ResNets and their blocks, shared by the
chapters), chapter 4's models, chapter 7's ResNet twin, and chapter 9's
parity zoo converted to ``tensor`` (chapter 11). ShapeProp on real inputs
is the oracle (`assert_same_as_shape_prop`). Two kinds of zoo entries are
not compared, and each is checked for what it does instead:

- the ch09 entries that chapter 11 does not convert (`NOT_CONVERTED`):
  the conversion refuses them, which is asserted;
- ``advanced_indexing_and_unbind`` indexes with a boolean mask, whose
  output shape is the count of True values: a data-dependent shape, which
  fake tensors cannot know. FakeTensorProp raises, naming it, as torch's
  FakeTensor raises (DynamicOutputShapeException).
"""

import copy

import pytest

import minifx
import tensor
from minifx.convert import ConversionError, torch_to_tensor
from minifx.convert.table import conversion_table
from minifx.convert.values import ValueConverter
from minifx.experimental.proxy_tensor import make_fx
from minifx.passes.fake_tensor_prop import FakeTensorProp
from tests import models
from tests.ch04.ch04_models import EAGER_MODELS, build_split, build_views, example_input
from tests.ch07 import ch07_models
from tests.ch09.zoo import ZOO
from tests.ch12.test_fake_tensor_prop import assert_same_as_shape_prop

NOT_CONVERTED = {"camel_case_names", "devices_and_interpolate", "dtypes_and_factories",
                 "factories_from_sizes", "kwargs", "misc_functions", "operators",
                 "pad_einsum_neg_inf", "reflected"}
DATA_DEPENDENT = {"advanced_indexing_and_unbind"}


def _blocks():
    classes = models.resnet_classes(tensor.nn)
    return classes.BasicBlock, classes.Bottleneck


# name -> (build the tensor model, input shape)
TENSOR_MODELS = {
    "models.basic_block": (lambda: _blocks()[0](8, 8), (2, 8, 6, 6)),
    "models.basic_block_projection": (lambda: _blocks()[0](4, 8, stride=2), (2, 4, 6, 6)),
    "models.bottleneck": (lambda: _blocks()[1](16, 4), (2, 16, 6, 6)),
    "models.resnet18": (lambda: models.resnet18(tensor.nn, width=16), (2, 3, 32, 32)),
    "models.resnet50": (lambda: models.resnet50(tensor.nn), (1, 3, 64, 64)),
    "ch07.resnet18_twin": (lambda: ch07_models.twins(width=8)[0], (2, 3, 32, 32)),
    **{f"ch04.{name}": ((lambda b=builder: b(tensor)), shape)
       for name, builder, shape in EAGER_MODELS},
    "ch04.views": (lambda: build_views(tensor), (3, 6)),
    "ch04.split": (lambda: build_split(tensor), (3, 6)),
}


@pytest.mark.parametrize("name", sorted(TENSOR_MODELS))
def test_tensor_models(name):
    build, shape = TENSOR_MODELS[name]
    tensor.manual_seed(0)
    model = build()
    if isinstance(model, tensor.nn.Module):
        model.eval()
    x = example_input(shape)[0]
    assert_same_as_shape_prop(minifx.symbolic_trace(model), x)
    assert_same_as_shape_prop(make_fx(model)(x), x)


def converted(name):
    model, inputs = ZOO[name]()
    root = copy.deepcopy(model) if hasattr(model, "parameters") else model
    values = ValueConverter(conversion_table())
    return root, inputs, [values.tensor(x) for x in inputs]


@pytest.mark.parametrize("name", sorted(set(ZOO) - NOT_CONVERTED - DATA_DEPENDENT))
def test_converted_ch09_zoo(name):
    root, inputs, args = converted(name)
    assert_same_as_shape_prop(torch_to_tensor(root, inputs), *args)


@pytest.mark.parametrize("name", sorted(NOT_CONVERTED))
def test_the_ch09_entries_left_out_are_not_converted(name):
    root, inputs, _ = converted(name)
    with pytest.raises(ConversionError):
        torch_to_tensor(root, inputs)


def test_a_data_dependent_shape_is_refused_by_name():
    root, inputs, args = converted("advanced_indexing_and_unbind")
    gm = torch_to_tensor(root, inputs)
    with pytest.raises(RuntimeError, match="boolean mask.*data-dependent shape"):
        FakeTensorProp(gm).propagate(*args)
