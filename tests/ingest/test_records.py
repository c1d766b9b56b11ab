"""Records from Python (``Index.add``) and JSONL on standard input (``ragkit ingest -``): the
same pipeline as files, ids as keys, unchanged records skipped, bad records reported alone,
prune limited to one records source, a given language kept."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import cli
from ragkit import Index, RagkitError, Record
from ragkit.cli import app
from ragkit.documents.given import Unreadable, record_documents

MODEL = "all-minilm-l6-v2"
FAQ = [
    {
        "id": "boil",
        "text": "Water boils at 100 degrees Celsius at sea level.",
        "metadata": {"year": 2021},
    },
    Record("melt", "Ice melts at zero degrees.", {"year": 1999}, title="Ice"),
    {"id": 7, "text": "Cats sleep most of the day."},
    {"id": "ar-1", "text": "الماء يغلي عند مئة درجة", "language": "ar"},
]


@pytest.fixture(scope="module")
def faq_index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """One index of the FAQ records, shared by the tests that only read it."""
    index = Index.open(tmp_path_factory.mktemp("faq") / "index", create=True, model=MODEL)
    report = index.add(FAQ)
    assert (report.documents_added, report.skipped) == (4, [])
    return index


@pytest.fixture
def index(tmp_path: Path, faq_index: Index) -> Index:
    """A fresh index sharing the loaded encoder of ``faq_index`` (no model load per test)."""
    fresh = Index.open(tmp_path / "index", create=True, model=MODEL)
    fresh._encoder = faq_index.encoder
    return fresh


def test_records_are_documents_keyed_by_id(faq_index: Index) -> None:
    hits = faq_index.search("boiling water", k=4)
    top = hits[0]
    assert (top.key, top.document_id, top.source) == ("boil", "boil", "<records>")
    assert top.metadata == {"year": 2021}
    assert top.text == FAQ[0]["text"][top.start : top.end]  # type: ignore[index]
    assert {d.key for d in faq_index.documents()} == {"boil", "melt", "7", "ar-1"}
    assert faq_index.documents("melt")[0].title == "Ice"


def test_short_queries_filters_and_given_language(faq_index: Index) -> None:
    assert faq_index.search("ice", k=1, mode="sparse")[0].key == "melt"
    recent = faq_index.search("degrees", k=4, filters={"year": {">=": 2000}})
    assert [hit.key for hit in recent] == ["boil"]
    arabic = faq_index.search("الماء", k=1, mode="sparse")[0]
    assert (arabic.key, arabic.language) == ("ar-1", "ar")
    cats = faq_index.search("cats", k=4, filters={"source": "<records>"})
    assert cats[0].key == "7"


def test_unchanged_records_are_skipped_and_changed_ones_reindexed(index: Index) -> None:
    index.add(FAQ[:2])
    again = index.add(FAQ[:2])
    assert (again.documents_added, again.documents_unchanged) == (0, 2)
    changed = index.add([{**FAQ[0], "metadata": {"year": 2022}}])  # type: ignore[dict-item]
    assert (changed.documents_added, changed.documents_unchanged) == (1, 0)
    assert index.search("boiling", k=1)[0].metadata == {"year": 2022}


def test_bad_records_are_reported_and_the_rest_indexed(index: Index) -> None:
    report = index.add(
        [
            {"id": "ok", "text": "Bicycles have two wheels."},
            {"id": "empty", "text": "  "},
            {"id": "bytes", "text": b"not text"},
            {"text": "no id"},
            {"id": "ok", "text": "the same id again"},
            {"id": "extra", "text": "x", "body": "y"},
            {"id": "meta", "text": "x", "metadata": {"when": object()}},
            {"id": "lang", "text": "x", "language": "xx"},
            "just a string",
        ]
    )
    assert report.documents_added == 1
    reasons = {entry.path: entry.reason for entry in report.skipped}
    assert reasons == {
        "record 2 (id 'empty')": "empty text",
        "record 3 (id 'bytes')": "'text' is a bytes, not text",
        "record 4": "no 'id' (text or a whole number)",
        "record 5 (id 'ok')": "id 'ok' already given by record 1",
        "record 6 (id 'extra')": "unknown field(s) 'body' (a record has id, text, metadata, "
        "title, language; put other values in 'metadata')",
        "record 7 (id 'meta')": reasons["record 7 (id 'meta')"],
        "record 8 (id 'lang')": "'language' 'xx': not a language ragkit knows; use an ISO 639 "
        "code such as en, ar, fa, ur, ckb, am, ti",
        "record 9": "a str, not a record (a ragkit.Record or a dict with 'id' and 'text')",
    }
    assert reasons["record 7 (id 'meta')"].startswith("'metadata' is not JSON")
    assert [d.key for d in index.documents()] == ["ok"]


def test_prune_removes_only_this_sources_missing_records(index: Index, corpus: Path) -> None:
    index.ingest([corpus / "water.md"])
    index.add([{"id": "a", "text": "Alpha text."}, {"id": "b", "text": "Beta text."}])
    index.add([{"id": "c", "text": "Crawled page."}], source="<crawl>")
    kept = index.add([{"id": "a", "text": "Alpha text."}, {"id": "b", "text": ""}], prune=True)
    assert kept.documents_removed == 0  # b's new version is bad: its stored one stays
    pruned = index.add([{"id": "a", "text": "Alpha text."}], prune=True)
    assert pruned.documents_removed == 1
    keys = {d.key for d in index.documents()}
    assert keys == {"a", "c", str((corpus / "water.md").resolve())}


def test_prune_removes_nothing_when_an_entry_had_no_id(index: Index) -> None:
    index.add([{"id": "a", "text": "Alpha text."}, {"id": "b", "text": "Beta text."}])
    given = [{"id": "a", "text": "Alpha text."}, Unreadable("line 2", "invalid JSON")]
    assert index.add(given, prune=True).documents_removed == 0
    assert {d.key for d in index.documents()} == {"a", "b"}


def test_file_prune_never_removes_records(index: Index, corpus: Path, monkeypatch) -> None:
    monkeypatch.chdir(corpus)  # "<records>" read as a relative path would lie under the root
    index.add([{"id": "a", "text": "Alpha text."}])
    index.ingest([corpus / "water.md"])
    assert index.ingest([corpus], prune=True).documents_removed == 0
    assert "a" in {d.key for d in index.documents()}


def test_an_id_held_by_another_source_is_refused(index: Index) -> None:
    index.add([{"id": "a", "text": "Alpha text."}], source="<crawl>")
    report = index.add([{"id": "a", "text": "Another alpha."}])
    assert [(s.path, s.reason) for s in report.skipped] == [
        ("id 'a'", "document key already taken by <crawl>; give the record another id")
    ]


def test_delete_by_id_never_reads_the_id_as_a_glob(index: Index, tmp_path: Path) -> None:
    index.add(
        [{"id": i, "text": f"Text number {n}."} for n, i in enumerate(["*", "a?", "ab", "b"])]
    )
    assert index.delete(["*"]) == ["*"]  # the record "*" alone, as docs/records.md shows
    assert index.delete("a?") == ["a?"]
    assert sorted(d.key for d in index.documents()) == ["ab", "b"]
    with pytest.raises(RagkitError, match=r"no document has the id '\*'; nothing removed"):
        index.delete(["b", "*"])
    assert sorted(d.key for d in index.documents()) == ["ab", "b"]
    assert index.delete(["b", "*"], missing_ok=True) == ["b"]
    assert index.delete_matching(["a*"]) == ["ab"]  # patterns have their own method
    assert index.documents() == []


def test_rm_by_id_from_the_cli(index: Index) -> None:
    index.add([{"id": i, "text": f"Text number {n}."} for n, i in enumerate(["*", "ab"])])
    result = cli("rm", "--id", "*", "--index", str(index.store.location))
    assert result.returncode == 0, result.stderr
    index.store.refresh()
    assert [d.key for d in index.documents()] == ["ab"]
    assert cli("rm", "--id", "*", "--index", str(index.store.location)).returncode == 2


def test_delete_by_id_and_given_language_survives_reanalyze(index: Index) -> None:
    index.add([Record("short", "نعم", language="fa"), Record("b", "Beta text.")])
    assert index.delete(["b"]) == ["b"]
    index.reanalyze()
    assert [(d.key, d.language) for d in index.documents()] == [("short", "fa")]


def test_an_application_logging_at_debug_gets_no_bm25s_lines(
    index: Index, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # as logging.basicConfig(level=logging.DEBUG) does
    index.add([{"id": "a", "text": "Alpha text."}, {"id": "b", "text": "Beta text."}])
    index.search("alpha", k=1)
    assert index.delete(["b"]) == ["b"]
    assert [r.getMessage() for r in caplog.records if r.name.startswith("bm25s")] == []
    assert any(r.name.startswith("ragkit") for r in caplog.records)  # ragkit's own still log


def test_a_generator_is_committed_while_it_goes_on(tmp_path: Path, faq_index: Index) -> None:
    """``Index.add`` over a slow feed: each window of ``commit_every_seconds`` is committed
    (searchable from another handle) before the feed gives its next record."""
    index = Index.open(tmp_path / "index", create=True, model=MODEL, commit_every_seconds=1.0)
    index._encoder = faq_index.encoder
    seen: list[set[str]] = []

    def feed() -> Iterator[dict[str, str]]:
        yield {"id": "a", "text": "Alpha waves are slow."}
        yield {"id": "b", "text": "Beta waves are faster."}
        time.sleep(1.2)
        yield {"id": "c", "text": "Gamma waves are the fastest."}  # closes the window
        with Index.open(index.store.location) as reader:
            seen.append({entry.key for entry in reader.documents()})
        yield {"id": "d", "text": "Delta waves come in deep sleep."}

    report = index.add(feed())
    assert seen == [{"a", "b", "c"}]
    assert (report.records_seen, report.documents_added, report.generation) == (4, 4, 2)


def test_progress_and_the_writer_lock(index: Index) -> None:
    seen: list[tuple[str, int, int]] = []
    index.add([{"id": "a", "text": "Alpha text."}], progress=lambda *step: seen.append(step))
    assert ("documents", 1, 1) in seen
    other = Index.open(index.store.location)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with other.store.writing(True):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(30)
    try:
        with pytest.raises(RagkitError, match="writer"):
            index.add([{"id": "b", "text": "Beta text."}], wait=False)
    finally:
        release.set()
        holder.join()
    assert index.add([{"id": "b", "text": "Beta text."}], wait=5).documents_added == 1


def test_add_refuses_what_is_not_records(index: Index) -> None:
    with pytest.raises(RagkitError, match="iterable of records"):
        index.add("some text")
    with pytest.raises(RagkitError, match="iterable of records"):
        index.add({"id": "a", "text": "A."})
    with pytest.raises(RagkitError, match="angle brackets"):
        index.add([{"id": "a", "text": "A."}], source="crawl")


def test_record_documents_hash_every_field() -> None:
    plain = record_documents([{"id": "a", "text": "A."}]).documents[0]
    titled = record_documents([{"id": "a", "text": "A.", "title": "T"}]).documents[0]
    assert plain.content_hash != titled.content_hash


def test_ingest_reads_jsonl_records_from_stdin(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "a", "text": "Water boils at 100 degrees."}),
        "",
        "{oops",
        json.dumps({"id": "b", "text": "Ice melts.", "metadata": {"year": 2020}}),
        json.dumps({"id": "c"}),
    ]
    target = str(tmp_path / "index")
    runner = CliRunner()
    result = runner.invoke(
        app, ["ingest", "-", "--index", target, "--model", MODEL], input="\n".join(lines)
    )
    assert result.exit_code == 1, result.output
    assert "records seen 4 · documents added 2" in result.output
    assert "line 3: invalid JSON" in result.output
    assert "line 5 (id 'c'): no 'text' field" in result.output
    listed = runner.invoke(app, ["ls", "--index", target, "--json"])
    assert {"a", "b"} <= {entry["key"] for entry in _json_entries(listed.output)}
    pruned = runner.invoke(
        app, ["ingest", "-", "--index", target, "--prune"], input=lines[0] + "\n"
    )
    assert pruned.exit_code == 0, pruned.output
    assert "removed 1" in pruned.output


def test_stdin_and_a_jsonl_file_refuse_the_same_lines_and_go_on(tmp_path: Path) -> None:
    deep = 100_000
    lines = [
        "\ufeff" + json.dumps({"id": "bom", "text": "The first line starts with a BOM."}),
        "[" * deep + "]" * deep,
        '{"a":' * deep + "1" + "}" * deep,
        '{"id": "meta", "text": "Deep.", "metadata": {"a": ' + "[" * 150 + "]" * 150 + "}}",
        '{"id": "lone", "text": "x\\udc80"}',
        json.dumps({"id": "ok", "text": "Water boils at 100 degrees."}),
    ]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    (tmp_path / "records.jsonl").write_bytes(data)
    runner = CliRunner()
    piped = runner.invoke(
        app, ["ingest", "-", "--index", str(tmp_path / "a"), "--model", MODEL], input=data
    )
    from_file = runner.invoke(
        app,
        ["ingest", str(tmp_path / "records.jsonl"), "--index", str(tmp_path / "b")]
        + ["--model", MODEL],
    )
    for result in (piped, from_file):
        assert result.exit_code == 1, result.output  # some lines refused, the rest committed
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "documents added 2" in result.output
        assert result.output.count("nested deeper than 100 levels") == 3
        assert "unpaired surrogate" in result.output
    listed = runner.invoke(app, ["ls", "--index", str(tmp_path / "a"), "--json"])
    assert {entry["key"] for entry in _json_entries(listed.output)} == {"bom", "ok"}
    reasons = [line.split(": ", 1)[1] for line in piped.output.splitlines() if "line " in line]
    in_file = [
        line.split(": ", 1)[1] for line in from_file.output.splitlines() if ".jsonl:" in line
    ]
    assert reasons == in_file


def test_ingest_stdin_option_mistakes(tmp_path: Path) -> None:
    runner = CliRunner()
    target = str(tmp_path / "index")
    mixed = runner.invoke(app, ["ingest", "-", str(tmp_path), "--index", target])
    assert mixed.exit_code == 2 and "cannot be mixed" in mixed.output
    glob = runner.invoke(app, ["ingest", "-", "--index", target, "--include", "*.md"])
    assert glob.exit_code == 2 and "choose files" in glob.output
    source = runner.invoke(app, ["ingest", str(tmp_path), "--index", target, "--source", "<x>"])
    assert source.exit_code == 2 and "standard input" in source.output
    assert not (tmp_path / "index").exists()


def _json_entries(output: str) -> list[dict[str, object]]:
    """``ragkit ls --json`` output as a list (one array, or one object per line)."""
    text = output.strip()
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_the_records_page_example_runs(tmp_path: Path, monkeypatch, capsys) -> None:
    page = (Path(__file__).parents[2] / "docs" / "records.md").read_text(encoding="utf-8")
    example = page.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/records.md", "exec"), {})  # noqa: S102 - the page's own code
    printed = capsys.readouterr().out.splitlines()
    assert printed == ["3 []", "faq-1 <records> {'year': 2021}"]
