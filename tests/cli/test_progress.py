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
from ragkit.cli.ingest import INGEST_STAGES
from ragkit.cli.output import progress_bar, stage_progress
from ragkit.cli.progress import SPEED_WINDOW, ProgressLog, progress_seconds
from ragkit.errors import RagkitError
from ragkit.evaluate import evaluate


def test_ingest_reports_each_phase_from_the_start(tmp_path: Path, corpus: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    with Index.open(tmp_path / "index", create=True, model=MODEL) as index:
        report = index.ingest([corpus], progress=lambda *event: seen.append(event))
    phases = [event for event in seen if event[0] != "files"]
    assert phases[:3] == [("chunk", 0, 5), ("embed", 0, 0), ("documents", 0, 5)]
    chunked = [event for event in seen if event[0] == "chunk"]
    assert chunked[-1] == ("chunk", 5, 5)  # documents chunked: reported before any commit
    assert seen.index(chunked[-1]) < seen.index(("documents", 5, 5))
    embedded = [done for stage, done, _ in seen if stage == "embed"]
    assert embedded == sorted(embedded) and embedded[-1] == report.chunks_embedded  # counts
    assert [event for event in seen if event[0] == "documents"][-1] == ("documents", 5, 5)


def test_rates_and_time_left_show_before_the_first_commit() -> None:
    """A long first commit interval: the chunking and embedding steps give a rate and an ETA
    at once, and rates hold across pauses longer than rich's default 30 s window."""
    now = [0.0]
    log = ProgressLog(30, [].append, INGEST_STAGES, clock=lambda: now[0])
    log("files", 294, 294)
    for stage, total in (("chunk", 294), ("embed", 0), ("documents", 294)):
        log(stage, 0, total)
    for step in range(1, 4):  # a step every 50 s, no commit yet
        now[0] = 50.0 * step
        log("chunk", 10 * step, 294)
        log("embed", 330 * step, 0)
    now[0] = 200.0
    line = log.line()
    assert "documents chunked 30/294 (0.2/s)" in line
    assert "chunks embedded 990 (6.6/s)" in line
    assert "documents committed 0/294 ·" in line and line.endswith("ETA 22m00s")
    bar = progress_bar(SPEED_WINDOW)
    bar.get_time = lambda: now[0]  # type: ignore[method-assign]
    report = stage_progress(bar, INGEST_STAGES)
    for step in range(4):  # the same steps on a terminal's bar
        now[0] = 50.0 * step
        report("chunk", 10 * step, 294)
    columns = [column.render(bar.tasks[0]).plain.strip() for column in bar.columns[2:]]
    assert columns == ["30/294", "0.2/s", "0:22:00"]
    report("embed", 0, 0)  # nothing measured yet: blank, never -:--:--
    assert [column.render(bar.tasks[1]).plain for column in bar.columns[3:]] == ["", ""]


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
    assert any("files read 4/4 · documents chunked " in line for line in lines), lines
    assert "1 document is not English (ar)" in result.stderr  # the one Arabic file
    monkeypatch.setenv("RAGKIT_PROGRESS_SECONDS", "0.001")  # a line every millisecond, but:
    quiet = ragkit("ingest", str(corpus), "--index", str(tmp_path / "index"), "--quiet")
    assert quiet.returncode == 0, quiet.stderr
    assert "unchanged 5" in quiet.stdout
    assert not [line for line in quiet.stderr.splitlines() if line.startswith("ingest ")]


def test_progress_lines_count_every_phase() -> None:
    lines: list[str] = []
    with ProgressLog(0.02, lines.append, INGEST_STAGES) as log:
        log("files", 0, 3)
        log("files", 3, 3)
        for stage, total in (("chunk", 4), ("embed", 0), ("documents", 4)):
            log(stage, 0, total)
        log("chunk", 2, 4)  # two steps, each committed: counts run from the start
        log("embed", 5, 0)
        log("documents", 2, 4)
        log("chunk", 4, 4)
        log("embed", 8, 0)
        log("documents", 4, 4)
        time.sleep(0.3)
    written = len(lines)
    time.sleep(0.1)
    assert written >= 2 and len(lines) == written  # none after the block
    assert "files read 3/3 · documents chunked 4/4" in lines[-1]
    assert "chunks embedded 8 (" in lines[-1] and "documents committed 4/4" in lines[-1]
    assert "ETA" not in lines[-1]


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_progress_interval_is_refused(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGKIT_PROGRESS_SECONDS", value)
    with pytest.raises(RagkitError, match="RAGKIT_PROGRESS_SECONDS="):
        progress_seconds()
