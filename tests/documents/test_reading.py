"""What an ingest reads: reST, JSON, CSV/TSV, extensionless text, include/exclude globs, and
unsupported files that are reported without failing the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MODEL, ragkit
from ragkit.documents import LoadOptions, load_paths


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "drafts").mkdir(parents=True)
    (folder / "guide.rst").write_text(
        "=====\nGuide\n=====\n\nIntro text.\n\nInstall\n-------\nRun this::\n\n    pip install x\n",
        encoding="utf-8",
    )
    (folder / "api.rst.txt").write_text("API\n===\n\nThe API reference.\n", encoding="utf-8")
    (folder / "README").write_text("Read me first: water boils at 100 C.\n", encoding="utf-8")
    (folder / "blob").write_bytes(bytes(range(256)))
    (folder / "note.json").write_text(
        json.dumps({"title": "Note", "text": "Cats sleep a lot.", "year": 2020}),
        encoding="utf-8",
    )
    (folder / "list.json").write_text(
        json.dumps([{"id": "a", "text": "First."}, {"text": "Second."}, {"id": "a", "text": "x"}]),
        encoding="utf-8",
    )
    (folder / "faq.csv").write_text(
        "id,question,answer\nq1,Boiling?,Water boils at 100 C.\nq2,Ice?,\n", encoding="utf-8"
    )
    (folder / "terms.tsv").write_text("term\ttext\nH2O\tWater is H2O.\n", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG")
    (folder / "drafts" / "wip.md").write_text("# Draft\n\nNot ready.\n", encoding="utf-8")
    return folder


def test_loaders_read_rst_json_tables_and_extensionless(mixed: Path) -> None:
    result = load_paths([mixed])
    by_key = {Path(d.key).name: d for d in result.documents}
    guide = by_key["guide.rst"]
    assert guide.title == "Guide"
    assert [b.kind for b in guide.blocks] == [
        "heading",
        "paragraph",
        "heading",
        "paragraph",
        "code",
    ]
    assert by_key["api.rst.txt"].title == "API"
    assert "water boils" in by_key["README"].text
    note = by_key["note.json"]
    assert (note.text, note.title, note.metadata) == ("Cats sleep a lot.", "Note", {"year": 2020})
    assert by_key["list.json#a"].text == "First." and by_key["list.json#2"].text == "Second."
    assert by_key["terms.tsv#2"].metadata == {"term": "H2O"}
    reasons = {Path(s.path).name: (s.reason, s.unsupported) for s in result.skipped}
    assert reasons["image.png"] == ("unsupported file type '.png'", True)
    assert reasons["blob"] == ("no extension and not text", True)
    assert reasons["list.json[3]"] == ("id 'a' already used at [1]", False)
    assert reasons["faq.csv"][0].startswith("no 'text' column (columns: id, question, answer)")
    answers = load_paths([mixed / "faq.csv"], LoadOptions(text_field="answer"))
    assert [d.key.rsplit("#")[-1] for d in answers.documents] == ["q1"]
    assert answers.documents[0].metadata == {"question": "Boiling?"}
    assert [s.reason for s in answers.skipped] == ["empty text"]


def test_missing_text_column_names_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    (skipped,) = load_paths([path]).skipped
    assert (
        skipped.reason
        == "no 'text' column (columns: a, b); choose the text column with --text-field"
    )
    assert not skipped.unsupported


def test_include_exclude_globs(mixed: Path) -> None:
    def names(options: LoadOptions) -> list[str]:
        return sorted(Path(d.source).name for d in load_paths([mixed], options).documents)

    assert names(LoadOptions(include=("*.rst", "*.md"))) == ["guide.rst", "wip.md"]
    assert "wip.md" not in names(LoadOptions(exclude=("drafts",)))
    excluded = load_paths([mixed], LoadOptions(exclude=("*.png", "blob")))
    assert not any(s.unsupported for s in excluded.skipped)  # excluded files are not reported


def test_cli_unsupported_files_do_not_fail_the_run(mixed: Path, tmp_path: Path) -> None:
    (mixed / "list.json").unlink()
    (mixed / "faq.csv").unlink()
    index = str(tmp_path / "index")
    run = ragkit("ingest", str(mixed), "--index", index, "--model", MODEL, "--exclude", "drafts")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 not read (unsupported type)" in run.stdout and "image.png" in run.stdout
    assert "documents added 5" in run.stdout
    strict = ragkit("ingest", str(mixed), "--index", index, "--strict", "--include", "*.png")
    assert strict.returncode == 1 and "1 not read" in strict.stdout
    (mixed / "bad.txt").write_bytes(b"\xff\xfe\xfa not utf8 \x00\x00")
    failed = ragkit("ingest", str(mixed / "bad.txt"), "--index", index)
    assert failed.returncode == 1 and "1 skipped" in failed.stdout
