"""A site folder reached through a symbolic link (a virtual environment linked into a
clone, a home folder behind a link) is in the submission's view under the name Python
uses, not only at its real place: the child's `sys.path` and its packages' `__path__` keep
the linked name, so without the link every lazy import in the sandbox fails."""

from __future__ import annotations

import sys

from attnbook_grader import jail


def test_a_site_folder_behind_links_keeps_its_linked_name_in_the_view(
    tmp_path, monkeypatch
):
    real = tmp_path / "store" / "env" / "lib" / "site-packages"
    real.mkdir(parents=True)
    (tmp_path / "shelf").symlink_to("store")  # a relative link ...
    (tmp_path / "venv").symlink_to(tmp_path / "shelf" / "env")  # ... behind another one
    linked = tmp_path / "venv" / "lib" / "site-packages"
    monkeypatch.setattr(sys, "path", [*sys.path, str(linked)])
    seen = jail.view(hidden=[])
    assert str(real) in seen, "the real folder is bound"
    assert str(tmp_path / "venv") in seen, "the link Python's path goes through"
    assert str(tmp_path / "shelf") in seen, (
        "the link the first one's target goes through"
    )
    assert str(tmp_path / "store") not in seen, "only the site folder itself is bound"
    assert seen.count(str(tmp_path / "venv")) == 1
