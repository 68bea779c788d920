"""Unique, safe Python names for nodes and for the globals of generated code.

Every node name becomes a variable of the generated ``forward``, and every
function it calls becomes a global of that code, so all of them must be
valid identifiers, distinct, and never shadow a keyword or a builtin that
the code relies on.
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
from collections.abc import Iterable
from typing import Any

# Names the generated code binds as globals on its own, whatever the graph.
custom_builtins: dict[str, Any] = {"inf": math.inf, "nan": math.nan, "NoneType": type(None)}

# Names a node or global may never take (unless it *is* that object).
# The package names of `node.path_printed_packages` are added here too.
illegal_names: dict[str, Any] = {k: object() for k in keyword.kwlist}
illegal_names.update(builtins.__dict__)
illegal_names.update(custom_builtins)
illegal_names["tensor"] = object()


def reserve_name(name: str, obj: Any = None) -> None:
    """Forbid ``name`` for nodes and globals (a framework package, say)."""
    illegal_names[name] = object() if obj is None else obj


_camel = re.compile(r"(?<=[a-z])([A-Z])")
_illegal_chars = re.compile(r"[^0-9a-zA-Z_]+")
# A candidate splits into a base and an optional numeric suffix: add_3 -> (add, 3).
_name_re = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")


def _split_name(candidate: str) -> tuple[str | None, str | None]:
    """``add_3`` -> ``("add", "3")``, ``add`` -> ``("add", None)``; ``(None, None)``
    for what is not an ASCII identifier."""
    # Most candidates are identifiers that end in a letter: no regex needed.
    if candidate.isidentifier() and candidate.isascii() and not candidate[-1].isdigit():
        return candidate, None
    match = _name_re.match(candidate)
    return (None, None) if match is None else match.group(1, 2)


def snake_case(s: str) -> str:
    """``pascalCase`` -> ``pascal_case``, ``ALL_CAPS`` -> ``all_caps``."""
    if s.islower():  # nothing to change (the usual case: add, relu): skip the regex
        return s
    return _camel.sub(r"_\1", s).lower()


# --8<-- [start:namespace]
class Namespace:
    """Hands out unique identifiers: ``add``, ``add_1``, ``add_2`` ...

    The same object always gets the same name. A per-base counter makes each
    new name O(1) on average, so naming n nodes costs O(n), not O(n^2).
    """

    def __init__(self) -> None:
        self._obj_to_name: dict[int, str] = {}
        self._objs: list[Any] = []  # keeps objects alive so their ids stay theirs
        self._used: set[str] = set()
        self._base_count: dict[str, int] = {}

    def create_name(self, candidate: str, obj: Any = None) -> str:
        """A fresh identifier close to ``candidate`` (the old one if ``obj`` has one)."""
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)]
        base, num_text = _split_name(candidate)
        if base is None:
            candidate = _illegal_chars.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = "_" + candidate
            base, num_text = _split_name(candidate)
        if num_text is None or candidate in self._used:
            num = self._base_count.get(base, 0)
            # An illegal name stays only for the very object it names (the global
            # `getattr` may be called getattr); `None` is a builtin whose value is None.
            if candidate in illegal_names and (obj is None or illegal_names[candidate] is not obj):
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num_text)
        while candidate in self._used:
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        if obj is not None:  # it had no name yet: the first lines return an old one
            self._obj_to_name[id(obj)] = candidate
            self._objs.append(obj)
        return candidate

    def mark_used(self, names: Iterable[str]) -> None:
        """Record names that are taken without an object (a graph's node names)."""
        self._used.update(names)
# --8<-- [end:namespace]
