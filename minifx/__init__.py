"""minifx: torch.fx rebuilt from scratch, one idea per file.

``import minifx as fx`` gives the names the lessons take from ``torch.fx``.
"""

from . import frameworks  # noqa: F401  (names the adapters: see _framework.py)
from .compiler import compile as compile  # torch.compile; shadows the builtin in minifx only
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern
from .tracer import Tracer, symbolic_trace
from .transformer import Transformer
from .wrapping import wrap

__version__ = "0.1.0"

__all__ = [
    "Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "Transformer", "map_arg",
    "replace_pattern", "symbolic_trace", "wrap",
]
