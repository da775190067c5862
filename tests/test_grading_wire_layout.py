"""The grader's wire keeps a tensor's (and an array's) layout: strides, storage offset, the
whole storage, and which values of one frame share a storage; a malformed layout is refused
as a WireError (`attnbook_grader.layout`)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from attnbook_grader import wire


def _round_trip(value):
    return wire.decode(wire.loads(wire.dumps({"v": wire.encode(value)}))["v"])


def test_a_transposed_tensor_arrives_transposed_and_a_view_on_it_fails_as_at_home():
    k = torch.arange(24.0).reshape(2, 3, 4)
    kt = k.transpose(-2, -1)
    back = _round_trip(kt)
    assert torch.equal(back, kt) and back.stride() == kt.stride()
    assert not back.is_contiguous()
    with pytest.raises(RuntimeError):
        back.view(2, 12)


def test_a_slice_of_a_larger_buffer_keeps_its_offset_and_its_storage():
    buffer = torch.arange(100.0)
    part = buffer[10:30].view(4, 5)
    back = _round_trip(part)
    assert torch.equal(back, part) and back.storage_offset() == 10
    assert back.untyped_storage().nbytes() == buffer.untyped_storage().nbytes() == 400


def test_views_of_one_tensor_in_one_frame_arrive_as_views_of_one_storage():
    x = torch.arange(12.0).reshape(3, 4)
    a, b, c = _round_trip([x, x.t(), torch.ones(2)])
    assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    assert c.untyped_storage().data_ptr() != a.untyped_storage().data_ptr()
    b[1, 0] = -1.0  # a write through one view shows in the other
    assert a[0, 1] == -1.0
    sent = wire.encode([x, x.t()])
    assert "base" in sent[0] and "base" not in sent[1]  # the bytes cross once


def test_arguments_and_keywords_of_one_call_share_storages():
    x = torch.arange(6.0).reshape(2, 3)
    args, kwargs = _round_trip([[x], {"k": x.t()}])
    assert (
        args[0].untyped_storage().data_ptr() == kwargs["k"].untyped_storage().data_ptr()
    )


def test_dtypes_grad_expanded_empty_and_conjugate_tensors_cross():
    p = torch.nn.Parameter(torch.ones(2, 3))
    cases = [
        p[:, 1],
        torch.arange(6, dtype=torch.int64)[::2],
        torch.ones(5, dtype=torch.bfloat16)[1:4],
        torch.ones(3).expand(4, 3),
        torch.zeros(0, 3),
        torch.tensor([1 + 2j, 3 - 1j]).conj(),
    ]
    back = _round_trip(cases)
    for old, new in zip(cases, back):
        assert torch.equal(new.detach(), old.detach().resolve_conj())
        assert new.dtype == old.dtype and new.requires_grad == old.requires_grad
    assert back[3].stride() == (0, 1) and back[0].requires_grad


def test_numpy_arrays_keep_strides_and_shared_memory():
    a = np.arange(12.0).reshape(3, 4)
    values = [a, a.T, a[:, ::-2], np.asfortranarray(a), np.float32(2.0)]
    back = _round_trip(values)
    for old, new in zip(values[:4], back):
        assert np.array_equal(old, new) and old.strides == new.strides
    assert np.shares_memory(back[0], back[1]) and np.shares_memory(back[0], back[2])
    assert type(back[4]) is np.float32 and back[0].flags.writeable


def _sent(value):
    return wire.loads(wire.dumps({"v": wire.encode(value)}))["v"]


def _broken(edit):
    item = _sent(torch.arange(12.0).reshape(3, 4)[1:])
    edit(item)
    return item


def test_a_zero_dimensional_array_stays_zero_dimensional():
    # an array whose memory is not an array's (a tensor's .numpy()) crosses as a copy: the copy
    # keeps its shape, also () (np.ascontiguousarray would give (1,)), so a loss returned as
    # loss.detach().numpy() arrives as the 0-d array it is
    for value in (
        torch.tensor(0.25).numpy(),
        np.array(0.5, dtype=np.float32),
        np.ones((2, 0)),
    ):
        back = _round_trip(value)
        assert type(back) is np.ndarray and back.shape == value.shape
        assert back.dtype == value.dtype and np.array_equal(back, value)


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.update(offset=-1),
        lambda t: t.update(offset=9),  # 8 elements from 9 pass the 12 of the storage
        lambda t: t.update(offset=1.5),
        lambda t: t.update(strides=[4, -1]),
        lambda t: t.update(strides=[4]),
        lambda t: t.update(strides=[10**30, 1]),
        lambda t: t.update(shape=[2**40, 2**40], strides=[0, 0]),
        lambda t: t.update(shape=[1] * 40, strides=[1] * 40),
        lambda t: t.update(storage=1),
        lambda t: t.update(storage="0"),
        lambda t: t.pop("storage"),
        lambda t: t.update(base="not base64!"),
        lambda t: t.update(base=[1, 2]),
    ],
)
def test_a_malformed_tensor_layout_is_a_wire_error(edit):
    with pytest.raises(wire.WireError):
        wire.decode(_broken(edit))


def test_the_error_names_the_bound_broken():
    """The wire's own bounds check, before PyTorch or NumPy sees the layout."""
    with pytest.raises(
        wire.WireError, match="reaches bytes 36 to 68 of a storage of 48"
    ):
        wire.decode(_broken(lambda t: t.update(offset=9)))
    item = _sent(np.arange(4.0))
    item.update(strides=[-8])
    with pytest.raises(
        wire.WireError, match="reaches bytes -24 to 8 of a storage of 32"
    ):
        wire.decode(item)


