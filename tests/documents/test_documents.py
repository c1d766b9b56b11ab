from __future__ import annotations

from pathlib import Path

from pypdf import PdfWriter

from ragkit.documents import load_paths


def test_markdown_blocks_and_offsets(corpus: Path) -> None:
    result = load_paths([corpus / "water.md"])
    document = result.documents[0]
    kinds = [b.kind for b in document.blocks]
    assert kinds == ["heading", "paragraph", "list"]
    assert document.text[document.blocks[0].start : document.blocks[0].end] == "# Water"
    assert document.title == "Water"
    assert document.script == "Latn" and document.language == "en"
    assert len(document.content_hash) == 64


def test_recursive_discovery_and_languages(corpus: Path) -> None:
    result = load_paths([corpus])
    keys = sorted(Path(d.key).name for d in result.documents)
    assert keys == ["cats.txt", "prayer.txt", "records.jsonl#r1", "records.jsonl#r2", "water.md"]
    arabic = next(d for d in result.documents if d.source.endswith("prayer.txt"))
    assert (arabic.script, arabic.language) == ("Arab", "ar")
    assert result.skipped == []


def test_jsonl_records_and_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"id": 1, "title": "T", "text": "Body text.", "metadata": {"k": "v"}}\n'
        "{not json\n"
        '{"text": "no id"}\n'
        "[1, 2]\n",
        encoding="utf-8",
    )
    result = load_paths([path])
    assert [d.external_id for d in result.documents] == ["1"]
    assert result.documents[0].text == "T\n\nBody text."
    assert result.documents[0].metadata == {"k": "v"}
    reasons = [s.reason for s in result.skipped]
    assert len(reasons) == 3
    assert reasons[0].startswith("invalid JSON")
    assert all(s.path.startswith(str(path) + ":") for s in result.skipped)


def test_html_structure(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text(
        "<html><head><title>Ignored head</title><style>p{}</style></head><body>"
        "<h1>Heading</h1><p>First <b>para</b>.</p><script>var x=1;</script>"
        "<ul><li>one</li><li>two</li></ul><table><tr><td>a</td><td>b</td></tr></table>"
        "</body></html>",
        encoding="utf-8",
    )
    document = load_paths([tmp_path]).documents[0]
    pieces = [(b.kind, document.text[b.start : b.end]) for b in document.blocks]
    assert pieces == [
        ("heading", "Heading"),
        ("paragraph", "First para."),
        ("list", "one"),
        ("list", "two"),
        ("table", "a b"),
    ]
    assert "var x" not in document.text and "Ignored" not in document.text


def test_pdf_text(tmp_path: Path) -> None:
    from pypdf.generic import DictionaryObject, NameObject, StreamObject

    writer = PdfWriter()
    page = writer.add_blank_page(width=300, height=200)
    font = writer._add_object(
        DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
    )
    resources = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    page[NameObject("/Resources")] = resources
    content = StreamObject()
    content.set_data(b"BT /F1 12 Tf 20 100 Td (Pressure of the gas.) Tj ET")
    page[NameObject("/Contents")] = writer._add_object(content)
    with (tmp_path / "doc.pdf").open("wb") as handle:
        writer.write(handle)
    document = load_paths([tmp_path]).documents[0]
    assert "Pressure of the gas." in document.text


def test_broken_files_are_skipped_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "good.txt").write_text("Fine text.", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))  # read as cp1252
    (tmp_path / "junk.txt").write_bytes(bytes(range(1, 256)) * 3)
    (tmp_path / "binary.md").write_bytes(b"\x00\x01\x02\x03" * 100)
    (tmp_path / "empty.txt").write_text("   \n", encoding="utf-8")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj <<\n")
    (tmp_path / "broken.html").write_bytes(b"<p>\x81\x8d\x8f\x90\x9d\x01 bad</p>")
    (tmp_path / "broken.jsonl").write_text("{oops\n", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    result = load_paths([tmp_path, tmp_path / "missing.txt"])
    assert sorted(Path(d.source).name for d in result.documents) == ["good.txt", "latin1.txt"]
    reasons = {Path(s.path.split(":")[0]).name: s.reason for s in result.skipped}
    assert "not valid UTF-8" in reasons["junk.txt"]
    assert "binary" in reasons["binary.md"]
    assert "empty" in reasons["empty.txt"]
    assert "PDF" in reasons["broken.pdf"]
    assert "UTF-8" in reasons["broken.html"]
    assert "invalid JSON" in reasons["broken.jsonl"]
    assert "unsupported" in reasons["image.png"]
    assert "no such file" in reasons["missing.txt"]
