"""Views share memory and carry torch's strides; indexing follows torch."""

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tensor
from tests.ch00.tensor_helpers import data, pair
from tests.helpers import check


def same_view(ours, theirs):
    """Same values, shape and strides as torch's view."""
    check(ours, theirs, exact=True)
    assert ours.stride() == theirs.stride(), (ours.stride(), theirs.stride())
    assert ours.is_contiguous() == theirs.is_contiguous()


VIEW_OPS = {
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "transpose": lambda x: x.transpose(0, -1),
    "permute": lambda x: x.permute(2, 0, 1) if x.ndim == 3 else x.permute(1, 0),
    "permute_tuple": lambda x: x.permute((1, 0)) if x.ndim == 2 else x.permute((0, 2, 1)),
    "view": lambda x: x.view(-1),
    "view_split": lambda x: x.view(x.shape[0], 1, -1),
    "unsqueeze0": lambda x: x.unsqueeze(0),
    "unsqueeze_mid": lambda x: x.unsqueeze(1),
    "unsqueeze_end": lambda x: x.unsqueeze(-1),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(),
    "squeeze_dim": lambda x: x.unsqueeze(1).squeeze(1),
    "squeeze_not_one": lambda x: x.squeeze(0),
    "expand": lambda x: x.unsqueeze(0).expand(4, *x.shape),
    "expand_minus_one": lambda x: x[:1].expand(3, *([-1] * (x.ndim - 1))),
    "slice_step": lambda x: x[::2],
    "slice_inner": lambda x: x[:, 1:],
    "int_index": lambda x: x[1],
    "none_index": lambda x: x[None, 0],
    "none_after_int": lambda x: x[0, None],
    "ellipsis_none": lambda x: x[..., None],
    "mixed": lambda x: x[1:, None, ..., ::2],
    "flatten": lambda x: x.flatten(),
    "flatten_partial": lambda x: x.flatten(0, 1),
    "reshape_view": lambda x: x.reshape(-1, 1),
}


@pytest.mark.parametrize("name", list(VIEW_OPS))
@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 4)], ids=str)
def test_views_match_torch_strides(name, shape):
    fn = VIEW_OPS[name]
    ours, theirs = pair(data(shape))
    if name == "t" and len(shape) > 2:  # torch refuses t() above two dimensions, and so do we
        message = r"t\(\) expects a tensor with <= 2 dimensions, but self is 3D"
        with pytest.raises(RuntimeError, match=message):
            fn(theirs)
        with pytest.raises(RuntimeError, match=message):
            fn(ours)
        return
    with warnings.catch_warnings():
        # torch warns that x.T above two dimensions (all dims reversed) is deprecated
        warnings.simplefilter("ignore", UserWarning)
        expected = fn(theirs)
    same_view(fn(ours), expected)


@pytest.mark.parametrize(
    "name",
    [
        "transpose",
        "unsqueeze_mid",
        "expand",
        "slice_step",
        "int_index",
        "none_index",
        "flatten_partial",
        "squeeze",
    ],
)
def test_views_of_views(name):
    fn = VIEW_OPS[name]
    ours, theirs = pair(data((4, 6, 2)))
    same_view(fn(ours.permute(2, 0, 1)), fn(theirs.permute(2, 0, 1)))
    same_view(fn(ours[:, ::2]), fn(theirs[:, ::2]))


def test_views_share_memory():
    base, _ = pair(data((3, 4)))
    views = [
        base.t(),
        base.view(12),
        base[1],
        base[:, ::2],
        base.unsqueeze(0),
        base.permute(1, 0),
        base.transpose(0, 1),
        base[None],
        base.reshape(2, 6),
        base.flatten(),
        base[..., 1:],
    ]
    base.numpy()[...] = 7.0
    for view in views:
        assert bool((view == 7.0).all() if hasattr(view, "all") else (view.numpy() == 7.0).all())
        assert np.shares_memory(view.numpy(), base.numpy())
    base[0, 0] = -1.0
    assert base.t()[0, 0].item() == -1.0


def test_setitem_writes_through_views():
    ours, theirs = pair(data((3, 4)))
    for target in (lambda x: x[1], lambda x: x[:, 2], lambda x: x.t()[0]):
        target(ours)[...] = 5.0
        target(theirs)[...] = 5.0
    ours[0, 1:3] = tensor.tensor([1.0, 2.0])
    theirs[0, 1:3] = torch.tensor([1.0, 2.0])
    check(ours, theirs)


def test_reshape_copies_when_it_must_and_view_refuses():
    ours, theirs = pair(data((3, 4)))
    r = ours.t().reshape(-1)
    check(r, theirs.t().reshape(-1))
    assert not np.shares_memory(r.numpy(), ours.numpy())
    assert ours.reshape(4, 3).numpy().base is not None
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        ours.t().view(-1)
    with pytest.raises(RuntimeError):
        theirs.t().view(-1)
    # a permuted tensor whose moved dims stay together can still be viewed
    same_view(ours.t().unsqueeze(0).view(4, 3), theirs.t().unsqueeze(0).view(4, 3))


