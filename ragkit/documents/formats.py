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
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

from ragkit.documents.discovery import SkippedFile, display_path
from ragkit.documents.types import Block, Document, LoadResult, content_hash
from ragkit.errors import RagkitError

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


def decode_text(data: bytes, path: Path) -> str:
    """UTF-8 (with or without BOM) or UTF-16 with BOM; anything else is refused.

    Example:
        >>> decode_text("café".encode("latin-1"), Path("a.txt"))
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: a.txt: not valid UTF-8 at byte 3; re-encode the file as UTF-8
    """
    utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
    if not utf16 and b"\x00" in data:
        raise RagkitError(f"{path}: looks binary (NUL bytes), not text")
    try:
        return data.decode("utf-16") if utf16 else data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        encoding = "UTF-16" if utf16 else "UTF-8"
        raise RagkitError(
            f"{path}: not valid {encoding} at byte {error.start}; re-encode the file as UTF-8"
        ) from error


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


def html_text(data: bytes, path: Path) -> tuple[str, list[Block]]:
    parser = _HtmlBlocks()
    parser.feed(decode_text(data, path))
    parser.close()
    return _join_blocks(parser.parts)


def pdf_text(data: bytes, path: Path) -> tuple[str, list[Block]]:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):  # owner-only passwords open with ""
            raise RagkitError(f"{path}: PDF is encrypted with a password; decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
    except RagkitError:
        raise
    except Exception as error:  # pypdf raises many error types on damaged input
        raise RagkitError(f"{path}: unreadable PDF ({type(error).__name__}: {error})") from error
    parts: list[tuple[str, str]] = []
    for page in pages:
        for paragraph in _BLANK_LINES.split(page):
            if paragraph.strip():
                parts.append(("paragraph", paragraph.strip()))
    return _join_blocks(parts)


def _record_problem(record: Any) -> str | None:
    """Why a parsed JSONL line is not a document record, or None."""
    if not isinstance(record, dict):
        return "line is not a JSON object"
    if record.get("id", record.get("_id")) is None or not isinstance(record.get("text"), str):
        return "needs an 'id' (or '_id') and a string 'text'"
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return "a string holds an unpaired surrogate escape (\\ud800-\\udfff), not text"
    return None


def jsonl_documents(data: bytes, path: Path, result: LoadResult) -> None:
    """One document per JSON line; bad lines (and repeated ids) are skipped with their number."""
    text = decode_text(data, path)
    if not text.strip():
        raise RagkitError(f"{path}: empty (no JSON lines)")
    first_line: dict[str, int] = {}
    # Records end at "\n" only: JSON strings may hold U+2028 and other line separators.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{display_path(path)}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            result.skipped.append(SkippedFile(where, f"invalid JSON ({error.msg})"))
            continue
        except (ValueError, RecursionError) as error:  # too many digits, nesting too deep
            result.skipped.append(SkippedFile(where, f"invalid JSON ({error})"))
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
                key=f"{path}#{record_id}",
                source=str(path),
                text=full,
                content_hash=content_hash(line.encode("utf-8")),
                blocks=text_blocks(full),
                title=str(title),
                external_id=record_id,
                metadata=metadata,
            )
        )
