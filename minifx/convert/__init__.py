"""Converting a torch model to ``tensor`` on the graph (chapter 11).

``torch_to_tensor(model)`` traces a torch model with the adapter of chapter 9,
rewrites every node for ``tensor`` and returns a ``tensor`` GraphModule that
computes the same function. One file per idea:

- table.py: the one table, torch function / method / module -> tensor's;
- values.py: torch tensors, parameters and dtypes as tensor's;
- twins.py: a torch ``nn`` leaf as its ``tensor.nn`` twin, weights copied;
- bad_input.py: what is refused before tracing (CUDA, float16, hooks);
- errors.py: ``ConversionError``, the list of everything to change;
- graph_pass.py: the pass itself;
- round_trip.py: ``check_conversion``, run both models and compare.

Importing this package does not import torch; converting does.
"""

from .errors import ConversionError, Unsupported
from .graph_pass import GraphConverter, torch_to_tensor
from .round_trip import ConversionReport, check_conversion
from .table import conversion_table

__all__ = [
    "ConversionError",
    "ConversionReport",
    "GraphConverter",
    "Unsupported",
    "check_conversion",
    "conversion_table",
    "torch_to_tensor",
]
