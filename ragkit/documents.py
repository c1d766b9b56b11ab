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
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

from ragkit.errors import RagkitError
from ragkit.normalize.detect import detect_language, detect_script

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".pdf")
MAX_FILE_BYTES = 64 * 1024 * 1024


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


@dataclass(frozen=True)
class SkippedFile:
    """A file (or JSONL line) that was not ingested, and why."""

    path: str
    reason: str


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[SkippedFile]]:
    """Files under ``paths`` (recursively, sorted); unsupported and missing ones are reported."""
    found: list[Path] = []
    skipped: list[SkippedFile] = []
    for path in paths:
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                if child.name.startswith("."):
                    continue
                if child.suffix.lower() in SUPPORTED_SUFFIXES:
                    found.append(child)
                else:
                    skipped.append(
                        SkippedFile(str(child), f"unsupported file type {child.suffix!r}")
                    )
        elif path.is_file():
            if path.suffix.lower() in SUPPORTED_SUFFIXES:
                found.append(path)
            else:
                skipped.append(SkippedFile(str(path), f"unsupported file type {path.suffix!r}"))
        else:
            skipped.append(SkippedFile(str(path), "no such file or folder"))
    return found, skipped


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
    """UTF-8 (with or without BOM) or UTF-16 with BOM; anything else is refused."""
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise RagkitError(f"{path}: looks binary (NUL bytes), not text")
    try:
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise RagkitError(
            f"{path}: not valid UTF-8 at byte {error.start}; re-encode the file as UTF-8"
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


def _load_pdf(path: Path) -> tuple[str, list[Block]]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise RagkitError(f"{path}: PDF is encrypted; decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as error:
        raise RagkitError(f"{path}: unreadable PDF ({error})") from error
    parts: list[tuple[str, str]] = []
    for page in pages:
        for paragraph in _BLANK_LINES.split(page):
            if paragraph.strip():
                parts.append(("paragraph", paragraph.strip()))
    return _join_blocks(parts)


def _jsonl_documents(data: bytes, path: Path, result: LoadResult) -> None:
    text = decode_text(data, path)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            result.skipped.append(SkippedFile(where, f"invalid JSON ({error.msg})"))
            continue
        if not isinstance(record, dict):
            result.skipped.append(SkippedFile(where, "line is not a JSON object"))
            continue
        record_id = record.get("id", record.get("_id"))
        body = record.get("text")
        if record_id is None or not isinstance(body, str):
            result.skipped.append(
                SkippedFile(where, "needs an 'id' (or '_id') and a string 'text'")
            )
            continue
        title = record.get("title") or ""
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
                external_id=str(record_id),
                metadata=metadata,
            )
        )


def load_file(path: Path, result: LoadResult) -> None:
    """Load one file into ``result``; raises ``RagkitError`` naming the file when it cannot."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise RagkitError(f"{path}: {size} bytes is over the {MAX_FILE_BYTES}-byte limit")
        data = path.read_bytes()
    except OSError as error:
        raise RagkitError(f"{path}: cannot read ({error.strerror})") from error
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        _jsonl_documents(data, path, result)
        return
    if suffix == ".pdf":
        text, blocks = _load_pdf(path)
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
    """Discover and load every supported file; failures become ``skipped`` entries."""
    files, skipped = discover(paths)
    result = LoadResult(skipped=skipped)
    for path in files:
        try:
            load_file(path, result)
        except RagkitError as error:
            result.skipped.append(SkippedFile(str(path), str(error).removeprefix(f"{path}: ")))
    return result


def iter_batches(items: list[Document], size: int) -> Iterator[list[Document]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
