"""Documents and their loaders: discover files, decode them, keep block structure.

Example:
    >>> from pathlib import Path
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.md").write_text("# Title\\n\\nFirst paragraph.\\n")
    >>> result = load_paths([folder])
    >>> [b.kind for b in result.documents[0].blocks]
    ['heading', 'paragraph']
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

from ragkit.documents.discovery import SkippedFile, discover, display_path
from ragkit.errors import RagkitError
from ragkit.normalize.detect import detect_language, detect_script

DEFAULT_MAX_FILE_MB = 64


@dataclass(frozen=True)
class Block:
    """A structural span of a document's text: ``text[start:end]`` is the block."""

    kind: str  # heading | paragraph | list | table | code
    start: int
    end: int


@dataclass
class Document:
    """One document: its text, where it came from, and its block boundaries."""

    key: str  # unique within an index: source path, plus "#id" for JSONL records
    source: str
    text: str
    content_hash: str
    blocks: list[Block]
    title: str = ""
    external_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    script: str = ""
    language: str = ""

    def __post_init__(self) -> None:
        if not self.script:
            self.script = detect_script(self.text)
        if not self.language:
            self.language = detect_language(self.text, self.script)


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


def _load_html(data: bytes, path: Path) -> tuple[str, list[Block]]:
    parser = _HtmlBlocks()
    parser.feed(decode_text(data, path))
    parser.close()
    return _join_blocks(parser.parts)


def _load_pdf(data: bytes, path: Path) -> tuple[str, list[Block]]:
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


def _jsonl_documents(data: bytes, path: Path, result: LoadResult) -> None:
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


def max_file_bytes() -> int:
    """The largest file the loaders read: ``RAGKIT_MAX_FILE_MB`` MiB (default 64).

    Larger files are skipped (never read), so one huge file cannot exhaust memory.

    Example:
        >>> max_file_bytes() == int(os.environ.get("RAGKIT_MAX_FILE_MB", "64")) * 2**20
        True
    """
    value = os.environ.get("RAGKIT_MAX_FILE_MB", str(DEFAULT_MAX_FILE_MB))
    try:
        megabytes = int(value)
    except ValueError:
        megabytes = 0
    if megabytes < 1:
        raise RagkitError(f"RAGKIT_MAX_FILE_MB={value!r}: give a whole number of MiB, e.g. 64")
    return megabytes * 2**20


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; reads never exceed the limit."""
    try:
        # O_NONBLOCK: a FIFO swapped in after discovery must not block the open.
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise RagkitError(f"{path}: cannot read ({error.strerror})") from error
    with os.fdopen(handle, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RagkitError(f"{path}: not a regular file (FIFO, socket or device)")
        too_big = RagkitError(
            f"{path}: {info.st_size:,} bytes is over the {limit:,}-byte file limit; split the "
            "file or raise RAGKIT_MAX_FILE_MB"
        )
        if info.st_size > limit:
            raise too_big
        try:
            data = stream.read(limit + 1)
        except OSError as error:
            raise RagkitError(f"{path}: cannot read ({error.strerror})") from error
    if len(data) > limit:  # the file grew after the size check
        raise too_big
    return data


def load_file(path: Path, result: LoadResult) -> None:
    """Load one file into ``result``; raises ``RagkitError`` naming the file when it cannot."""
    data = read_bounded(path, max_file_bytes())
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        _jsonl_documents(data, path, result)
        return
    if suffix == ".pdf":
        text, blocks = _load_pdf(data, path)
    elif suffix in (".html", ".htm"):
        text, blocks = _load_html(data, path)
    else:
        text = decode_text(data, path)
        blocks = text_blocks(text, markdown=suffix in (".md", ".markdown"))
    if not text.strip():
        raise RagkitError(f"{path}: empty (no text to index)")
    title = next((text[b.start : b.end] for b in blocks if b.kind == "heading"), "")
    result.documents.append(
        Document(
            key=str(path),
            source=str(path),
            text=text,
            content_hash=content_hash(data),
            blocks=blocks,
            title=title.lstrip("# ").strip(),
        )
    )


def load_paths(paths: Iterable[Path]) -> LoadResult:
    """Discover and load every supported file; failures become ``skipped`` entries.

    Each file's problem is reported on its own (see :mod:`ragkit.documents.discovery` for the files passed
    over); the files that load are returned whatever happened to the others.
    """
    files, skipped = discover(paths)
    result = LoadResult(skipped=skipped)
    max_file_bytes()  # a bad RAGKIT_MAX_FILE_MB fails the whole run, not every file
    for path in files:
        try:
            load_file(path, result)
        except RagkitError as error:
            result.skipped.append(SkippedFile(str(path), str(error).removeprefix(f"{path}: ")))
    return result


def iter_batches(items: list[Document], size: int) -> Iterator[list[Document]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
