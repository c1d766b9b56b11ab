"""Progress that moves: ingest and eval report per encoder batch and per query, with totals;
nothing is drawn (and no transformers bar is printed) outside a terminal."""

from __future__ import annotations

from pathlib import Path

from conftest import MODEL, ragkit

from ragkit import Index
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
