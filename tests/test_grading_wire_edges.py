"""The grading engine's wire and verdicts at their edges, without a grading run: the size
limit counts bytes, frozensets cross as sets, a list whose length changed is written back,
a custom exception keeps its name, PyTorch's refused allocation is a memory error, an
empty result is not an empty input returned; a storage crosses as bytes after the frame's text
(a frame whose bytes do not add up is refused), and inputs a call only read do not cross back."""

from __future__ import annotations

import pytest
import torch

from attnbook_grader import facts, sandbox, session, verdicts, wire


def _sent(value):
    return wire.loads(wire.dumps({"v": wire.encode(value)}))["v"]


@pytest.mark.parametrize("itemsize_over", [False, True])
def test_the_size_limit_counts_bytes_not_elements(itemsize_over: bool) -> None:
    # a forged frame: one float64 expanded (stride 0) to n elements, whose n * 8 bytes
    # exceed the wire's limit while n does not
    n = wire.MAX_MESSAGE_BYTES // (4 if itemsize_over else 8)
    item = _sent(torch.zeros(1, dtype=torch.float64))
    item.update(shape=[n], strides=[0])
    if itemsize_over:
        with pytest.raises(wire.WireError, match="over the wire's limit"):
            wire.decode(item)
    else:
        assert wire.decode(item).shape == (n,)  # exactly at the limit: accepted


def test_sets_and_frozensets_cross_as_sets() -> None:
    for value in ({1, 2.5, "a"}, frozenset({3, (4, 5)})):
        back = wire.decode(_sent(value))
        assert isinstance(back, set) and back == value


def test_a_list_whose_length_changed_is_written_back() -> None:
    caller = [1, 2, 3]
    wire.update_in_place(caller, [1, 2, 3, 4])
    assert caller == [1, 2, 3, 4]
    same = [torch.zeros(2), 5]
    wire.update_in_place(same, [torch.ones(2), 6])  # same length: item by item
    assert torch.equal(same[0], torch.ones(2)) and same[1] == 6


def test_a_custom_exception_keeps_its_name_across_the_wire() -> None:
    class ShapeError(ValueError):
        pass

    raised = session._exception(sandbox.report_exception(ShapeError("rows differ")))
    assert type(raised) is Exception and str(raised) == "ShapeError: rows differ"
    builtin = session._exception(sandbox.report_exception(ValueError("rows differ")))
    assert type(builtin) is ValueError and str(builtin) == "rows differ"


def test_pytorch_s_refused_allocation_is_a_memory_error() -> None:
    with pytest.raises(RuntimeError) as refused:
        torch.empty(2**50, dtype=torch.uint8)  # a petabyte: more than any address space
    assert verdicts.is_memory_error(sandbox.report_exception(refused.value))
    assert verdicts.is_memory_error(sandbox.report_exception(MemoryError()))
    assert not verdicts.is_memory_error(
        sandbox.report_exception(RuntimeError("shape mismatch"))
    )


def test_an_empty_result_is_not_the_empty_input_returned() -> None:
    x = torch.zeros(0)
    assert verdicts.returned_inputs(facts.memory_facts({"x": x}, x + 0), {}) is None
    y = torch.zeros(3)
    assert "returned its input `y`" in str(
        verdicts.returned_inputs(facts.memory_facts({"y": y}, y.view_as(y)), {})
    )


# ----------------------------------------------------------------------------- frames
def test_a_storage_crosses_as_bytes_after_the_text() -> None:
    x = torch.rand(64, 2, 23, 23)  # ex10's trained weights: 270,848 bytes
    data = wire.dumps({"v": wire.encode([x, x[0], torch.arange(3)])})
    text, nul, _ = data.partition(b"\0")
    assert nul and len(text) < 1000  # no base64 in the text
    assert len(data) < x.numel() * 4 + 2000  # the bytes once, as they are
    a, b, c = wire.decode(wire.loads(data)["v"])
    assert (
        torch.equal(a, x) and torch.equal(b, x[0]) and torch.equal(c, torch.arange(3))
    )
    assert wire.dumps({"v": [1, "a"]}) == b'{"v": [1, "a"]}'  # no bytes: the text alone


@pytest.mark.parametrize(
    "text, tail",
    [
        (b'{"v": {"$blob": 1}}', [b"abcd"]),  # a place not sent
        (b'{"v": {"$blob": true}}', [b"abcd"]),  # not a place
        (b'{"v": {"$blob": 0, "x": 1}}', [b"abcd"]),  # a place with company
        (b'{"v": {"$blob": 0}}', [b"\x00\x00\x00\x09abcd"]),  # a length past the end
        (b'{"v": {"$blob": 0}}', [b"\x00\x00"]),  # the end inside a length
    ],
)
def test_a_frame_whose_bytes_do_not_add_up_is_refused(text: bytes, tail: list) -> None:
    raw = tail[0] if tail[0].startswith(b"\x00") else b"\x00\x00\x00\x04" + tail[0]
    with pytest.raises(wire.WireError):
        wire.loads(text + b"\0" + raw)


def test_inputs_a_call_only_read_do_not_cross_back() -> None:
    from attnbook_grader.rng import wire_states

    x = torch.rand(64, 2, 23, 23)

    def request(name: str) -> dict:
        args, kwargs = wire.encode([[x, 2], {"scale": x[0]}])
        rng = wire_states()
        return {
            "name": name,
            "args": args,
            "kwargs": kwargs,
            "rng": rng,
            "record": None,
        }

    def reads(w, n, scale):
        return w.sum() * n + scale.sum()

    def writes(w, n, scale):
        w[0] = 0.0
        return n

    namespace = {"reads": reads, "writes": writes}
    reply = sandbox._call(None, namespace, {}, request("reads"))
    assert reply["args_after"] == reply["kwargs_after"] == wire.SAME_INPUTS
    assert len(wire.dumps(reply)) < 2000
    reply = sandbox._call(None, namespace, {}, request("writes"))
    # the changed storage crosses back; the keywords view the same storage: in one frame
    assert reply["args_after"] != wire.SAME_INPUTS
    after, _ = wire.decode([reply["args_after"], reply["kwargs_after"]])
    assert torch.equal(after[0][0], torch.zeros(2, 23, 23))
    frame = {"seq": 1, "result": 1, "rng": wire.SAME_STATES}
    same = {**frame, "args_after": wire.SAME_INPUTS, "kwargs_after": wire.SAME_INPUTS}
    assert wire.checked_reply(same, 1) is same
    for bad in ("$other", None):
        with pytest.raises(wire.WireError):
            wire.checked_reply({**same, "args_after": bad}, 1)
