"""As root the grader ends every process of a submission's sandbox user
(`processes._kill_user`) from a small helper process of its own rather than from a fork of
itself (which cost 20-35 ms of CPU a kill, the grader having loaded PyTorch): the helper's
child becomes that user and kills what that user may signal. Checked here: the sandbox
user's processes end, a process of another user (root) does not, and the helper, a child
of the grader, is never taken for a process a submission left behind (`end_submission`).

Cost: a few short processes, well under a second of CPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from attnbook_grader import processes

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="the sandbox user exists where the grader runs as root (Linux)",
)
SLEEP = [shutil.which("sleep") or "/bin/sleep", "120"]  # one any user may run


def _as(uid: int) -> subprocess.Popen:
    return subprocess.Popen(SLEEP, cwd="/", user=uid, group=uid, extra_groups=[])


def test_the_sandbox_users_processes_end_and_no_others():
    uid, other = processes.sandbox_uid(), processes.sandbox_uid()
    while other == uid:
        other = processes.sandbox_uid()
    victims = [_as(uid), _as(uid)]
    bystanders = [subprocess.Popen(SLEEP), _as(other)]
    try:
        processes._kill_user(uid)
        for victim in victims:
            assert victim.wait(timeout=30) == -9
        assert all(b.poll() is None for b in bystanders), "another user's process ended"
        helpers = processes._killer_pids()
        assert len(helpers) == 1, "the helper did not stay running"
        processes._kill_user(other)  # the same helper, once more
        assert bystanders[1].wait(timeout=30) == -9
        assert bystanders[0].poll() is None
        assert processes._killer_pids() == helpers
    finally:
        for process in victims + bystanders:
            process.kill()
            process.wait()


def test_the_helper_is_no_submissions_survivor():
    uid = processes.sandbox_uid()
    before = processes.grader_children()
    submission = _as(uid)
    try:
        processes._killer.clear()  # started anew after `before`, as in a first submission
        left = processes.end_submission(submission.pid, set(), before, uid)
        assert submission.wait(timeout=30) == -9
        helpers = processes._killer_pids()
        assert helpers, "the helper did not start"
        assert not set(left) & helpers, "the helper was taken for a survivor"
        again = processes.end_submission(_as(uid).pid, set(), before, uid)
        assert not set(again) & helpers
        assert processes._killer_pids() == helpers, "the helper was killed"
    finally:
        submission.kill()
        submission.wait()


def test_a_helper_that_answers_wrong_is_replaced():
    """A helper that answers something else (here `sed`, echoing the line back changed): the
    kill is done by a helper started for it alone, and a fresh helper serves the next."""
    uid = processes.sandbox_uid()
    victims = [_as(uid), _as(uid)]
    wrong = subprocess.Popen(
        ["sed", "-u", "s/^/wrong /"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        processes._killer[:] = [wrong]
        processes._kill_user(uid)
        assert [v.wait(timeout=30) for v in victims] == [-9, -9]
        assert wrong.wait(timeout=30) == -9, "the wrong helper was kept"
        victims[1] = _as(uid)
        processes._kill_user(uid)
        assert victims[1].wait(timeout=30) == -9
        assert processes._killer_pids() - {wrong.pid}, "no fresh helper"
    finally:
        for process in [*victims, wrong]:
            process.kill()
            process.wait()
