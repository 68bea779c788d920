"""minifx's and torch.fx's generated sources never share a linecache name.

Both libraries register each generated ``forward`` with ``linecache`` so that
a traceback shows the generated line. With the same names, one library's
entry replaced the other's, and a traceback through torch.fx code showed
minifx's source (and minifx's clean-up removed torch.fx's entry).
"""

import linecache

import torch
import torch.fx

import minifx


def double(x):
    return torch.relu(x) * 2


def test_each_library_keeps_its_own_generated_source():
    theirs = torch.fx.symbolic_trace(double)
    ours = minifx.symbolic_trace(double)
    our_file = type(ours).forward.__code__.co_filename
    their_file = type(theirs).forward.__code__.co_filename
    assert our_file != their_file
    assert our_file.startswith("<eval_with_key>.minifx.")
    assert "".join(linecache.getlines(our_file)) == ours.code
    assert "".join(linecache.getlines(their_file)).strip() == theirs.code.strip()
