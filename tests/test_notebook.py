"""attnbook.notebook: expect_error, the chapters' way of showing a deliberate error, and bound."""

import pytest

from attnbook.notebook import expect_error


def test_prints_type_and_message_without_traceback(capsys):
    with expect_error(ValueError):
        raise ValueError("d_model=10 is not divisible by n_head=4")
    out = capsys.readouterr().out
    assert out == "ValueError: d_model=10 is not divisible by n_head=4\n"


def test_long_messages_are_wrapped_to_the_column():
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer), expect_error(ValueError, width=40):
        raise ValueError("word " * 30)
    lines = buffer.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 40 for line in lines)


def test_a_block_that_does_not_raise_fails_loudly():
    with pytest.raises(AssertionError, match="expected to raise ValueError"):
        with expect_error(ValueError):
            pass


def test_an_unexpected_exception_type_propagates():
    with pytest.raises(KeyError):
        with expect_error(ValueError):
            raise KeyError("not the one the demo is about")


def test_default_catches_any_exception(capsys):
    with expect_error():
        raise IndexError("index out of range in self")
    assert capsys.readouterr().out == "IndexError: index out of range in self\n"


def test_width_is_checked():
    with pytest.raises(ValueError, match="width"):
        with expect_error(width=5):
            raise ValueError("x")


def test_agree_prints_a_verdict_not_the_difference(capsys):
    import numpy as np
    import torch

    from attnbook.notebook import agree

    a = torch.tensor([1.0, 2.0])
    assert agree("ours vs torch", a, a + 3e-7, atol=1e-6)
    assert capsys.readouterr().out == "ours vs torch: largest difference below 1e-06\n"
    assert not agree("far", np.zeros(2), np.array([0.0, 0.5]), atol=1e-6)
    assert "5.00e-01, NOT below 1e-06" in capsys.readouterr().out


def test_agree_rejects_nan_and_mismatched_shapes():
    import numpy as np

    from attnbook.notebook import agree

    assert not agree("nan", np.array([np.nan]), np.array([0.0]), atol=1.0)
    with pytest.raises(ValueError, match="shapes differ"):
        agree("x", np.zeros(2), np.zeros(3), atol=1e-6)
    with pytest.raises(ValueError, match="atol"):
        agree("x", np.zeros(2), np.zeros(2), atol=0)


def test_glue_stores_numpy_scalars_as_plain_numbers():
    import numpy as np

    from attnbook.notebook import plain_number

    for value, expected in [
        (np.float64(3.25), 3.25),
        (np.int64(7), 7),
        (np.float32(0.5), 0.5),
    ]:
        plain = plain_number(value)
        assert type(plain) is type(expected) and plain == expected
        assert repr(plain) == repr(expected)  # what the book's glue role formats
    array = np.arange(3)
    assert plain_number(array) is array  # arrays and other values pass through
    assert plain_number("text") == "text"


@pytest.mark.parametrize(
    "value, digits, side, expected",
    [
        (0.6954, 2, "lower", 0.69),  # "at least 0.69", not the rounded 0.70
        (2.0457, 1, "upper", 2.1),  # "at most 2.1", not 2.0
        (0.29, 2, "lower", 0.29),  # a value on the grid stays (0.29 * 100 = 28.999...)
        (0.29, 2, "upper", 0.29),
        (-0.081, 1, "lower", -0.1),
        (8.388, 0, "upper", 9.0),
    ],
)
def test_bound_rounds_outward_so_the_bound_holds(value, digits, side, expected):
    from attnbook.notebook import bound

    got = bound(value, digits, side)
    assert got == pytest.approx(expected, abs=1e-12)
    assert (got <= value) if side == "lower" else (got >= value)


def test_bound_names_a_bad_side():
    from attnbook.notebook import bound

    with pytest.raises(ValueError, match="side must be"):
        bound(1.0, 2, "below")
