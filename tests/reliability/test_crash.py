"""SIGKILL `ragkit ingest` at random points: the index stays consistent and resumes (slow)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from killharness import (
    CRANFIELD,
    cranfield_files,
    generation,
    ingest_command,
    new_index,
    run_trials,
    spans,
)

from ragkit.store.folder.doctor import diagnose

pytestmark = pytest.mark.slow
log = logging.getLogger(__name__)


def test_random_kills_leave_a_consistent_resumable_index(tmp_path: Path) -> None:
    if not CRANFIELD.is_file():
        pytest.skip(f"{CRANFIELD}: shared Cranfield data absent")
    corpus = cranfield_files(tmp_path / "corpus", 60)
    # 12 kills here (each a ragkit process); benchmarks/reliability.py runs 50
    figures = run_trials(corpus, tmp_path, trials=12, commit_every=3, seed=7)
    log.info("kill trials: %s", figures.as_dict())
    assert figures.trials == 12
    assert figures.mid_ingest >= 3, figures.as_dict()  # kills did land between commits
    assert figures.problems == []
    assert (figures.corrupt, figures.lost, figures.duplicated, figures.half_documents) == (
        0,
        0,
        0,
        0,
    )
    assert figures.resume_completed


def test_a_kill_keeps_what_the_time_interval_committed(tmp_path: Path) -> None:
    """Fewer files than ``commit_every_documents``: commits still come every
    ``commit_every_seconds``, and a SIGKILL loses none of what they committed (issue 51)."""
    if not CRANFIELD.is_file():
        pytest.skip(f"{CRANFIELD}: shared Cranfield data absent")
    corpus = cranfield_files(tmp_path / "corpus", 90)
    index = tmp_path / "index"
    new_index(index, commit_every=500, commit_every_seconds=1.0)
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    process = subprocess.Popen(
        ingest_command(corpus, index),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=environment,
    )
    deadline = time.monotonic() + 240
    while generation(index) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    committed = set(spans(index))
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL, "the ingest ended before two commits"
    after = spans(index)
    assert committed and committed <= set(after)  # nothing committed before the kill is lost
    assert len(after) < 90
    assert diagnose(index).problems == []
    subprocess.run(ingest_command(corpus, index), env=environment, check=True, timeout=600)
    assert len(spans(index)) == 90
