"""The grading engine's wire and verdicts at their edges, without a grading run: the size
limit counts bytes, frozensets cross as sets, a list whose length changed is written back,
a custom exception keeps its name, PyTorch's refused allocation is a memory error, and an
empty result is not an empty input returned."""

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
