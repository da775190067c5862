"""Tests of attnbook.plot."""

import matplotlib

matplotlib.use("Agg")  # this test process only; notebooks keep their inline backend

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from attnbook.plot import attention_heatmap, attention_heatmaps


def test_heatmap_labels_queries_on_y_and_keys_on_x():
    w = torch.softmax(torch.randn(3, 4, requires_grad=True), dim=-1)
    ax = attention_heatmap(w, ["a", "b", "c"], ["w", "x", "y", "z"], title="t")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w", "x", "y", "z"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert (
        ax.get_title() == "t"
        and "query" in ax.get_ylabel()
        and "key" in ax.get_xlabel()
    )
    np.testing.assert_allclose(
        ax.collections[0].get_array().reshape(3, 4), w.detach().numpy()
    )
    plt.close("all")


def test_heatmap_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="3 query tokens and 3 key tokens"):
        attention_heatmap(np.ones((2, 3)) / 3, ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"\(T_q, T_k\) matrix"):
        attention_heatmap(np.ones((2, 2, 2)), ["a", "b"])


def test_heatmaps_share_one_colour_scale():
    mats = [np.eye(3), np.full((3, 3), 1 / 3)]
    fig = attention_heatmaps(mats, list("abc"), titles=["head 1", "head 2"])
    meshes = [ax.collections[0] for ax in fig.axes if ax.get_title()]
    assert len(meshes) == 2
    assert {m.get_clim() for m in meshes} == {(0.0, 1.0)}
    with pytest.raises(ValueError, match="2 titles for 1 matrices"):
        attention_heatmaps(mats[:1], list("abc"), titles=["a", "b"])
    plt.close("all")


def test_importing_the_module_sets_the_course_style():
    import matplotlib as mpl

    from attnbook import plot

    colours = [c["color"] for c in mpl.rcParams["axes.prop_cycle"]]
    assert colours == plot.PALETTE and len(set(colours)) == 8
    assert mpl.rcParams["figure.figsize"][0] <= plot.COLUMN_WIDTH
    assert mpl.rcParams["font.size"] >= 11


def test_heatmaps_default_to_the_scale_0_to_1_and_fit_the_column():
    from attnbook.plot import COLUMN_WIDTH

    # the largest weight is 1/6, the scale stays 0-1
    mats = [np.full((6, 6), 1 / 6)] * 4
    fig = attention_heatmaps(mats, list("abcdef"), ncols=4, max_width=COLUMN_WIDTH)
    meshes = [ax.collections[0] for ax in fig.axes[:4]]
    assert {m.get_clim() for m in meshes} == {(0.0, 1.0)}
    assert fig.get_size_inches()[0] <= COLUMN_WIDTH + 1e-9
    assert (
        attention_heatmaps(mats, list("abcdef"), ncols=4).get_size_inches()[0]
        > COLUMN_WIDTH
    )
    # the old data maximum
    fig = attention_heatmaps(mats[:1], list("abcdef"), vmax=None)
    assert fig.axes[0].collections[0].get_clim() == (0.0, 1 / 6)
    plt.close("all")


def test_matrix_heatmap_centres_signed_values_and_checks_labels():
    from attnbook.plot import matrix_heatmap

    m = np.array([[-2.0, 1.0, 0.5], [0.0, 1.5, -0.5]])
    ax = matrix_heatmap(m, ["I", "am"], title="Q")
    assert ax.collections[0].get_clim() == (-2.0, 2.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "I",
        "am",
    ] and ax.get_title() == "Q"
    with pytest.raises(ValueError, match="2 row labels and 2 column labels"):
        matrix_heatmap(m, ["I", "am"], ["x", "y"])
    plt.close("all")


def test_heatmaps_turn_their_labels_without_seaborns_extra_draw():
    """Seaborn's draw-to-check-overlap is skipped inside `attention_heatmap` (it sets both
    rotations itself), and seaborn's helper is back in place after, also after an error."""
    import seaborn.matrix

    original = seaborn.matrix._draw_figure
    fig = attention_heatmaps([torch.full((5, 5), 0.2)] * 4, list("abcde"))
    for ax in fig.axes[:4]:
        assert {t.get_rotation() for t in ax.get_xticklabels()} == {45.0}
        assert {t.get_rotation() for t in ax.get_yticklabels()} == {0.0}
    assert seaborn.matrix._draw_figure is original
    with pytest.raises(ValueError):
        attention_heatmap(torch.full((5, 5), 0.2), list("abcde"), vmax="high")
    assert seaborn.matrix._draw_figure is original
    plt.close("all")
