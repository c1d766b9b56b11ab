"""The newer surfaces as a hostile user meets them: records, Milvus, long ingests, frameworks.

Each scenario is what a user does (through the ``ragkit`` command in its own process, or the
Python API) and what must hold afterwards: nothing committed is lost, the answer is right, and
a refusal is one line with the documented exit code, never a traceback. The folder store and a
real ``milvus-lite server`` are both tried where a scenario names Milvus. Part of
``benchmarks/hostile.py`` (``--part surfaces``); every scenario also has a regression test,
named in docs/reliability.md.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ragkit import Index, RagkitError

MODEL = "all-minilm-l6-v2"
RAGKIT = str(Path(sys.executable).parent / "ragkit")


@dataclass(frozen=True)
class Outcome:
    """A scenario's result: whether what must hold held, and what was seen."""

    name: str
    held: bool
    seen: str


def ragkit(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``ragkit ARGS`` in its own process (offline, wide lines)."""
    env = {"HF_HUB_OFFLINE": "1", "COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [RAGKIT, *args], input=stdin, capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def one_line_refusal(result: subprocess.CompletedProcess[str], code: int = 2) -> bool:
    """A refusal as documented: exit ``code``, no traceback, a short message."""
    return result.returncode == code and "Traceback" not in result.stderr


def records(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def delete_star(work: Path, location: str) -> Outcome:
    rows = [{"id": i, "text": f"Record {i} about water."} for i in ("*", "a?", "b", "c")]
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    ragkit("ingest", "-", "--index", location, "--model", MODEL, stdin=lines)
    removed = ragkit("rm", "--id", "*", "--index", location)
    with Index.open(location) as index:
        index.delete(["a?"])
        left = sorted(d.key for d in index.documents())
    return Outcome(
        "delete by id '*' / 'a?'", removed.returncode == 0 and left == ["b", "c"], f"left {left}"
    )


def nan_in_jsonl(work: Path, location: str) -> Outcome:
    source = work / "nan.jsonl"
    source.write_text(
        '{"id": "bad", "text": "Boiling water.", "metadata": {"t": NaN}}\n'
        '{"id": "good", "text": "Boiling water at sea level.", "metadata": {"t": 1}}\n',
        encoding="utf-8",
    )
    ingest = ragkit("ingest", str(source), "--index", location, "--model", MODEL)
    query = ragkit("query", "water", "--index", location, "--filter", "t=1", "--json")
    doctor = ragkit("doctor", "--index", location)
    exported = ragkit("export", "--index", location)
    held = (
        query.returncode == 0
        and [h["document_id"] for h in json.loads(query.stdout or "[]")] == ["good"]
        and "NaN" not in exported.stdout
        and doctor.returncode == 0
        and "Traceback" not in ingest.stderr
    )
    return Outcome(
        "NaN in a .jsonl file's metadata",
        held,
        f"ingest exit {ingest.returncode}, query exit {query.returncode}",
    )


def collapse_k(work: Path, location: str) -> Outcome:
    licence = "Permission is hereby granted, free of charge, to any person obtaining a copy."
    rows = [{"id": f"copy-{n}", "text": licence} for n in range(300)]
    rows += [
        {"id": f"note-{n}", "text": f"Note {n}: the charge for copy {n} is {n} euros."}
        for n in range(20)
    ]
    ragkit(
        "ingest", str(records(work / "copies.jsonl", rows)), "--index", location, "--model", MODEL
    )
    result = ragkit("query", "free of charge copy", "--index", location, "-k", "5", "--json")
    hits = json.loads(result.stdout or "[]")
    copies = max((len(h["duplicates"]) for h in hits), default=0)
    return Outcome(
        "300 copies: query -k 5",
        len(hits) == 5 and copies == 299,
        f"{len(hits)} hits, +{copies} copies",
    )


def surrogate_record(work: Path, location: str) -> Outcome:
    with Index.open(location, create=True, model=MODEL) as index:
        try:
            report = index.add(
                [{"id": "bad", "text": "x\udc80y"}, {"id": "good", "text": "Good text."}]
            )
        except (RagkitError, UnicodeError) as error:
            return Outcome("lone surrogate in Index.add", False, f"{type(error).__name__}: {error}")
        keys = [d.key for d in index.documents()]
    return Outcome(
        "lone surrogate in Index.add", keys == ["good"] and len(report.skipped) == 1, f"kept {keys}"
    )


def stdin_edges(work: Path, location: str) -> Outcome:
    deep = "[" * 100_000 + "]" * 100_000
    lines = ["\ufeff" + json.dumps({"id": "first", "text": "First line after a BOM."}), deep]
    lines.append('{"id": "sur", "text": "x\\udc80"}')
    lines.append(json.dumps({"id": "last", "text": "Last line."}))
    result = ragkit(
        "ingest", "-", "--index", location, "--model", MODEL, stdin="\n".join(lines) + "\n"
    )
    with Index.open(location) as index:
        keys = sorted(d.key for d in index.documents())
    held = keys == ["first", "last"] and "Traceback" not in result.stderr
    return Outcome(
        "ingest -: BOM, 100,000-deep line, surrogate",
        held,
        f"exit {result.returncode}, kept {keys}",
    )


def huge_filter(work: Path, location: str) -> Outcome:
    rows = [{"id": "a", "text": "Water.", "metadata": {"t": "x"}}]
    Index.open(location, create=True, model=MODEL).add(rows)
    value = "x" * 60_000
    results = [
        ragkit("query", "water", "--index", location, "--filter", f"{field}={value}")
        for field in ("t", "source")  # a metadata value, and a 60,000-character glob
    ]
    held = all(one_line_refusal(r) or r.returncode == 0 for r in results) and not any(
        "delete" in r.stderr.lower() or "Traceback" in r.stderr for r in results
    )
    seen = "; ".join(f"exit {r.returncode} {r.stderr.strip()[:60]}" for r in results)
    return Outcome("60,000-character filter value and glob", held, seen)


def index_in_documents(work: Path, location: str) -> Outcome:
    folder = work / "d7"
    folder.mkdir()
    (folder / "a.txt").write_text("Water boils.", encoding="utf-8")
    result = ragkit("ingest", str(folder), "--index", str(folder), "--model", MODEL)
    written = sorted(p.name for p in folder.iterdir())
    return Outcome(
        "ingest d7 --index d7",
        one_line_refusal(result) and written == ["a.txt"],
        f"exit {result.returncode}, folder {written}",
    )


def nul_in_ls(work: Path, location: str) -> Outcome:
    text = "before\x00after text.."  # 19 characters
    Index.open(location, create=True, model=MODEL).add([{"id": "nul", "text": text}])
    result = ragkit("ls", "--index", location, "--json")
    shown = [row.get("characters") for row in json.loads(result.stdout or "[]")]
    return Outcome("ls of a text holding NUL", shown == [len(text)], f"characters {shown}")


def bm25s_quiet(work: Path, location: str) -> Outcome:
    seen: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(f"{record.name}: {record.getMessage()}")

    root = logging.getLogger()
    handler, level = Catch(), root.level
    root.addHandler(handler), root.setLevel(logging.DEBUG)
    try:
        with Index.open(location, create=True, model=MODEL) as index:
            index.add([{"id": "a", "text": "Water."}, {"id": "b", "text": "Ice."}])
            index.delete(["a"])
    finally:
        root.removeHandler(handler), root.setLevel(level)
    noisy = [line for line in seen if line.startswith("bm25s")]
    return Outcome("bm25s quiet under logging.DEBUG", not noisy, f"{len(noisy)} bm25s records")


def bad_milvus_address(work: Path, location: str) -> Outcome:
    results = [
        ragkit("ls", "--index", a)
        for a in ("milvus://h:notaport/x", "milvus://h:99999/x", "milvus://[::1/x")
    ]
    held = all(one_line_refusal(r) for r in results)
    return Outcome(
        "milvus:// with a bad port or host", held, f"exits {[r.returncode for r in results]}"
    )


def open_pipe(work: Path, location: str) -> Outcome:
    """``ingest -`` commits while its input stays open (a producer that pauses)."""
    Index.open(location, create=True, model=MODEL, commit_every_seconds=1).close()
    child = subprocess.Popen(
        [RAGKIT, "ingest", "-", "--index", location],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert child.stdin is not None
    for n in range(5):
        child.stdin.write(json.dumps({"id": f"r{n}", "text": f"Record {n} about rivers."}) + "\n")
    child.stdin.flush()
    seen: list[str] = []
    for _ in range(60):  # up to a minute for the model load and the first commit
        time.sleep(1)
        with Index.open(location) as index:
            seen = [d.key for d in index.documents()]
        if seen:
            break
    child.stdin.close()
    child.wait(timeout=300)
    return Outcome(
        "ingest - commits while the pipe stays open",
        len(seen) == 5,
        f"{len(seen)} committed before end of input",
    )


def long_id(work: Path, location: str) -> Outcome:
    with Index.open(location, create=True, model=MODEL) as index:
        report = index.add(
            [{"id": "x" * 70_000, "text": "Too long an id."}, {"id": "ok", "text": "Fine."}]
        )
        keys = [d.key for d in index.documents()]
    held = keys == ["ok"] and len(report.skipped) == 1
    return Outcome(
        "a 70,000-byte id beside a good record", held, f"kept {keys}, skipped {len(report.skipped)}"
    )


def haystack_filter_without_value(work: Path, location: str) -> Outcome:
    from ragkit.integrations.haystack import RagkitRetriever

    Index.open(location, create=True, model=MODEL).add([{"id": "a", "text": "Water."}])
    try:
        RagkitRetriever(location).run("water", filters={"field": "meta.year", "operator": "=="})
    except RagkitError as error:
        return Outcome("Haystack filter without 'value'", True, str(error)[:80])
    return Outcome("Haystack filter without 'value'", False, "answered instead of refusing")


def milvus_after_deletes(work: Path, location: str) -> Outcome:
    """40 records in a folder index and in Milvus, 11 removed from both: the same hits."""
    rows = [
        {
            "id": f"d{n}",
            "text": f"Note {n} on {['wings', 'flow', 'heat', 'drag'][n % 4]} and {['lift', 'shock', 'boundary layer'][n % 3]} number {n}.",
        }
        for n in range(40)
    ]
    hits = []
    for place in (str(work / "folder"), location):
        with Index.open(place, create=True, model=MODEL) as index:
            index.add(rows)
            index.delete([f"d{n}" for n in range(0, 33, 3)])
            hits.append(
                [
                    [(h.key, round(h.score, 4)) for h in index.search(q, k=5, mode="sparse")]
                    for q in ("wings lift", "heat shock", "drag boundary layer", "flow")
                ]
            )
    same = sum(a == b for a, b in zip(*hits, strict=True))
    return Outcome(
        "Milvus ranks as the folder after deletes", same == 4, f"{same}/4 hit lists equal"
    )


def milvus_doctor_wording(work: Path, location: str) -> Outcome:
    Index.open(location, create=True, model=MODEL).add([{"id": "a", "text": "Water."}])
    result = ragkit("doctor", "--index", location)
    held = result.returncode == 0 and "FAISS" not in result.stdout
    return Outcome("doctor on Milvus says what it checked", held, f"exit {result.returncode}")


def foreign_collection(work: Path, location: str) -> Outcome:
    from pymilvus import DataType, MilvusClient

    host = location.removeprefix("milvus://").split("/")[0]
    client = MilvusClient(uri=f"http://{host}")
    schema = client.create_schema(auto_id=False)
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=4)
    name = location.rsplit("/", 1)[1]
    client.create_collection(name, schema=schema)
    result = ragkit(
        "ingest",
        "-",
        "--index",
        location,
        "--model",
        MODEL,
        stdin='{"id": "a", "text": "Water."}\n',
    )
    held = (
        one_line_refusal(result)
        and "drop" not in result.stderr.lower()
        and client.has_collection(name)
    )
    return Outcome(
        "a collection ragkit did not create",
        held,
        f"exit {result.returncode}: {result.stderr.strip()[:80]}",
    )


Scenario = Callable[[Path, str], Outcome]
FOLDER_SCENARIOS: list[Scenario] = [
    open_pipe, long_id, haystack_filter_without_value,
    delete_star, nan_in_jsonl, collapse_k, surrogate_record, stdin_edges, huge_filter,
    index_in_documents, nul_in_ls, bm25s_quiet, bad_milvus_address,
]  # fmt: skip
MILVUS_SCENARIOS: list[Scenario] = [
    long_id,
    milvus_after_deletes,
    milvus_doctor_wording,
    foreign_collection,
    delete_star,
    collapse_k,
    surrogate_record,
    stdin_edges,
    huge_filter,
]


def run(milvus: str | None) -> list[dict]:
    """Every scenario on a fresh folder index, and those that name Milvus on a fresh
    collection of the server at ``milvus`` (HOST:PORT) when given."""
    outcomes: list[dict] = []
    places = [("folder", FOLDER_SCENARIOS)] + ([("milvus", MILVUS_SCENARIOS)] if milvus else [])
    for backend, scenarios in places:
        for number, scenario in enumerate(scenarios):
            work = Path(tempfile.mkdtemp(prefix="rk-surface-"))
            location = (
                str(work / "index") if backend == "folder" else f"milvus://{milvus}/s{number}"
            )
            try:
                outcome = scenario(work, location)
            except Exception as error:  # noqa: BLE001 - a scenario that crashes did not hold
                outcome = Outcome(
                    scenario.__name__, False, f"{type(error).__name__}: {error}"[:200]
                )
            outcomes.append(
                {
                    "backend": backend,
                    "scenario": outcome.name,
                    "held": outcome.held,
                    "seen": outcome.seen,
                }
            )
            print(
                f"{backend:<7} {'held' if outcome.held else 'FAILED':<7} {outcome.name}: {outcome.seen}",
                flush=True,
            )
    return outcomes