def test_a_storage_named_before_it_is_sent_or_sent_twice_is_refused():
    x = torch.arange(4.0)
    first, second = _sent([x, x])
    with pytest.raises(wire.WireError):
        wire.decode([second, first])  # a reference before the bytes
    with pytest.raises(wire.WireError):
        wire.decode([first, copy.deepcopy(first)])  # storage 0 sent twice


@pytest.mark.parametrize(
    "edit",
    [
        lambda a: a.update(offset=-8),
        lambda a: a.update(offset=8),  # the last element past the buffer
        lambda a: a.update(strides=[-8]),  # reaches before the buffer
        lambda a: a.update(strides=[8, 8]),
        lambda a: a.update(shape=[2**62], strides=[0]),
        lambda a: a.update(storage=3),
    ],
)
def test_a_malformed_array_layout_is_a_wire_error(edit):
    item = _sent(np.arange(4.0))
    edit(item)
    with pytest.raises(wire.WireError):
        wire.decode(item)


def test_values_not_storage_decide_what_changed():
    """The in-place rule compares values: two views of one buffer with equal elements are
    equal, and a write through one view is seen in its own values."""
    x = torch.arange(6.0)
    a, b = x[:3], x[3:]
    flat = {"$flat": True}
    assert wire.encode(a, dict(flat)) != wire.encode(b, dict(flat))
    assert wire.encode(a, dict(flat)) == wire.encode(a.clone(), dict(flat))


CELL = """
def rows(k):
    return k.view(-1)

def storage_bytes(t):
    return t.untyped_storage().nbytes()

def doubles_b(a, b):
    b.mul_(2)
    return a.sum()
"""


def test_a_child_gets_the_layout_and_the_in_place_rule_names_the_input_written():
    """End to end, one child: a `.view` of transposed keys raises in the child as it does at
    home, a slice's storage is its buffer's, and a write through one of two views of one
    buffer (apart, sharing its storage) is named by its own parameter."""
    from attnbook_grader.session import Session

    session = Session([CELL], {}, 120)
    try:
        k = torch.arange(24.0).reshape(2, 3, 4).transpose(-2, -1)
        with pytest.raises(RuntimeError, match="view"):
            session.call("rows", (k,), {})
        assert session.call("rows", (k.contiguous(),), {}).shape == (24,)
        assert session.call("storage_bytes", (torch.arange(100.0)[10:20],), {}) == 400
        x = torch.arange(6.0)
        with pytest.raises(AssertionError, match="changed its input `b` in place"):
            session.call("doubles_b", (x[:3], x[3:]), {}, rules={})
        assert x.tolist() == [
            0.0,
            1.0,
            2.0,
            6.0,
            8.0,
            10.0,
        ]  # as a local call leaves it
    finally:
        session.close()


def test_one_switch_turns_every_source_verdict_off(monkeypatch):
    """`source_checks=False` (the proof's attacks) and the environment switch (a grader in
    another process) are one switch: the allowlist is off with the shortcut rules."""
    from attnbook_grader import source_rules

    cell = "import os\npid = os.fork()"
    monkeypatch.delenv(source_rules.NO_ALLOWLIST, raising=False)
    assert source_rules.checks_on() and source_rules.scan([cell]).findings
    assert source_rules.scan([cell], source_checks=False).findings == []
    assert not source_rules.checks_on(False)
    monkeypatch.setenv(source_rules.NO_ALLOWLIST, "1")
    assert not source_rules.checks_on(True)
