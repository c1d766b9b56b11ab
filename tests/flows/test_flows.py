"""Prefect flows on a real (temporary) Prefect server, real index stores and the bundled model."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index
from ragkit.cli import app
from ragkit.errors import RagkitError

pytestmark = pytest.mark.usefixtures("prefect_harness")

LONG = "".join(  # over one 256-token budget with headings: adaptive embeds to choose
    f"# {topic}\n\n" + f"{topic} matters for aircraft wings in several ways. " * 30 + "\n\n"
    for topic in ("Lift", "Drag", "Stall")
)


@pytest.fixture
def files(corpus: Path) -> Path:
    """The shared small corpus plus one long markdown file."""
    (corpus / "long.md").write_text(LONG, encoding="utf-8")
    return corpus


def index_rows(folder: Path) -> tuple[list[tuple], list[tuple], np.ndarray]:
    """Documents, chunks and vectors of an index, independent of row ids and run timing."""
    db = sqlite3.connect(folder / "ragkit.sqlite")
    documents = db.execute(
        "SELECT key, content_hash, language, json_extract(chunking, '$.chosen'), "
        "json_extract(chunking, '$.scores') FROM documents ORDER BY key"
    ).fetchall()
    rows = db.execute(
        "SELECT d.key, c.start, c.end, c.chunker, c.text, c.match_text, c.terms, c.vector "
        "FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY d.key, c.start"
    ).fetchall()
    db.close()
    vectors = np.stack([np.frombuffer(r[-1], dtype=np.float32) for r in rows])
    return documents, [r[:-1] for r in rows], vectors


def assert_same_index(left: Path, right: Path) -> None:
    docs_a, chunks_a, vectors_a = index_rows(left)
    docs_b, chunks_b, vectors_b = index_rows(right)
    assert docs_a == docs_b and chunks_a == chunks_b
    np.testing.assert_allclose(vectors_a, vectors_b, atol=1e-5)


def task_runs(flow_run_id: uuid.UUID, timeout: float = 60.0) -> list[tuple[str, str]]:
    """(task name, final state name) of every task run of one flow run.

    Task run states reach the server as events, shortly after the flow returns: wait until
    every run the server knows has a final state.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    deadline = time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
            )
            if all(run.state and run.state.is_final() for run in runs):
                break
            assert time.monotonic() < deadline, [(r.name, r.state) for r in runs]
            time.sleep(0.5)
    return sorted((run.name.rsplit("-", 1)[0], run.state.name) for run in runs)


def artifact_markdown(flow_run_id: uuid.UUID) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    (artifact,) = artifacts
    return str(artifact.data)


def test_ingest_flow_equals_cli_then_reruns_without_embedding(tmp_path: Path, files: Path) -> None:
    from ragkit.flows.ingest import ingest_flow

    result = CliRunner().invoke(
        app, ["ingest", str(files), "--index", str(tmp_path / "cli"), "--model", MODEL]
    )
    assert result.exit_code == 0, result.output
    state = ingest_flow(
        paths=[str(files)], index=str(tmp_path / "flow"), model=MODEL, return_state=True
    )
    assert state.is_completed()
    report = state.result()
    assert (report.files_seen, report.documents_added, report.skipped) == (5, 6, [])
    assert_same_index(tmp_path / "cli", tmp_path / "flow")
    first = task_runs(state.state_details.flow_run_id)
    assert ("embed", "Completed") in first and ("commit", "Completed") in first

    again = ingest_flow(
        paths=[str(files)], index=str(tmp_path / "flow"), model=MODEL, return_state=True
    )
    assert again.is_completed()
    rerun = again.result()
    assert (rerun.documents_added, rerun.documents_unchanged, rerun.chunks_added) == (0, 6, 0)
    runs = task_runs(again.state_details.flow_run_id)
    assert not [name for name, _ in runs if name in ("embed", "commit")]
    assert {state for name, state in runs if name in ("load", "chunk")} == {"Cached"}
    summary = artifact_markdown(again.state_details.flow_run_id)
    assert "| chunks embedded | 0 |" in summary
    assert "| files unchanged (cached load + chunk) | 5 |" in summary


