"""Input edges (issue 51): values no index can store (NaN, Infinity, unpaired surrogates), an
index folder among the documents, a full disk, NUL in a text, malformed framework filters."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import MODEL, cli, ragkit
from ragkit import Index, RagkitError


def _records(path: Path, *lines: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ingest(docs: Path | str, index: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return cli("ingest", str(docs), "--index", str(index), "--model", MODEL, "-q", *options)


def _exported(index: Path) -> list[dict]:
    done = cli("export", "--index", str(index))
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line, parse_constant=pytest.fail) for line in done.stdout.splitlines()]


# -- item 2: NaN and Infinity ------------------------------------------------------------------


def test_nan_in_a_record_file_skips_that_record_and_filters_keep_working(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    _records(
        docs / "r.jsonl",
        '{"id": "a", "text": "Water boils at 100 C.", "metadata": {"year": 2021}}',
        '{"id": "b", "text": "Cats sleep a lot.", "metadata": {"score": NaN}}',
        '{"id": "c", "text": "Owls hunt at night.", "metadata": {"scores": [1, 1e400]}}',
    )
    (docs / "array.json").write_text(
        '[{"id": "x", "text": "Ice melts.", "score": -Infinity}, {"id": "y", "text": "Fog."}]'
    )
    (docs / "one.json").write_text('{"text": "Steam rises.", "metadata": {"ratio": NaN}}')
    done = _ingest(docs, index)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "docs/r.jsonl:2: 'metadata.score' is NaN, not a JSON number" in done.stdout
    assert "docs/r.jsonl:3: 'metadata.scores[1]' is Infinity" in done.stdout
    assert "docs/array.json[1]: 'score' is -Infinity" in done.stdout
    assert "docs/one.json: 'metadata.ratio' is NaN" in done.stdout
    found = cli("query", "water", "--index", str(index), "--filter", "year=2021", "--json")
    assert found.returncode == 0, found.stdout + found.stderr
    assert [hit["key"] for hit in json.loads(found.stdout)] == [f"{docs}/r.jsonl#a"]
    assert {record["external_id"] for record in _exported(index)} == {"a", "y"}
    assert cli("doctor", "--index", str(index)).returncode == 0


def test_doctor_finds_and_repairs_nan_metadata_written_by_an_earlier_release(
    tmp_path: Path,
) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    _records(
        docs / "r.jsonl",
        '{"id": "a", "text": "Water boils at 100 C.", "metadata": {"year": 2021}}',
        '{"id": "b", "text": "Cats sleep a lot.", "metadata": {"year": 2020}}',
    )
    assert _ingest(docs, index).returncode == 0
    with sqlite3.connect(index / "ragkit.sqlite") as db:  # as an earlier release stored it
        db.execute(
            "UPDATE documents SET metadata = ? WHERE external_id = 'b'",
            ('{"year": 2020, "score": NaN, "tags": ["x", Infinity]}',),
        )
    db.close()
    found = cli("query", "cats", "--index", str(index), "--filter", "year=2020")
    assert found.returncode == 4  # IndexDamagedError: doctor --repair mends it
    assert f"run `ragkit doctor --index {index} --repair`" in found.stderr
    assert "delete it" not in found.stderr
    exported = cli("export", "--index", str(index))
    assert exported.returncode == 4 and "NaN or Infinity" in exported.stderr
    checked = cli("doctor", "--index", str(index))
    assert checked.returncode == 1
    assert "metadata of 1 document(s) is not JSON" in checked.stdout
    assert f"{docs}/r.jsonl#b" in checked.stdout
    repaired = cli("doctor", "--index", str(index), "--repair")
    assert repaired.returncode == 0, repaired.stdout
    assert "r.jsonl#b': dropped non-finite metadata score, tags[1]" in repaired.stdout
    found = cli("query", "cats", "--index", str(index), "--filter", "year=2020", "--json")
    assert found.returncode == 0, found.stderr
    assert [hit["key"] for hit in json.loads(found.stdout)] == [f"{docs}/r.jsonl#b"]
    metadata = {record["external_id"]: record["metadata"] for record in _exported(index)}
    assert metadata == {"a": {"year": 2021}, "b": {"year": 2020, "tags": ["x"]}}


# -- item 11: unpaired surrogates --------------------------------------------------------------


def test_an_unpaired_surrogate_skips_its_record_and_the_others_are_committed(
    tmp_path: Path,
) -> None:
    records = [
        {"id": "good-1", "text": "Water boils at 100 C."},
        {"id": "text", "text": "bad \udc80 byte"},
        {"id": "id-\udc80", "text": "Cats sleep."},
        {"id": "title", "text": "Owls hunt.", "title": "t\udc80"},
        {"id": "key", "text": "Fog lifts.", "metadata": {"k\udc80": 1}},
        {"id": "value", "text": "Ice melts.", "metadata": {"tags": ["ok", "v\udc80"]}},
        {"id": "good-2", "text": "Rivers carry sediment."},
    ]
    with Index.open(tmp_path / "index", create=True, model=MODEL) as index:
        report = index.add(records)
        assert sorted(d.key for d in index.documents()) == ["good-1", "good-2"]
        with pytest.raises(RagkitError, match="source '<\\\\udc80>' holds an unpaired"):
            index.add(records, source="<\udc80>")
    reasons = {skipped.path: skipped.reason for skipped in report.skipped}
    unpaired = "holds an unpaired surrogate U+DC80 at character"
    assert reasons == {
        "record 2 (id 'text')": f"'text' {unpaired} 4 (not text; fix the source's encoding)",
        "record 3 (id 'id-\\udc80')": f"'id' {unpaired} 3 (not text; fix the source's encoding)",
        "record 4 (id 'title')": f"'title' {unpaired} 1 (not text; fix the source's encoding)",
        "record 5 (id 'key')": (
            f"'metadata' key 'k\\udc80' {unpaired} 1 (not text; fix the source's encoding)"
        ),
        "record 6 (id 'value')": (
            f"'metadata.tags[1]' {unpaired} 1 (not text; fix the source's encoding)"
        ),
    }


def test_langchain_add_texts_with_a_bad_text_or_metadata_keeps_the_good_texts(
    tmp_path: Path,
) -> None:
    pytest.importorskip("langchain_core")
    from ragkit.integrations.langchain import RagkitVectorStore

    store = RagkitVectorStore(index=tmp_path / "index", model=MODEL)
    texts = ["Water boils at 100 C.", "bad \udc80 byte", "Cats sleep.", "Owls hunt."]
    metadatas = [{}, {}, {}, {"score": float("nan")}]
    with pytest.raises(RagkitError) as raised:
        store.add_texts(texts, metadatas=metadatas, ids=["a", "b", "c", "d"])
    assert str(raised.value) == (
        "2 record(s) not indexed: record 2 (id 'b'): 'text' holds an unpaired surrogate U+DC80 "
        "at character 4 (not text; fix the source's encoding); record 4 (id 'd'): "
        "'metadata.score' is NaN, not a JSON number (write null or leave the field out)"
    )
    assert sorted(d.key for d in store.index.documents()) == ["a", "c"]


# -- item 14: an index folder among the documents ----------------------------------------------


def test_documents_folder_given_as_its_own_index_is_refused_before_writing(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "d7"
    docs.mkdir()
    (docs / "a.txt").write_text("Water boils at 100 C.\n")
    for index in (docs, docs / "."):
        done = ragkit("ingest", str(docs), "--index", str(index), "--model", MODEL)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.strip().count("\n") == 0
        assert "the folder of documents cannot be the index folder" in done.stderr
        assert sorted(p.name for p in docs.iterdir()) == ["a.txt"]
    inside = ragkit("ingest", str(docs / "a.txt"), "--index", str(docs), "--model", MODEL)
    assert inside.returncode == 2 and "inside the index folder" in inside.stderr
    assert sorted(p.name for p in docs.iterdir()) == ["a.txt"]


def test_an_index_folder_inside_a_root_is_listed_as_not_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "d7").mkdir(parents=True)
    (root / "b.txt").write_text("Cats sleep most of the day.\n")
    (root / "d7" / "a.txt").write_text("Water boils at 100 C.\n")
    with Index.open(root / "d7", create=True, model=MODEL):  # an index made there earlier
        pass
    done = _ingest(root, root / "index")  # the index being written is passed over silently
    assert done.returncode == 0, done.stdout + done.stderr
    assert "root/d7: a ragkit index folder, not documents" in done.stdout
    assert "root/index" not in done.stdout


# -- item 15: a full disk ------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (needs root and mount); skipped where it cannot be mounted."""
    mount = tmp_path / "small"
    mount.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
            capture_output=True,
            check=False,
        )
    except FileNotFoundError:
        pytest.skip("no mount command")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_during_a_commit_is_one_error_and_the_index_is_unchanged(
    small_disk: Path,
) -> None:
    folder = small_disk / "index"
    words = " ".join(f"word{n}" for n in range(400))
    with Index.open(folder, create=True, model=MODEL, chunker="fixed", chunk_tokens=32) as index:
        index.add([{"id": "first", "text": "Water boils at 100 C."}])
        filler = small_disk / "filler"
        with open(filler, "wb") as stream:  # leave about 16 KiB free
            stream.write(b"\0" * max(0, shutil.disk_usage(small_disk).free - 16 * 2**10))
        records = [{"id": f"r{n}", "text": f"{words} {n}"} for n in range(40)]
        with pytest.raises(RagkitError) as raised:
            index.add(records)
        message = str(raised.value)
        assert message.startswith(f"{folder}: the disk is full (")
        assert "iB free there; this write needs about" in message
        assert message.endswith("(nothing was committed: generation 1 is unchanged)")
        assert "\n" not in message
        filler.unlink()
        assert [d.key for d in index.documents()] == ["first"]
        assert index.search("water", k=1)[0].key == "first"
    assert cli("doctor", "--index", str(folder)).returncode == 0