def test_size_zero_and_size_one_views():
    ours, theirs = pair(data((0, 3)))
    for fn in (
        lambda x: x.t(),
        lambda x: x.view(3, 0),
        lambda x: x.unsqueeze(1),
        lambda x: x.reshape(-1),
        lambda x: x.expand(2, 0, 3),
        lambda x: x[:, 1],
    ):
        got, want = fn(ours), fn(theirs)
        check(got, want)  # (strides of empty tensors carry no meaning; torch's vary by op)
    ours, theirs = pair(data((1, 1)))
    same_view(ours.view(1), theirs.view(1))
    same_view(ours.squeeze(), theirs.squeeze())
    scalar, tscalar = pair(data(()))
    same_view(scalar.view(1, 1), tscalar.view(1, 1))
    same_view(scalar.unsqueeze(0), tscalar.unsqueeze(0))
    same_view(scalar.reshape(-1), tscalar.reshape(-1))
    same_view(scalar.flatten(), tscalar.flatten())


def test_index_with_tensors():
    ours, theirs = pair(data((4, 3)))
    (mask, tmask) = pair(data((4,), "bool"))
    check(ours[mask], theirs[tmask])
    idx, tidx = pair(np.array([2, 0, 2]))
    check(ours[idx], theirs[tidx])
    check(ours[:, idx], theirs[:, tidx])
    check(ours[ours > 0], theirs[theirs > 0])
    ours[ours < 0] = 0.0
    theirs[theirs < 0] = 0.0
    check(ours, theirs)


def test_attributes():
    ours, theirs = pair(data((2, 3, 4)))
    assert ours.shape == theirs.shape and isinstance(ours.shape, tensor.Size)
    assert ours.size() == tensor.Size([2, 3, 4]) and ours.size(-1) == 4 and ours.size(1) == 3
    assert ours.ndim == 3 and ours.dim() == 3 and ours.numel() == 24
    assert ours.stride() == theirs.stride() and ours.stride(0) == 12
    assert ours.tolist() == theirs.tolist()
    assert ours[0, 0, 0].item() == theirs[0, 0, 0].item()
    assert isinstance(tensor.tensor(3).item(), int)
    assert ours.contiguous() is ours
    p = ours.permute(2, 1, 0)
    assert not p.is_contiguous()
    c = p.contiguous()
    assert c.is_contiguous() and c.stride() == theirs.permute(2, 1, 0).contiguous().stride()
    check(c, theirs.permute(2, 1, 0).contiguous())
    assert len(ours) == 2
    assert [row.shape for row in ours] == [tensor.Size([3, 4])] * 2
    assert tensor.numel(ours) == 24


def test_as_subclass_shares_data():
    class Marked(tensor.Tensor):
        pass

    base, _ = pair(data((2, 2)))
    marked = base.as_subclass(Marked)
    assert type(marked) is Marked
    assert marked.numpy() is base.numpy()
    with pytest.raises(TypeError):
        base.as_subclass(int)


@settings(deadline=None, max_examples=50)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=4), data_=st.data())
def test_hypothesis_view_chain(shape, data_):
    """Random chains of view ops agree with torch on values and strides."""
    ours, theirs = pair(data(tuple(shape)))
    for _ in range(4):
        ndim = ours.ndim
        choice = data_.draw(
            st.sampled_from(["transpose", "unsqueeze", "squeeze", "slice", "flatten", "expand"])
        )
        if choice == "transpose" and ndim >= 2:
            d0, d1 = (
                data_.draw(st.integers(-ndim, ndim - 1)),
                data_.draw(st.integers(-ndim, ndim - 1)),
            )
            fn = lambda x, d0=d0, d1=d1: x.transpose(d0, d1)  # noqa: E731
        elif choice == "unsqueeze" and ndim < 5:
            d = data_.draw(st.integers(-ndim - 1, ndim))
            fn = lambda x, d=d: x.unsqueeze(d)  # noqa: E731
        elif choice == "squeeze":
            fn = lambda x: x.squeeze()  # noqa: E731
        elif choice == "slice" and ndim >= 1:
            step = data_.draw(st.integers(1, 3))
            fn = lambda x, step=step: x[::step]  # noqa: E731
        elif choice == "flatten":
            fn = lambda x: x.flatten()  # noqa: E731
        elif choice == "expand" and ndim >= 1 and ours.shape[0] == 1:
            fn = lambda x: x.expand(3, *([-1] * (x.ndim - 1)))  # noqa: E731
        else:
            continue
        ours, theirs = fn(ours), fn(theirs)
        check(ours, theirs, exact=True)
        if ours.numel() > 0:
            assert ours.stride() == theirs.stride(), (choice, ours.stride(), theirs.stride())


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("pieces", [1, 2, 3, 4, 7, 9])
def test_chunk_split_unbind_match_torch_as_views(dim, pieces):
    base = np.arange(7 * 5 * 6, dtype=np.float32).reshape(7, 5, 6)
    ours, theirs = tensor.from_numpy(base.copy()), torch.from_numpy(base.copy())
    for got, want in (
        (ours.chunk(pieces, dim), theirs.chunk(pieces, dim)),
        (tensor.split(ours, pieces, dim), torch.split(theirs, pieces, dim)),
        (ours.unbind(dim), theirs.unbind(dim)),
    ):
        assert len(got) == len(want)
        for piece, expected in zip(got, want):
            assert piece.shape == tuple(expected.shape)
            assert piece.stride() == expected.stride()
            np.testing.assert_array_equal(piece.numpy(), expected.numpy())
            assert np.shares_memory(piece.numpy(), ours.numpy())


def test_chunk_of_an_empty_dim_and_split_sizes():
    assert len(tensor.zeros(0).chunk(3)) == 3
    assert [p.shape[0] for p in tensor.arange(7).split([2, 5])] == [2, 5]
    with pytest.raises(RuntimeError, match="sum exactly to 7"):
        tensor.arange(7).split([2, 4])
