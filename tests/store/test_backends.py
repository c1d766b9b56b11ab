"""One behavioural suite over both backends: the index folder, and Milvus — a real
``milvus-lite server`` gRPC endpoint (``milvus_server``) and an embedded Milvus Lite file.

Each test runs against every backend and checks what a user sees: hits and their offsets,
incremental ingest, prune, rm, renames, filters (hostile values included), languages, export,
info and doctor. Milvus answers must equal the folder store's.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import MODEL, cli, ragkit
from ragkit import Index, RagkitError

BACKENDS = ["folder", "milvus", "milvus-lite"]


def location(kind: str, tmp_path: Path, server: str) -> str:
    """A fresh index location of backend ``kind``."""
    collection = f"t_{uuid.uuid4().hex[:12]}"
    if kind == "folder":
        return str(tmp_path / "index")
    if kind == "milvus":
        return f"milvus://{server}/{collection}"
    return f"milvus-lite://{tmp_path / 'lite.db'}?collection={collection}"


@pytest.fixture(params=BACKENDS[:2])
def where(request: pytest.FixtureRequest, tmp_path: Path, milvus_server: str) -> str:
    """The folder and a Milvus server (an embedded file runs the same store code through
    another connection: the tests on ``every_index`` and the comparison cover it)."""
    return location(request.param, tmp_path, milvus_server)


@pytest.fixture(params=BACKENDS)
def anywhere(request: pytest.FixtureRequest, tmp_path: Path, milvus_server: str) -> str:
    return location(request.param, tmp_path, milvus_server)


@pytest.fixture
def index(where: str) -> Iterator[Index]:
    with Index.open(where, create=True, model=MODEL, chunker="sentence") as opened:
        yield opened


@pytest.fixture
def every_index(anywhere: str) -> Iterator[Index]:
    with Index.open(anywhere, create=True, model=MODEL, chunker="sentence") as opened:
        yield opened


def _spans(index: Index) -> list[tuple[str, int, int, str]]:
    return sorted((r["document"], r["start"], r["end"], r["text"]) for r in _records(index))


def _records(index: Index) -> list[dict]:
    records: list[dict] = []
    index.store.refresh()
    records.extend(index.store.chunk_records(vectors=True))
    return records


def test_ingest_search_offsets_and_reingest(every_index: Index, corpus: Path) -> None:
    index = every_index
    report = index.ingest([corpus])
    assert report.documents_added == 5 and report.skipped == []
    hits = index.search("At what temperature does water boil?", k=3)
    assert Path(hits[0].source).name == "water.md"
    original = (corpus / "water.md").read_text(encoding="utf-8")
    assert original[hits[0].start : hits[0].end] == hits[0].text
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    record = index.search("steam locomotive trains", k=1)[0]
    assert (record.document_id, record.title, record.key.endswith("records.jsonl#r1")) == (
        "r1",
        "Trains",
        True,
    )
    before = _spans(index)
    again = index.ingest([corpus])
    assert (again.documents_added, again.documents_unchanged, again.chunks_added) == (0, 5, 0)
    assert _spans(index) == before
    (corpus / "sub" / "cats.txt").write_text("Dogs bark loudly at night.", encoding="utf-8")
    assert index.ingest([corpus]).documents_added == 1
    texts = [span[3] for span in _spans(index)]
    assert "Dogs bark loudly at night." in texts and not any("Cats" in t for t in texts)
    counts = index.store.counts()
    assert counts == {"documents": 5, "chunks": len(texts), "vectors": len(texts)}


def test_every_mode_answers(index: Index, corpus: Path) -> None:
    index.ingest([corpus])
    for mode in ("dense", "sparse", "hybrid"):
        hits = index.search("water boils", k=2, mode=mode)
        assert Path(hits[0].source).name == "water.md", mode
    arabic = index.search("الأعمال بالنيات", k=1, mode="sparse")
    assert Path(arabic[0].source).name == "prayer.txt" and arabic[0].language == "ar"
    assert index.search("zzqx nothing matches", k=3, mode="sparse") == []


def test_prune_rm_and_rename(index: Index, corpus: Path) -> None:
    index.ingest([corpus])
    (corpus / "water.md").unlink()
    assert index.ingest([corpus], prune=True).documents_removed == 1
    assert all(Path(h.source).name != "water.md" for h in index.search("water boils", k=10))
    vectors = {r["document"]: r["vector"] for r in _records(index)}
    shutil.move(corpus / "sub" / "cats.txt", corpus / "cats-moved.txt")
    moved = index.ingest([corpus], prune=True)
    assert (moved.documents_renamed, moved.chunks_added) == (1, 0)
    keys = [d.key for d in index.documents()]
    assert str(corpus / "cats-moved.txt") in keys and str(corpus / "sub" / "cats.txt") not in keys
    after = {r["document"]: r["vector"] for r in _records(index)}
    assert after[str(corpus / "cats-moved.txt")] == vectors[str(corpus / "sub" / "cats.txt")]
    assert index.search("cats sleep", k=1)[0].key == str(corpus / "cats-moved.txt")
    removed = index.delete_matching(["*.jsonl"])
    assert sorted(Path(k).name for k in removed) == ["records.jsonl#r1", "records.jsonl#r2"]
    assert not index.search("steam trains", k=10, filters={"source": "*.jsonl"})
    with pytest.raises(RagkitError, match="no document matches"):
        index.delete_matching(["*.nothing"])


def test_records_add_prune_and_delete(index: Index) -> None:
    given = [
        {"id": "boil", "text": "Water boils at 100 degrees.", "metadata": {"year": 2021}},
        {"id": "melt", "text": "Ice melts at zero degrees.", "metadata": {"year": 1999}},
    ]
    assert index.add(given).documents_added == 2
    assert index.add(given).documents_unchanged == 2
    top = index.search("boiling", k=1, filters={"year": {">=": 2000}})[0]
    assert (top.key, top.source, top.text) == ("boil", "<records>", given[0]["text"])
    assert index.add(given[:1], prune=True).documents_removed == 1
    assert index.delete(["boil"]) == ["boil"]
    assert index.documents() == []


HOSTILE = [
    '" or 1 == 1 or "',
    "') or (id > 0",
    'x\\" || document_id >= 0 || \\"',
    "\n",
    "*",
]


def test_filters_match_the_folder_rules_and_hostile_values_match_nothing(
    index: Index, corpus: Path
) -> None:
    index.ingest([corpus])
    english = index.search("water", k=10, filters={"language": "en"})
    assert english and all(h.language == "en" for h in english)
    assert all(h.language == "ar" for h in index.search("water", k=10, filters={"language": "ar"}))
    assert [h.document_id for h in index.search("wheels", k=5, filters={"lang": "en"})] == ["r2"]
    docs = index.search("water", k=10, filters={"source": "sub/*.txt"})
    assert {Path(h.source).name for h in docs} == {"cats.txt"}
    for value in HOSTILE:
        for key in ("language", "source", "lang"):
            found = index.search("water", k=10, filters={key: value})
            assert found == [] or (key == "source" and value == "*"), (key, value)
    with pytest.raises(RagkitError, match="no document has that metadata field"):
        index.search("water", k=3, filters={"yaer": "2020"})


def test_an_oversized_filter_is_refused_as_input_on_both_backends(where: str, corpus: Path) -> None:
    """SQLite cannot evaluate a 60,000-character glob or thousands of alternatives: the filter
    is the user's mistake (exit 2, HTTP 422), never a damaged index to delete."""
    from fastapi.testclient import TestClient

    from ragkit.serve.app import create_app
    from ragkit.serve.indexes import ServedIndexes, parse_locations

    with Index.open(where, create=True, model=MODEL) as index:
        index.ingest([corpus])
        with pytest.raises(RagkitError, match="of 60,000 characters: at most 4,096"):
            index.search("water", k=3, filters={"source": "x" * 60_000})
        with pytest.raises(RagkitError, match="filters with 40,000 values: at most 200"):
            index.search("water", k=3, filters={"language": ["en"] * 40_000})
        assert index.search("water", k=3, filters={"language": "x" * 60_000}) == []
    ran = cli("query", "water", "--index", where, "--filter", "source=" + "x" * 60_000)
    assert ran.returncode == 2 and "at most 4,096" in ran.stderr, ran.stderr
    assert "unreadable" not in ran.stderr and "Traceback" not in ran.stderr
    served = ServedIndexes(parse_locations([where]), warm=False)
    try:
        client = TestClient(create_app(served), raise_server_exceptions=False)
        for filters in ({"source": "x" * 60_000}, {f"k{i}": "x" for i in range(2000)}):
            answer = client.post("/search", json={"query": "water", "filters": filters})
            assert answer.status_code == 422 and "at most" in answer.json()["detail"]
    finally:
        served.close()