def test_faiss_finding_the_disk_full_is_one_line_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragkit.store.folder import vectors

    docs, index = tmp_path / "docs", tmp_path / "index"
    _records(docs / "r.jsonl", '{"id": "a", "text": "Water boils at 100 C."}')
    assert _ingest(docs, index).returncode == 0
    _records(docs / "s.jsonl", '{"id": "b", "text": "Cats sleep a lot."}')

    def full(index: object, path: str) -> None:
        raise RuntimeError(
            "Error in void faiss::write_index(const Index*, IOWriter*, int) at index_write.cpp"
            f":499: Error: 'ret == (size * 4)' failed: write error in {path}: 2011091 != "
            "30720000 (No space left on device)"
        )

    monkeypatch.setattr(vectors.faiss, "write_index", full)
    done = _ingest(docs, index)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {index}: the disk is full (")
    assert "Traceback" not in done.stderr and "faiss::" not in done.stderr
    monkeypatch.undo()
    assert [d["external_id"] for d in _exported(index)] == ["a"]
    assert cli("doctor", "--index", str(index)).returncode == 0


def test_a_full_disk_after_the_commit_is_one_line_naming_the_committed_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from ragkit.search.sparse import SparseIndex

    docs, index = tmp_path / "docs", tmp_path / "index"
    _records(docs / "r.jsonl", '{"id": "a", "text": "Water boils at 100 C."}')

    def full(self: SparseIndex, folder: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(folder))

    monkeypatch.setattr(SparseIndex, "save", full)
    done = _ingest(docs, index)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {index}: the disk is full (")
    assert "(generation 1 is the last committed; once space is free" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    monkeypatch.undo()
    assert [d["external_id"] for d in _exported(index)] == ["a"]


# -- item 16: NUL in a text, malformed framework filters ---------------------------------------


def test_ls_counts_the_characters_of_a_text_holding_nul(tmp_path: Path) -> None:
    docs, index = tmp_path / "docs", tmp_path / "index"
    text = "abc\u0000defghijklmnopqr"
    assert len(text) == 19
    _records(docs / "r.jsonl", json.dumps({"id": "n", "text": text}))
    assert _ingest(docs, index).returncode == 0
    listed = cli("ls", "--index", str(index), "--json")
    assert [entry["characters"] for entry in json.loads(listed.stdout)] == [19]


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    folder = tmp_path_factory.mktemp("filters") / "index"
    with Index.open(folder, create=True, model=MODEL) as index:
        index.add([{"id": "a", "text": "Water boils.", "metadata": {"year": 2021}}])
        yield index


@pytest.mark.parametrize(
    ("filters", "said"),
    [
        ({"field": "meta.year", "operator": "=="}, "no 'value'"),
        ({"field": "meta.year", "value": 2021}, "no 'operator'"),
        ({"operator": "AND", "conditions": "meta.year"}, "'conditions' is a list"),
        ({"operator": "AND", "conditions": [1]}, "a condition is a dict"),
        ({"operator": "AND", "conditions": [{"field": "meta.year", "value": 1}]}, "a condition"),
        ({"field": "meta.year", "operator": "~=", "value": 2021}, "use ==, !=, >"),
        ({"field": "meta.year", "operator": "==", "value": [2021]}, "in takes a list"),
        ({"field": "meta.year", "operator": "in", "value": 2021}, "give a list"),
        ({"field": "meta.year", "operator": ">=", "value": "2000"}, "compare with a number"),
    ],
)
def test_malformed_haystack_filters_are_errors(
    small_index: Index, filters: dict, said: str
) -> None:
    pytest.importorskip("haystack")
    from ragkit.integrations.haystack import RagkitRetriever

    retriever = RagkitRetriever(index=small_index)
    with pytest.raises(RagkitError, match=said):
        retriever.run(query="water", filters=filters)


@pytest.mark.parametrize(
    ("filters", "said"),
    [
        ({"year": {}}, "an empty operator dict"),
        ({"$and": [1]}, "give a list of filter dicts"),
        ({"$and": "year"}, "give a list of filter dicts"),
        ({1: "x"}, "name a metadata field"),
        ({"year": {"$regex": "20.."}}, "no operator .\\$regex"),
        ({"year": {"$eq": [2021]}}, "in takes a list"),
        ({"year": {"$like": "20%"}}, "ragkit matches substrings"),
        ({"year": {"$gte": "recent"}}, "compare with a number"),
    ],
)
def test_malformed_langchain_filters_are_errors(
    small_index: Index, filters: dict, said: str
) -> None:
    pytest.importorskip("langchain_core")
    from ragkit.integrations.langchain import RagkitVectorStore

    store = RagkitVectorStore(index=small_index)
    with pytest.raises(RagkitError, match=said):
        store.similarity_search("water", filter=filters)


@pytest.mark.parametrize(
    ("operator", "value", "said"),
    [
        ("==", [2021], "in takes a list"),
        ("in", 2021, "give a list"),
        ("any", 2021, "give a list"),
        (">=", "recent", "compare with a number"),
    ],
)
def test_malformed_llama_index_filters_are_errors(
    small_index: Index, operator: str, value: object, said: str
) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

    from ragkit.integrations.llama_index import RagkitRetriever

    filters = MetadataFilters(filters=[MetadataFilter(key="year", value=value, operator=operator)])
    with pytest.raises(RagkitError, match=said):
        RagkitRetriever(index=small_index, filters=filters).retrieve("water")