def test_failing_file_is_retried_then_reported(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragkit.flows.ingest as module

    broken = corpus / "sub" / "cats.txt"
    attempts: list[str] = []
    real_load = module.load_file

    def flaky(path: Path, raise_io_errors: bool = False, text_field: str = "text"):
        if path == broken:
            attempts.append(str(path))
            raise RagkitError(f"{path}: cannot read (Input/output error)") from OSError(5, "EIO")
        return real_load(path, raise_io_errors, text_field)

    monkeypatch.setattr(module, "load_file", flaky)
    (corpus / "notes.bin").write_bytes(b"\x00\x01")  # unsupported: skipped without retries
    state = module.ingest_flow(
        paths=[str(corpus)],
        index=str(tmp_path / "index"),
        model=MODEL,
        retry_delay_seconds=0,
        return_state=True,
    )
    assert state.is_completed()
    report = state.result()
    assert len(attempts) == 1 + module.LOAD_RETRIES
    reasons = {Path(s.path).name: s.reason for s in report.skipped}
    assert reasons["cats.txt"] == "cannot read (Input/output error) (failed after 3 attempts)"
    assert "unsupported" in reasons["notes.bin"]
    assert report.documents_added == 4 and report.files_seen == 5
    assert ("load", "Failed") in task_runs(state.state_details.flow_run_id)
    assert "cats.txt" in artifact_markdown(state.state_details.flow_run_id)


def test_evaluate_flow_matches_library(tiny_beir: Path) -> None:
    from ragkit.evaluate import evaluate
    from ragkit.flows.evaluate import evaluate_flow

    state = evaluate_flow(
        dataset=str(tiny_beir), model=MODEL, modes=["dense", "hybrid"], return_state=True
    )
    assert state.is_completed()
    flow_reports = state.result()
    direct = evaluate(tiny_beir, MODEL, modes=("dense", "hybrid"))
    metrics = [(r.mode, r.queries, r.ndcg_at_10, r.recall_at_100, r.mrr_at_10) for r in direct]
    assert [
        (r.mode, r.queries, r.ndcg_at_10, r.recall_at_100, r.mrr_at_10) for r in flow_reports
    ] == metrics
    assert "| beir | all-minilm-l6-v2 | hybrid | 2 | 1.000 |" in artifact_markdown(
        state.state_details.flow_run_id
    )


@pytest.mark.slow
def test_dask_runner_builds_the_same_index(tmp_path: Path, files: Path) -> None:
    """Two worker processes (LocalCluster) load, chunk and embed; the flow process commits."""
    from ragkit.flows.ingest import run_ingest

    local = run_ingest([str(files)], str(tmp_path / "local"), model=MODEL)
    dask = run_ingest(
        [str(files)],
        str(tmp_path / "dask"),
        runner="dask",
        workers=2,
        model=MODEL,
        refresh_cache=True,  # do load and chunk on the workers, not from the local run's cache
    )
    assert dask.as_dict() | {"seconds": {}} == local.as_dict() | {"seconds": {}}
    assert_same_index(tmp_path / "local", tmp_path / "dask")


def test_cli_flows_run_ingest(tmp_path: Path, corpus: Path) -> None:
    (corpus / "bad.txt").write_bytes(b"\xff\xfe\xfa not utf8 \x00\x00")
    folder = str(tmp_path / "index")
    args = ["flows", "run", "ingest", str(corpus), "--index", folder, "--model", MODEL]
    chunking = ["--chunker", "fixed", "--chunk-tokens", "64"]
    result = CliRunner().invoke(app, [*args, *chunking])
    assert result.exit_code == 1, result.output  # like `ragkit ingest`: one file skipped
    assert "documents added 5" in result.output and "bad.txt" in result.output
    settings = Index.open(folder).settings  # the chunking options shape the new index
    assert (settings.chunker, settings.chunk_tokens) == ("fixed", 64)
    result = CliRunner().invoke(app, [*args, "--runner", "spark"])
    assert result.exit_code == 2 and "--runner 'spark'" in result.output


def test_ingest_flow_chooses_the_auto_model_before_chunking(tmp_path: Path, files: Path) -> None:
    from ragkit.flows.ingest import ingest_flow

    english = [p for p in files.rglob("*") if p.is_file() and "prayer" not in p.name]
    report = ingest_flow(paths=[str(p) for p in english], index=str(tmp_path / "flow"))
    assert report.files_seen == len(english) and report.skipped == []
    db = sqlite3.connect(tmp_path / "flow" / "ragkit.sqlite")
    settings = db.execute("SELECT value FROM state WHERE key = 'settings'").fetchone()[0]
    assert '"embedding_model":"all-minilm-l6-v2"' in settings


def test_cli_flows_run_ingest_chooses_files(tmp_path: Path, corpus: Path) -> None:
    (corpus / "faq.csv").write_text("id,answer\nq1,Water boils at 100 C.\n", encoding="utf-8")
    (corpus / "image.png").write_bytes(b"\x89PNG")
    folder = tmp_path / "index"
    args = ["flows", "run", "ingest", str(corpus), "--index", str(folder), "--model", MODEL]
    result = CliRunner().invoke(app, [*args, "--exclude", "sub", "--text-field", "answer"])
    assert result.exit_code == 0, result.output  # an unsupported file is listed, not fatal
    assert "1 not read (unsupported type)" in result.output and "image.png" in result.output
    db = sqlite3.connect(folder / "ragkit.sqlite")
    keys = {Path(key).name for (key,) in db.execute("SELECT key FROM documents")}
    db.close()
    assert "faq.csv#q1" in keys and "cats.txt" not in keys
    result = CliRunner().invoke(app, [*args, "--include", "*.png", "--strict"])
    assert result.exit_code == 1, result.output


@pytest.mark.slow
def test_dask_workers_write_into_milvus_directly(
    tmp_path: Path, files: Path, milvus_server: str
) -> None:
    """Into a Milvus server the workers write (``write`` tasks, each with its own client); the
    index equals the one ``ragkit ingest`` builds in a folder."""
    from test_backends import _spans

    from ragkit.flows.ingest import run_ingest

    where = f"milvus://{milvus_server}/flow_{uuid.uuid4().hex[:8]}"
    state = run_ingest(
        [str(files)], where, runner="dask", workers=2, model=MODEL, return_state=True
    )
    report = state.result()
    names = {name for name, _ in task_runs(state.state_details.flow_run_id)}
    assert "write" in names and "commit" not in names
    with Index.open(tmp_path / "folder", create=True, model=MODEL) as folder:
        expected = folder.ingest([files])
        with Index.open(where) as milvus:
            assert _spans(milvus) == _spans(folder)
    assert report.documents_added == expected.documents_added == 6


def test_prefect_home_is_made_where_the_cache_folder_is_not_yet(tmp_path: Path) -> None:
    """Prefect makes only the last folder of its home: ``import flows`` makes the rest, so a
    fresh machine's first flow says nothing about a home it could not create."""
    cache = tmp_path / "fresh" / "cache"
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_HOME"} | {
        "RAGKIT_CACHE": str(cache)
    }
    done = subprocess.run(
        [sys.executable, "-c", "import ragkit.flows, prefect.context"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "Failed to create" not in done.stderr, done.stderr
    assert (cache / "prefect").is_dir()