def test_listing_export_info_and_language_decisions(index: Index, corpus: Path) -> None:
    index.ingest([corpus])
    listed = index.documents()
    assert [d.key for d in listed] == sorted(d.key for d in listed) and len(listed) == 5
    assert [Path(d.key).name for d in index.documents("sub/*.txt")] == ["cats.txt"]
    water = next(d for d in listed if d.key.endswith("water.md"))
    assert water.characters == len((corpus / "water.md").read_text(encoding="utf-8"))
    records = _records(index)
    assert len(records) == index.info().chunks == sum(d.chunks for d in listed)
    assert all(len(r["vector"]) == 384 for r in records)
    assert {r["language"] for r in records} == {"en", "ar"}
    decision = index.store.language_decision(str(corpus / "prayer.txt"))
    assert decision is not None and decision.language == "ar"
    assert index.chunking(str(corpus / "water.md")).chosen
    info = index.info()
    assert (info.documents, info.embedding_model) == (5, MODEL)


def test_reanalyze_keeps_vectors(index: Index, corpus: Path) -> None:
    index.ingest([corpus])
    before = sorted((r["document"], r["start"], tuple(r["vector"])) for r in _records(index))
    report = index.reanalyze()
    assert report.documents == 5 and report.chunks_reembedded == 0
    after = sorted((r["document"], r["start"], tuple(r["vector"])) for r in _records(index))
    assert after == before


