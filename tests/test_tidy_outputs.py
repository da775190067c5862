"""Tests of tools/tidy_outputs.py: progress bars collapsed, figure heights dropped."""

import nbformat

from tools.tidy_outputs import tidy


def test_tidy_collapses_redraws_and_drops_stored_image_heights():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("plot()")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="10%\r50%\r"),
        nbformat.v4.new_output("stream", name="stdout", text="100%\n"),
        nbformat.v4.new_output(
            "display_data",
            data={
                "image/png": "iVBOR",
                "text/plain": "<Figure size 700x400 with 1 Axes>",
            },
            metadata={"image/png": {"width": 711, "height": 421}},
        ),
    ]
    nb.cells = [cell]
    assert tidy(nb)
    stream, image = nb.cells[0].outputs
    assert stream.text == "100%\n"
    # the page keeps the aspect ratio
    assert image.metadata["image/png"] == {"width": 711}
    assert not tidy(nb)  # a second pass changes nothing
