"""Kill `ragkit ingest` with SIGKILL at random points, then check the index and resume.

Shared by ``test_crash.py`` (12 trials) and ``benchmarks/reliability.py`` (more; imported
there as ``tests.reliability.killharness``, so no test-only imports here). After each
kill the index must open, SQLite chunk ids = FAISS ids = BM25 ids (BM25 rebuilt from SQLite
when the crash left it absent), no chunk span stored twice, and no document committed by an
earlier trial may vanish. At the end one resume runs to completion, and every document seen
during the trials must hold exactly the chunks it holds in the completed index (a document is
all there or absent, never half).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragkit.config import Settings
from ragkit.paths import shared_data_dir
from ragkit.store import DB_NAME, FolderStore
from ragkit.store.folder.doctor import diagnose

CRANFIELD = shared_data_dir() / "beir" / "cranfield" / "corpus.jsonl"
MODEL = "all-minilm-l6-v2"
Spans = dict[str, list[tuple[int, int, str]]]


def cranfield_files(folder: Path, count: int, source: Path = CRANFIELD) -> Path:
    """``count`` Cranfield abstracts written as one small text file each."""
    folder.mkdir(parents=True, exist_ok=True)
    with source.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines):
            if number >= count:
                break
            record = json.loads(line)
            body = f"{record.get('title', '')}\n\n{record['text']}".strip()
            (folder / f"cran-{number:04d}.txt").write_text(body + "\n", encoding="utf-8")
    return folder


def new_index(folder: Path, commit_every: int, **settings: Any) -> None:
    """An empty index for ``MODEL`` that commits every ``commit_every`` documents (and by the
    other ``settings``, e.g. ``commit_every_seconds``)."""
    chosen = Settings(embedding_model=MODEL, commit_every_documents=commit_every, **settings)
    FolderStore.create(folder, chosen, dimension=384).close()


def ingest_command(corpus: Path, index: Path) -> list[str]:
    script = Path(sys.executable).with_name("ragkit")
    program = [str(script)] if script.exists() else [sys.executable, "-m", "ragkit.cli"]
    return [*program, "ingest", str(corpus), "--index", str(index)]


def generation(index: Path) -> int:
    """The committed generation of the index folder ``index``, read without a lock."""
    db = sqlite3.connect(f"file:{index / DB_NAME}?mode=ro", uri=True, timeout=30)
    try:
        return int(db.execute("SELECT value FROM state WHERE key='generation'").fetchone()[0])
    finally:
        db.close()


def spans(index: Path) -> Spans:
    db = sqlite3.connect(f"file:{index / DB_NAME}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute(
            "SELECT d.key, c.start, c.end, c.text FROM chunks c "
            "JOIN documents d ON d.id = c.document_id ORDER BY d.key, c.start, c.end, c.id"
        ).fetchall()
    finally:
        db.close()
    found: Spans = {}
    for key, start, end, text in rows:
        found.setdefault(key, []).append((start, end, text))
    return found


@dataclass
class Figures:
    trials: int = 0
    killed: int = 0  # SIGKILL delivered while the ingest was still running
    mid_ingest: int = 0  # kills after at least one commit of that run
    completed_before_kill: int = 0
    corrupt: int = 0
    lost: int = 0
    duplicated: int = 0
    half_documents: int = 0
    bm25_absent_after_kill: int = 0
    resume_completed: bool = False
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def check(index: Path, figures: Figures, committed: set[str]) -> Spans:
    """Verify the index after a kill; rebuild BM25 when absent; return the stored spans."""
    try:
        found = diagnose(index)
        if any(note.startswith("bm25-") for note in found.notes):
            figures.bm25_absent_after_kill += 1
            store = FolderStore.open(index)
            store.ensure_sparse()  # what the first sparse search does
            store.close()
            found = diagnose(index)
    except Exception as error:  # noqa: BLE001 - any failure to open is corruption here
        figures.corrupt += 1
        figures.problems.append(f"open failed: {error}")
        return {}
    if found.problems:
        figures.corrupt += 1
        figures.problems.extend(found.problems)
    stored = spans(index)
    for key, items in stored.items():
        if len(set(items)) != len(items):
            figures.duplicated += 1
            figures.problems.append(f"{key}: chunk stored twice")
    vanished = committed - set(stored)
    figures.lost += len(vanished)
    figures.problems.extend(f"{key}: committed, then lost" for key in sorted(vanished))
    return stored


def run_trials(
    corpus: Path, workdir: Path, trials: int, commit_every: int = 3, seed: int = 0
) -> Figures:
    """``trials`` killed ingests of ``corpus`` (a fresh index each time one completes)."""
    rng = random.Random(seed)
    figures = Figures()
    expected = {str(p) for p in corpus.iterdir()}
    index = workdir / "index-0"
    new_index(index, commit_every)
    committed: set[str] = set()
    seen: list[tuple[Path, Spans]] = []
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    while figures.trials < trials:
        figures.trials += 1
        start_generation = generation(index)
        process = subprocess.Popen(
            ingest_command(corpus, index),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=environment,
        )
        early = rng.random() < 0.2  # some kills during start-up and loading
        deadline = time.monotonic() + (rng.uniform(0.5, 8.0) if early else 120)
        while process.poll() is None and time.monotonic() < deadline:
            if not early and generation(index) > start_generation:
                time.sleep(rng.uniform(0.0, 2.5))
                break
            time.sleep(0.05)
        if process.poll() is None:
            mid = generation(index) > start_generation
            process.send_signal(signal.SIGKILL)
            process.wait()
            figures.killed += 1
            figures.mid_ingest += mid
        else:
            figures.completed_before_kill += 1
        stored = check(index, figures, committed)
        committed |= set(stored)
        seen.append((index, stored))
        if set(stored) >= expected:  # the whole set is in: start a new index
            index = workdir / f"index-{figures.trials}"
            new_index(index, commit_every)
            committed = set()
    final = subprocess.run(
        ingest_command(corpus, index),
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    finished = spans(index)
    figures.resume_completed = final.returncode == 0 and set(finished) == expected
    if not figures.resume_completed:
        figures.problems.append(f"resume: exit {final.returncode}, {final.stderr[-300:]}")
    check(index, figures, committed)
    complete = {path: spans(path) for path in {p for p, _ in seen}}
    for path, stored in seen:
        for key, items in stored.items():
            if path in complete and complete[path].get(key) != items:
                figures.half_documents += 1
                figures.problems.append(f"{key}: chunks differ from the completed document")
    return figures