def test_milvus_answers_as_the_folder_does(
    tmp_path: Path, corpus: Path, milvus_server: str
) -> None:
    queries = ["water boils", "cats sleep all day", "الأعمال بالنيات", "trains pulled by steam"]
    answers = []
    for kind in BACKENDS:
        with Index.open(location(kind, tmp_path, milvus_server), create=True, model=MODEL) as ix:
            ix.ingest([corpus])
            answers.append(
                [
                    [(h.key, h.start, h.end, round(h.score, 4)) for h in ix.search(q, k=4, mode=m)]
                    for q in queries
                    for m in ("dense", "sparse", "hybrid")
                ]
            )
    assert answers[1] == answers[0] and answers[2] == answers[0]


WORDS = (
    "water boils steam ice melts cats sleep dogs bark trains locomotive wheels bicycle river "
    "flows mountain snow rain cloud wind storm sea salt fish bird wing lift air pressure"
)


def _records_of(count: int, seed: int) -> list[dict]:
    import random

    pick, words = random.Random(seed), WORDS.split()
    texts = (" ".join(pick.choice(words) for _ in range(pick.randint(8, 40))) for _ in range(count))
    return [{"id": f"d{i}", "text": text + "."} for i, text in enumerate(texts)]


def test_milvus_scores_as_the_folder_after_deletes_reingests_and_prunes(
    tmp_path: Path, milvus_server: str
) -> None:
    """Milvus's own BM25 statistics count removed rows until it compacts them; ragkit's count
    the visible chunks only, as the folder's BM25 index does."""
    given = _records_of(40, seed=3)
    changed = [r | {"text": r["text"] + " storm storm sea"} for r in given[20:25]]
    queries = ["water steam", "cats dogs", "river rain", "wing lift air", "storm sea", "ice snow"]
    steps = ["rm 11", "new versions", "prune"]
    answers: dict[str, list] = {}
    for kind in BACKENDS:
        with Index.open(location(kind, tmp_path, milvus_server), create=True, model=MODEL,
                        chunker="sentence") as ix:  # fmt: skip
            ix.add(given)
            seen = []
            for step in steps:
                if step == "rm 11":
                    ix.delete([f"d{i}" for i in range(0, 40, 4)] + ["d1"])
                elif step == "new versions":
                    assert ix.add(changed).documents_added == 5
                else:
                    assert ix.add(given[30:], prune=True).documents_removed == 23
                seen.append(
                    [  # equal scores in either order: the backends number chunks apart
                        sorted(
                            ((h.key, round(h.score, 4)) for h in ix.search(q, k=5, mode=mode)),
                            key=lambda hit: (-hit[1], hit[0]),
                        )
                        for q in queries
                        for mode in ("sparse", "hybrid")
                    ]
                )
            answers[kind] = seen
    for kind in BACKENDS[1:]:
        for step, folder, milvus in zip(steps, answers["folder"], answers[kind], strict=True):
            assert milvus == folder, (kind, step)


