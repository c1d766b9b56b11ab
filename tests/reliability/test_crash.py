"""SIGKILL `ragkit ingest` at random points: the index stays consistent and resumes (slow)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from killharness import CRANFIELD, cranfield_files, run_trials

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)


def test_random_kills_leave_a_consistent_resumable_index(tmp_path: Path) -> None:
    if not CRANFIELD.is_file():
        pytest.skip(f"{CRANFIELD}: shared Cranfield data absent")
    corpus = cranfield_files(tmp_path / "corpus", 60)
    figures = run_trials(corpus, tmp_path, trials=20, commit_every=3, seed=7)
    log.info("kill trials: %s", figures.as_dict())
    assert figures.trials == 20
    assert figures.mid_ingest >= 5, figures.as_dict()  # kills did land between commits
    assert figures.problems == []
    assert (figures.corrupt, figures.lost, figures.duplicated, figures.half_documents) == (
        0,
        0,
        0,
        0,
    )
    assert figures.resume_completed
