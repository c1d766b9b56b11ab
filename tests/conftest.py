"""Shared fixtures: offline model loading and a small real corpus on disk."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import ragkit.flows

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MODEL = "all-minilm-l6-v2"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: list) -> None:
    """pytest-xdist workers start with this process's environment. GNU readline (which
    pytest's output capture imports) exports ``COLUMNS=80`` and ``LINES=24`` into it behind
    ``os.environ``'s back; a worker would read them and cut ragkit's tables to 80 columns
    where a pipe gets them whole. Take back what ``os.environ`` does not hold."""
    for name in ("COLUMNS", "LINES"):
        if name not in os.environ:
            os.unsetenv(name)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Modules holding a test marked ``slow`` run first (their own order, and every other
    module's, kept): under pytest-xdist (``make test``) the minute-long tests then start at
    once on different workers, rather than one of them ending the run on a worker alone."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "water.md").write_text(
        "# Water\n\nWater boils at 100 degrees Celsius at sea level.\n\n"
        "- Ice melts at zero degrees.\n- Steam is water vapour.\n",
        encoding="utf-8",
    )
    (folder / "sub" / "cats.txt").write_text(
        "Cats are small domesticated carnivores.\n\nThey sleep most of the day.", encoding="utf-8"
    )
    (folder / "prayer.txt").write_text(
        "إنما الأعمال بالنيات وإنما لكل امرئ ما نوى", encoding="utf-8"
    )
    (folder / "records.jsonl").write_text(
        '{"id": "r1", "title": "Trains", "text": "Steam locomotives pulled early trains."}\n'
        '{"id": "r2", "text": "Bicycles have two wheels.", "metadata": {"lang": "en"}}\n',
        encoding="utf-8",
    )
    return folder


@pytest.fixture(scope="session")
def prefect_harness(tmp_path_factory: pytest.TempPathFactory):
    """One temporary Prefect server (SQLite) for the session, results kept in a temp folder."""
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    storage = tmp_path_factory.mktemp("prefect-results")
    with (
        temporary_settings({PREFECT_LOCAL_STORAGE_PATH: storage}),
        prefect_test_harness(server_startup_timeout=120),
    ):
        yield


@pytest.fixture
def tiny_beir(tmp_path: Path) -> Path:
    """A three-document BEIR folder with two judged queries (one right answer each)."""
    import json

    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    docs = {
        "d1": "Water boils at one hundred degrees Celsius.",
        "d2": "Cats sleep most of the day.",
        "d3": "Airfoil lift depends on the angle of attack.",
    }
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in docs.items())
    )
    (folder / "queries.jsonl").write_text(
        json.dumps({"_id": "q1", "text": "boiling temperature of water"})
        + "\n"
        + json.dumps({"_id": "q2", "text": "wing lift and angle of attack"})
        + "\n"
    )
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t2\n")
    return folder


@contextmanager
def records_index(
    backend: str, folder: Path, records: list[dict[str, Any]], collection: str
) -> Iterator[Any]:
    """An index of ``records`` (MiniLM, sentence chunks of 24 tokens) on ``backend``: a folder
    under ``folder``, or an embedded Milvus Lite file there (``milvus-lite``) holding
    ``collection``."""
    from ragkit import Index

    where = (
        str(folder / "index")
        if backend == "folder"
        else f"milvus-lite://{folder / 'lite.db'}?collection={collection}"
    )
    with Index.open(where, create=True, model=MODEL, chunker="sentence", chunk_tokens=24) as ix:
        ix.add(records)
        yield ix


def ragkit(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed ``ragkit`` command, run in its own process (output as text)."""
    command = [str(Path(sys.executable).parent / "ragkit"), *args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "200"}
    return subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False
    )


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``ragkit ARGS`` run in this process (typer's runner: no interpreter start, models
    already loaded stay loaded), for tests of what a command does rather than of the process
    (exit codes and messages of the real binary, terminals, pipes and signals go through
    :func:`ragkit`); the same fields as :func:`ragkit`."""
    from typer.testing import CliRunner

    from ragkit.cli import app

    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    stderr = result.stderr
    if result.exc_info and not isinstance(result.exception, SystemExit):  # shown on failure
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(["ragkit", *args], result.exit_code, result.stdout, stderr)


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Milvus gRPC endpoint for the session: ``milvus-lite server`` on a free
    127.0.0.1 port (stopped afterwards); yields ``HOST:PORT``."""
    from ragkit.errors import RagkitError
    from ragkit.store.milvus.server import LiteServer, executable

    try:
        executable()
    except RagkitError as error:
        pytest.skip(str(error))
    with LiteServer(tmp_path_factory.mktemp("milvus-data")) as address:
        yield address