def test_a_second_client_with_another_model_is_refused(where: str, corpus: Path) -> None:
    with Index.open(where, create=True, model=MODEL) as index:
        index.ingest([corpus / "water.md"])
    with pytest.raises(RagkitError, match="built with 'all-minilm-l6-v2'"):
        Index.open(where, model="multilingual-e5-small")
    with pytest.raises(RagkitError, match="built with chunker"):
        Index.open(where, chunker="fixed")


def test_missing_index_and_unreachable_server_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(RagkitError, match="no ragkit index here"):
        Index.open(f"milvus-lite://{tmp_path / 'none.db'}")
    with pytest.raises(RagkitError, match="Milvus unreachable"):
        Index.open("milvus://127.0.0.1:9/ragkit")
    with pytest.raises(RagkitError, match="collection name"):
        Index.open("milvus://127.0.0.1:19530/bad-name")
    with pytest.raises(RagkitError, match="absolute .db path"):
        Index.open("milvus-lite://relative.db")
    with pytest.raises(RagkitError, match="whole number"):
        Index.open("milvus://127.0.0.1:19530/docs?shards=0")
    with pytest.raises(RagkitError, match="unknown parameter"):
        Index.open("milvus://127.0.0.1:19530/docs?consistency=eventual")


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("milvus://127.0.0.1:notaport/docs", "port 'notaport': give a number from 1 to 65535"),
        ("milvus://127.0.0.1:99999/docs", "port '99999': give a number from 1 to 65535"),
        ("milvus://[::1/docs", "Invalid IPv6 URL"),
    ],
)
def test_a_malformed_milvus_address_is_one_line(address: str, reason: str) -> None:
    with pytest.raises(RagkitError, match=re.escape(reason)):
        Index.open(address)
    ran = ragkit("query", "water", "--index", address)  # the binary: no traceback, exit 2
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1, ran.stderr
    assert reason in ran.stderr and "Traceback" not in ran.stderr


def test_an_index_from_another_schema_is_refused(tmp_path: Path, milvus_server: str) -> None:
    where = location("milvus", tmp_path, milvus_server)
    with Index.open(where, create=True, model=MODEL) as index:
        index.store._put_state({"schema": "0"})  # type: ignore[attr-defined]
    with pytest.raises(RagkitError, match="Milvus schema 0"):
        Index.open(where)


