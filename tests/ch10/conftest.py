"""Chapter 10 tests: torch's own deprecation notices for torch.ao are not ours to see."""

from pathlib import Path

import pytest

HERE = Path(__file__).parent

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
