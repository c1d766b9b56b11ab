"""One reader per file type: plain text and Markdown blocks, HTML, PDF, JSONL records.

Each reader turns a file's bytes into text with block boundaries (``text_blocks``,
``html_text``, ``pdf_text``) or, for JSONL, into one document per record
(``jsonl_documents``); :func:`ragkit.documents.load.load_file` picks the reader by suffix.

Example:
    >>> [b.kind for b in text_blocks("# Title\\n\\nFirst paragraph.", markdown=True)]
    ['heading', 'paragraph']
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

from ragkit.documents.checks import record_problem
from ragkit.documents.discovery import SkippedFile, display_path, document_key
from ragkit.documents.encodings import decode_text
from ragkit.documents.jsonl import parse_line
from ragkit.documents.types import Block, Document, LoadResult, content_hash
from ragkit.errors import EmptyFileError, RagkitError

_BLANK_LINES = re.compile(r"\n[ \t]*\n+")
_MD_HEADING = re.compile(r"^(#{1,6}\s|\S.*\n[=-]{3,}\s*$)")
_MD_LIST = re.compile(r"^\s*([-*+]|\d+[.)])\s")


def _classify_md(chunk: str) -> str:
    if chunk.startswith(("```", "    ")):
        return "code"
    if _MD_HEADING.match(chunk):
        return "heading"
    if chunk.lstrip().startswith("|"):
        return "table"
    if _MD_LIST.match(chunk):
        return "list"
    return "paragraph"


def text_blocks(text: str, markdown: bool = False) -> list[Block]:
    """Blocks separated by blank lines; Markdown headings, lists, tables and code are typed."""
    blocks: list[Block] = []
    position = 0
    for separator in [*_BLANK_LINES.finditer(text), None]:
        end = separator.start() if separator else len(text)
        piece = text[position:end]
        stripped = piece.strip()
        if stripped:
            start = position + piece.index(stripped[0])
            stop = start + len(stripped)
            kind = _classify_md(stripped) if markdown else "paragraph"
            if markdown and kind == "heading" and "\n" in stripped and stripped.startswith("#"):
                first = stripped.index("\n")
                blocks.append(Block("heading", start, start + first))
                blocks.append(Block("paragraph", start + first + 1, stop))
                position = separator.end() if separator else len(text)
                continue
            blocks.append(Block(kind, start, stop))
        position = separator.end() if separator else len(text)
    return blocks


_RST_ADORNMENT = re.compile(r"""^([=\-`:'"~^_*+#<>.])\1{2,}\s*$""")


def rst_blocks(text: str) -> list[Block]:
    """Blocks of a reStructuredText file: a section title (underlined, or over- and
    underlined, with a repeated punctuation character) becomes a ``heading`` block holding
    the title line only; ``::`` literal blocks and directives are ``code``.

    Example:
        >>> text = "=====\\nGuide\\n=====\\n\\nIntro.\\n\\nUsage\\n-----\\nRun it::\\n\\n    ragkit ls"
        >>> [(b.kind, text[b.start:b.end]) for b in rst_blocks(text)]  # doctest: +NORMALIZE_WHITESPACE
        [('heading', 'Guide'), ('paragraph', 'Intro.'), ('heading', 'Usage'),
         ('paragraph', 'Run it::'), ('code', 'ragkit ls')]
    """
    blocks: list[Block] = []
    literal = False
    for block in text_blocks(text):
        piece = text[block.start : block.end]
        lines = piece.split("\n")
        title = _rst_title(lines)
        if title is None:
            indented = piece.startswith((" ", "\t")) or text[: block.start].endswith(" ")
            kind = "code" if (literal and indented) or piece.startswith(".. ") else "paragraph"
            blocks.append(Block(kind, block.start, block.end))
            literal = piece.endswith("::") or (literal and indented)
            continue
        first = block.start + piece.index(lines[title].strip())
        blocks.append(Block("heading", first, first + len(lines[title].strip())))
        rest = "\n".join(lines[title + 2 :]) if title + 2 < len(lines) else ""
        if rest.strip():
            start = block.end - len(rest) + (len(rest) - len(rest.lstrip()))
            blocks.append(Block("paragraph", start, block.end))
        literal = rest.rstrip().endswith("::")
    return blocks


def _rst_title(lines: list[str]) -> int | None:
    """The line index of the section title a block starts with, or None."""
    if len(lines) >= 3 and _RST_ADORNMENT.match(lines[0]) and _RST_ADORNMENT.match(lines[2]):
        return 1
    underlined = len(lines) >= 2 and _RST_ADORNMENT.match(lines[1]) and lines[0].strip()
    return 0 if underlined and len(lines[1].rstrip()) >= len(lines[0].strip()) else None


class _HtmlBlocks(HTMLParser):
    """Collects visible text of an HTML page as typed blocks."""

    _KINDS: ClassVar[dict[str, str]] = {
        **{f"h{i}": "heading" for i in range(1, 7)},
        "p": "paragraph",
        "li": "list",
        "ul": "list",
        "ol": "list",
        "table": "table",
        "tr": "table",
        "pre": "code",
        "blockquote": "paragraph",
        "div": "paragraph",
        "section": "paragraph",
        "article": "paragraph",
        "br": "paragraph",
    }
    _HIDDEN: ClassVar[set[str]] = {"script", "style", "noscript", "template", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[tuple[str, str]] = []
        self._current: list[str] = []
        self._kind = "paragraph"
        self._hidden = 0

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self._current)).strip()
        if text:
            self.parts.append((self._kind, text))
        self._current = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._HIDDEN:
            self._hidden += 1
        if tag in ("td", "th"):
            self._current.append(" ")
        if tag in self._KINDS:
            self._flush()
            self._kind = self._KINDS[tag]

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        if tag in self._KINDS:
            self._flush()
            self._kind = "paragraph"

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self._current.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def _join_blocks(parts: list[tuple[str, str]]) -> tuple[str, list[Block]]:
    text_parts: list[str] = []
    blocks: list[Block] = []
    position = 0
    for kind, part in parts:
        blocks.append(Block(kind, position, position + len(part)))
        text_parts.append(part)
        position += len(part) + 2
    return "\n\n".join(text_parts), blocks


def html_text(page: str) -> tuple[str, list[Block]]:
    """The visible text of a web page and its blocks.

    Example:
        >>> html_text("<h1>Water</h1><p>It boils.</p><script>x()</script>")[1]
        [Block(kind='heading', start=0, end=5), Block(kind='paragraph', start=7, end=16)]
    """
    parser = _HtmlBlocks()
    parser.feed(page)
    parser.close()
    return _join_blocks(parser.parts)


PDF_MAX_EXPANSION = 100  # page content may unpack to this many times the file's size ...
PDF_MIN_CONTENT = 4 * 2**20  # ... or to this many bytes, whichever is more


def pdf_text(data: bytes, path: Path, limit: int) -> tuple[str, list[Block]]:
    """The text of a PDF's pages as paragraph blocks, bounded by ``limit`` bytes (the file
    limit).

    Compressed streams can unpack to far more than a file holds (a decompression bomb: pages
    sharing one stream of zeros), so before any page is parsed the unpacked size of every
    page's content (its content streams and form XObjects, counted at each use) must stay
    within ``limit`` and within ``PDF_MAX_EXPANSION`` times the file's size (at least
    ``PDF_MIN_CONTENT``); the extracted text may not pass ``limit`` characters either. Past
    any bound the file is refused, at that point.

    Example:
        >>> pdf_text(b"%PDF-1.7\\n", Path("a.pdf"), 2**20)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: a.pdf: unreadable PDF (...)
    """
    from pypdf import PdfReader

    # pypdf logs what it repairs in a damaged file ("EOF marker not found") as bare lines
    # without the file's name; a file it cannot read is reported below, with its name.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):  # owner-only passwords open with ""
            raise RagkitError(f"{path}: PDF is encrypted with a password; decrypt it first")
        _check_unpacked_size(reader.pages, path, len(data), limit)
        pages: list[str] = []
        extracted = 0
        for number, page in enumerate(reader.pages, start=1):
            pages.append(page.extract_text() or "")
            extracted += len(pages[-1])
            if extracted > limit:
                raise RagkitError(
                    f"{path}: text passes {limit:,} characters by page {number}; split the "
                    "file or raise RAGKIT_MAX_FILE_MB"
                )
    except RagkitError:
        raise
    except Exception as error:  # pypdf raises many error types on damaged input
        raise RagkitError(f"{path}: unreadable PDF ({type(error).__name__}: {error})") from error
    parts: list[tuple[str, str]] = []
    for page_text in pages:
        for paragraph in _BLANK_LINES.split(page_text):
            if paragraph.strip():
                parts.append(("paragraph", paragraph.strip()))
    return _join_blocks(parts)


def _check_unpacked_size(pages: Iterable[Any], path: Path, size: int, limit: int) -> None:
    """Refuse a PDF of ``size`` bytes whose pages' content unpacks past its budget (before
    any page is parsed; see :func:`pdf_text`)."""
    budget = min(limit, max(PDF_MAX_EXPANSION * size, PDF_MIN_CONTENT))
    unpacked = 0
    for number, page in enumerate(pages, start=1):
        unpacked += _pdf_content_bytes(page)
        if unpacked > budget:
            fix = (
                "split the file or raise RAGKIT_MAX_FILE_MB"
                if budget == limit
                else f"over {PDF_MAX_EXPANSION} times the file's size, as in a decompression "
                "bomb; if the PDF is genuine, split it"
            )
            raise RagkitError(
                f"{path}: page content unpacks to over {budget:,} bytes by page {number}; {fix}"
            )


def _pdf_content_bytes(page: Any) -> int:
    """Unpacked bytes of a pypdf page's content streams and its form XObjects."""
    contents = page.get_contents()
    total = len(contents.get_data()) if contents is not None else 0
    resources = page.get("/Resources")
    xobjects = resources.get_object().get("/XObject") if resources is not None else None
    for reference in (xobjects.get_object() if xobjects is not None else {}).values():
        xobject = reference.get_object()
        if xobject.get("/Subtype") == "/Form":
            total += len(xobject.get_data())
    return total


def _record_problem(record: Any) -> str | None:
    """Why a parsed JSONL line is not a document record, or None."""
    if not isinstance(record, dict):
        return "line is not a JSON object"
    if record.get("id", record.get("_id")) is None or not isinstance(record.get("text"), str):
        return "needs an 'id' (or '_id') and a string 'text'"
    used = ("id", "_id", "text", "title", "metadata")
    return record_problem({name: record[name] for name in used if name in record})


def jsonl_documents(data: bytes, path: Path, result: LoadResult) -> None:
    """One document per JSON line; bad lines (and repeated ids, values no index can store:
    :mod:`ragkit.documents.checks`) are skipped with their number."""
    text = decode_text(data, path)
    if not text.strip():
        raise EmptyFileError(f"{path}: empty (no JSON lines)")
    first_line: dict[str, int] = {}
    # Records end at "\n" only: JSON strings may hold U+2028 and other line separators.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{display_path(path)}:{number}"
        try:
            record = parse_line(line, first=number == 1)
        except RagkitError as refused:  # not JSON, nested too deep, a lone surrogate
            result.skipped.append(SkippedFile(where, str(refused)))
            continue
        problem = _record_problem(record)
        if problem:
            result.skipped.append(SkippedFile(where, problem))
            continue
        record_id = str(record.get("id", record.get("_id")))
        if record_id in first_line:
            reason = f"id {record_id!r} already used on line {first_line[record_id]}"
            result.skipped.append(SkippedFile(where, reason))
            continue
        first_line[record_id] = number
        title = record.get("title") or ""
        body = record["text"]
        full = f"{title}\n\n{body}" if title else body
        if not full.strip():
            result.skipped.append(SkippedFile(where, "empty text"))
            continue
        metadata = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        result.documents.append(
            Document(
                key=f"{document_key(path)}#{record_id}",
                source=document_key(path),
                text=full,
                content_hash=content_hash(line.encode("utf-8")),
                blocks=text_blocks(full),
                title=str(title),
                external_id=record_id,
                metadata=metadata,
            )
        )
