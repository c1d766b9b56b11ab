"""Progress that moves: ingest and eval report per encoder batch and per query, with totals;
nothing is drawn (and no transformers bar is printed) outside a terminal, where ingest prints
one line every RAGKIT_PROGRESS_SECONDS instead (--quiet: none)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from conftest import MODEL, ragkit
from ragkit import Index
from ragkit.cli.progress import ProgressLog, progress_seconds
from ragkit.errors import RagkitError
from ragkit.evaluate import evaluate


def test_ingest_reports_totals_from_the_start(tmp_path: Path, corpus: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    with Index.open(tmp_path / "index", create=True, model=MODEL) as index:
        report = index.ingest([corpus], progress=lambda *event: seen.append(event))
        assert index.encoder.on_passages is None  # not left pointing at this run's display
    documents = [event for event in seen if event[0] == "documents"]
    assert documents[0] == ("documents", 0, 5) and documents[-1] == ("documents", 5, 5)
    embedded = [event for event in seen if event[0] == "embed"]
    assert embedded[-1] == ("embed", report.chunks_added, report.chunks_added)
    assert all(0 < done <= total for stage, done, total in seen if stage == "chunk")


def test_eval_reports_each_query(tiny_beir: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    evaluate(tiny_beir, MODEL, modes=["sparse"], progress=lambda *event: seen.append(event))
    assert [event for event in seen if event[0] == "sparse queries"] == [
        ("sparse queries", 1, 2),
        ("sparse queries", 2, 2),
    ]


def test_quiet_outside_a_terminal(tmp_path: Path, corpus: Path) -> None:
    result = ragkit("ingest", str(corpus), "--index", str(tmp_path / "index"), "--model", MODEL)
    assert result.returncode == 0, result.stderr
    assert "Loading weights" not in result.stderr + result.stdout
    assert "documents committed" not in result.stderr


def test_a_log_gets_a_progress_line_every_interval(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGKIT_PROGRESS_SECONDS", "0.2")
    result = ragkit("ingest", str(corpus), "--index", str(tmp_path / "index"), "--model", MODEL)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("ingest ")]
    assert lines, result.stderr
    assert all(re.fullmatch(r"ingest \d+s · .+", line) for line in lines), lines
    assert any("files read 4/4 · documents committed " in line for line in lines), lines
    assert "1 document is not English (ar)" in result.stderr  # the one Arabic file
    monkeypatch.setenv("RAGKIT_PROGRESS_SECONDS", "0.001")  # a line every millisecond, but:
    quiet = ragkit("ingest", str(corpus), "--index", str(tmp_path / "index"), "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert "unchanged 5" in quiet.stdout
    assert not [line for line in quiet.stderr.splitlines() if line.startswith("ingest ")]


def test_progress_lines_count_every_batch() -> None:
    lines: list[str] = []
    with ProgressLog(0.02, lines.append) as log:
        log("files", 0, 3)
        log("files", 3, 3)
        log("documents", 0, 4)
        log("embed", 2, 5)  # two commit batches: the embed counts restart with each
        log("embed", 5, 5)
        log("documents", 2, 4)
        log("embed", 3, 3)
        log("documents", 4, 4)
        time.sleep(0.3)
    written = len(lines)
    time.sleep(0.1)
    assert written >= 2 and len(lines) == written  # none after the block
    assert "files read 3/3 · documents committed 4/4" in lines[-1]
    assert "chunks embedded 8 (" in lines[-1] and "ETA" not in lines[-1]


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_progress_interval_is_refused(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGKIT_PROGRESS_SECONDS", value)
    with pytest.raises(RagkitError, match="RAGKIT_PROGRESS_SECONDS="):
        progress_seconds()
