"""Chapter 10 tests import their helpers (and chapter 7's ResNet-18) from beside them."""

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "ch07"))

import pytest  # noqa: E402

# torch's own notices about its quantization API (deprecated in favour of torchao): they
# are torch's, printed for every torch.ao call the oracle makes.
_TORCH_NOTICES = (
    "ignore:torch.ao.quantization is deprecated",
    "ignore:torch.quantize_per_tensor, torch.quantize_per_channel",
    "ignore:Please use quant_min and quant_max",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            for notice in _TORCH_NOTICES:
                item.add_marker(pytest.mark.filterwarnings(notice))