def test_collections_ragkit_did_not_create_are_said_and_never_offered_for_dropping(
    tmp_path: Path, corpus: Path, milvus_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pymilvus import MilvusClient

    from ragkit.store.milvus import collections, lifecycle

    name = f"t_{uuid.uuid4().hex[:12]}"
    client = MilvusClient(uri=f"http://{milvus_server}")
    try:
        client.create_collection(f"{name}_theirs", dimension=4)  # someone else's collection
        client.insert(f"{name}_theirs", [{"id": 1, "vector": [0.1, 0.2, 0.3, 0.4]}])
        theirs = f"milvus://{milvus_server}/{name}_theirs"
        for create in (False, True):
            with pytest.raises(RagkitError, match="is not a ragkit collection") as refused:
                Index.open(theirs, create=create, model=MODEL)
            assert "drop" not in str(refused.value)
        with Index.open(f"milvus://{milvus_server}/{name}_documents", create=True, model=MODEL):
            pass  # the index NAME_documents: its chunk collection is a name of the index NAME
        ran = cli("ingest", str(corpus), "--index", f"milvus://{milvus_server}/{name}")
        assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
        assert f"{name}_documents belongs to the ragkit index '{name}_documents'" in ran.stderr
        assert "drop" not in ran.stderr
        collections.create_state(client, name)  # a creator of NAME that stopped after its state
        monkeypatch.setattr(lifecycle, "CREATION_WAIT", 0.5)
        with pytest.raises(RagkitError, match="never finished") as unfinished:
            Index.open(f"milvus://{milvus_server}/{name}", create=True, model=MODEL)
        assert f"drop the collections {name}_state and" in str(unfinished.value)
        assert client.query(f"{name}_theirs", filter="id >= 0", output_fields=["id"]) == [{"id": 1}]
    finally:
        client.close()


def test_the_cli_takes_a_milvus_address(tmp_path: Path, corpus: Path, milvus_server: str) -> None:
    where = location("milvus", tmp_path, milvus_server)
    ingested = cli("ingest", str(corpus), "--index", where, "--model", MODEL)
    assert ingested.returncode == 0, ingested.stderr
    found = cli("query", "water boils", "--index", where, "-k", "1", "--json")
    assert found.returncode == 0, found.stderr
    assert Path(json.loads(found.stdout)[0]["source"]).name == "water.md"
    listed = cli("ls", "--index", where, "--json")
    assert len(json.loads(listed.stdout)) == 5
    checked = cli("doctor", "--index", where)
    assert checked.returncode == 0 and "documents 5" in checked.stdout, checked.stdout
    assert "ok: Milvus document ↔ chunk ↔ text rows agree" in checked.stdout
    assert not any(word in checked.stdout for word in ("SQLite", "FAISS", "checksums"))
    removed = cli("rm", "--index", where, "*.jsonl")
    assert removed.returncode == 0, removed.stderr
    info = cli("info", "--index", where)
    assert "milvus://" in info.stdout and "documents" in info.stdout
    missing = ragkit("query", "x", "--index", f"milvus://{milvus_server}/absent")  # the binary
    assert missing.returncode == 2 and "no ragkit index here" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_the_token_is_never_shown(
    tmp_path: Path, corpus: Path, milvus_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILVUS_TOKEN", "s3cret-token")
    with pytest.raises(RagkitError) as unreachable:
        Index.open("milvus://127.0.0.1:9/ragkit")
    assert "s3cret" not in str(unreachable.value)
    with pytest.raises(RagkitError, match="MILVUS_TOKEN") as inline:
        Index.open("milvus://root:s3cret@127.0.0.1:9/ragkit")
    assert "s3cret" not in str(inline.value)
    where = location("milvus", tmp_path, milvus_server)
    with Index.open(where, create=True, model=MODEL) as index:
        index.ingest([corpus / "water.md"])
        assert "s3cret" not in repr(index.info()) + repr(index.store.address)  # type: ignore[attr-defined]
    shown = ragkit("info", "--index", where)
    assert shown.returncode == 0 and "s3cret" not in shown.stdout + shown.stderr


def test_eval_keeps_its_index_in_milvus(
    tmp_path: Path, tiny_beir: Path, milvus_server: str
) -> None:
    figures = []
    for kind in ("folder", "milvus"):
        out = tmp_path / f"{kind}.json"
        where = location(kind, tmp_path, milvus_server)
        ran = cli("eval", str(tiny_beir), "--model", MODEL, "--mode", "all",
                  "--keep-index", where, "--json", str(out))  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        figures.append(
            [(r["mode"], r["ndcg_at_10"], r["mrr_at_10"]) for r in json.loads(out.read_text())]
        )
        with Index.open(where) as kept:
            assert kept.info().documents == 3
    assert figures[0] == figures[1]


def test_a_chunk_too_long_for_milvus_is_refused_alone(tmp_path: Path, milvus_server: str) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "a.txt").write_text("Water boils at 100 degrees.", encoding="utf-8")
    (files / "b.txt").write_text("x" * 70_000, encoding="utf-8")  # one 70,000-byte "word"
    where = location("milvus", tmp_path, milvus_server)
    ran = ragkit("ingest", str(files), "--index", where, "--model", MODEL, "--chunker", "fixed")
    assert ran.returncode == 2 and "b.txt: chunk 0" in ran.stderr and "Traceback" not in ran.stderr
    with Index.open(where) as index:
        assert [Path(d.key).name for d in index.documents()] == ["a.txt"]
        assert Path(index.search("water", k=1)[0].key).name == "a.txt"


def test_an_id_or_title_too_long_to_store_is_refused_alone_on_both_backends(where: str) -> None:
    """One record with a 70,000-byte id or a 100,000-byte title is skipped with that reason; the
    good record beside it is committed, and Milvus keeps no hidden rows."""
    from ragkit.store.address import diagnose

    good = {"id": "good", "text": "Water boils at 100 degrees."}
    with Index.open(where, create=True, model=MODEL) as index:
        for bad, field in (
            ({"id": "x" * 70_000, "text": "Ice melts."}, "id is 70,000 bytes"),
            ({"id": "t", "title": "T" * 100_000, "text": "Ice melts."}, "title is 100,000 bytes"),
        ):
            report = index.add([good, bad])
            limit = "over the 65,535-byte limit of a document's id, key, source and title"
            assert [s.reason for s in report.skipped] == [f"its {field}, {limit}"]
            assert len(report.skipped[0].path) < 300  # the key shortened, not 70,000 characters
            assert [d.key for d in index.documents()] == ["good"]
            assert index.search("water boils", k=1)[0].key == "good"
            index.delete(["good"])
    found = diagnose(where)
    assert found.healthy and found.notes == [], found.notes


def test_an_index_opens_after_milvus_restarts(tmp_path: Path, corpus: Path) -> None:
    from ragkit.store.milvus.server import LiteServer

    data = tmp_path / "milvus"
    with LiteServer(data) as server:
        index = Index.open(f"milvus://{server}/docs", create=True, model=MODEL)
        index.ingest([corpus])
        before = [(h.key, h.start) for h in index.search("water boils", k=3)]
        index.close()
    with LiteServer(data) as server:  # a new port, the same data: collections come back released
        index = Index.open(f"milvus://{server}/docs")
        assert [(h.key, h.start) for h in index.search("water boils", k=3)] == before
        assert index.ingest([corpus]).documents_unchanged == 5
        index.close()


def test_serve_answers_503_while_milvus_is_down_and_recovers_when_it_restarts(
    tmp_path: Path, corpus: Path
) -> None:
    """A restarted Milvus comes back with its collections released: the server loads them
    again by itself; while Milvus is down, searches are 503 and /health says so."""
    import time

    from fastapi.testclient import TestClient

    from ragkit.serve.app import create_app
    from ragkit.serve.indexes import ServedIndexes, parse_locations
    from ragkit.store.milvus.server import LiteServer, free_port

    data, port = tmp_path / "milvus", free_port()
    where = f"milvus://127.0.0.1:{port}/docs"
    query = {"query": "water boils", "k": 3}
    with LiteServer(data, port), Index.open(where, create=True, model=MODEL) as index:
        index.ingest([corpus])
    with LiteServer(data, port):
        served = ServedIndexes(parse_locations([where]), warm=False)
        client = TestClient(create_app(served), raise_server_exceptions=False)
        before = client.post("/search", json=query)
        assert before.status_code == 200 and client.get("/health").json()["status"] == "ok"
    try:
        down = client.post("/search", json=query)
        assert down.status_code == 503 and "Milvus unreachable" in down.json()["detail"]
        health = client.get("/health")
        assert health.status_code == 503 and health.json()["states"][0]["state"] == "unavailable"
        with LiteServer(data, port):  # the same address, collections released
            deadline = time.monotonic() + 60
            while (after := client.post("/search", json=query)).status_code == 503:
                assert time.monotonic() < deadline, after.json()  # gRPC reconnects within ~3 s
                time.sleep(1)
            assert after.status_code == 200, after.json()
            assert after.json()["hits"] == before.json()["hits"]
            assert client.get("/health").json()["states"] == [
                {"name": "docs", "state": "ok", "detail": ""}
            ]
    finally:
        served.close()
    ran = ragkit("query", "water", "--index", where)  # nothing listens there now
    assert ran.returncode == 3 and "Milvus unreachable" in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr


def test_an_embedded_file_another_process_holds_says_so(tmp_path: Path) -> None:
    import subprocess
    import sys

    where = f"milvus-lite://{tmp_path / 'held.db'}"
    opening = f"Index.open({where!r}, create=True, model={MODEL!r})"
    script = f"import time; from ragkit import Index; {opening}; print('open'); time.sleep(60)"
    holder = subprocess.Popen(
        [sys.executable, "-u", "-c", script], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(RagkitError, match="in use by another process"):
            Index.open(where)
    finally:
        holder.kill()
        holder.wait()
