"""Loading: bounded reads, the reader for each file type, and whole folders.

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

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

from ragkit.documents.compressed import compression, decompress, inner_name, reader_suffix
from ragkit.documents.discovery import SkippedFile, discover, document_key
from ragkit.documents.encodings import decode_document
from ragkit.documents.formats import (
    html_text,
    jsonl_documents,
    pdf_text,
    rst_blocks,
    text_blocks,
)
from ragkit.documents.options import LoadOptions
from ragkit.documents.records import json_documents, table_documents
from ragkit.documents.types import Block, Document, LoadResult, content_hash
from ragkit.environment import read
from ragkit.errors import EmptyFileError, InputRefusedError, RagkitError

T = TypeVar("T")


def max_file_bytes() -> int:
    """The largest file the loaders read: ``RAGKIT_MAX_FILE_MB`` MiB (default 64).

    Larger files are skipped (never read), so one huge file cannot exhaust memory.

    Example:
        >>> max_file_bytes() == int(os.environ.get("RAGKIT_MAX_FILE_MB", "64")) * 2**20
        True
    """
    return read("max_file_mb") * 2**20


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; reads never exceed the limit.

    A ``.gz``, ``.bz2`` or ``.xz`` file gives its decompressed bytes, refused once they pass
    ``limit`` (:func:`ragkit.documents.compressed.decompress`).
    """
    try:
        # O_NONBLOCK: a FIFO swapped in after discovery must not block the open.
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise InputRefusedError(f"{path}: cannot read ({error.strerror})") from error
    try:
        stream = os.fdopen(handle, "rb")
    except IsADirectoryError as error:
        os.close(handle)
        raise InputRefusedError(f"{path}: a folder, not a file") from error
    with stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InputRefusedError(f"{path}: not a regular file (FIFO, socket or device)")
        too_big = RagkitError(
            f"{path}: {info.st_size:,} bytes is over the {limit:,}-byte file limit; split the "
            "file or raise RAGKIT_MAX_FILE_MB"
        )
        if info.st_size > limit:
            raise too_big
        if compression(path):
            return decompress(stream, path, limit, info.st_size)
        try:
            data = stream.read(limit + 1)
        except OSError as error:
            raise InputRefusedError(f"{path}: cannot read ({error.strerror})") from error
    if len(data) > limit:  # the file grew after the size check
        raise too_big
    return data


def load_file(path: Path, result: LoadResult, text_field: str = "text") -> None:
    """Load one file into ``result``; raises ``RagkitError`` naming the file when it cannot.

    ``text_field``: the field or column holding a record's text in ``.json``, ``.csv`` and
    ``.tsv`` files (:mod:`ragkit.documents.records`). A compressed file is read as the file it
    holds (:mod:`ragkit.documents.compressed`): key and source are its own path, text and
    content hash those of its decompressed bytes.
    """
    data = read_bounded(path, max_file_bytes())
    suffix = reader_suffix(path)
    if suffix in (".jsonl", ".json", ".csv", ".tsv"):
        if suffix == ".jsonl":
            jsonl_documents(data, path, result)
        elif suffix == ".json":
            json_documents(data, path, result, text_field)
        else:
            table_documents(data, path, result, text_field)
        return
    metadata: dict[str, str] = {}
    if suffix == ".pdf":
        text, blocks = pdf_text(data, path, max_file_bytes())
    else:
        decoded = decode_document(data, path)
        if decoded.encoding:  # read in a legacy 8-bit encoding, guessed
            metadata["encoding"] = decoded.encoding
        text, blocks = text_with_blocks(decoded.text, path, suffix)
    if not text.strip():
        raise EmptyFileError(f"{path}: empty (no text to index)")
    title = next((text[b.start : b.end] for b in blocks if b.kind == "heading"), "")
    result.documents.append(
        Document(
            key=document_key(path),
            source=document_key(path),
            text=text,
            content_hash=content_hash(data),
            blocks=blocks,
            title=title.lstrip("# ").strip(),
            metadata=metadata,
        )
    )


def text_with_blocks(text: str, path: Path, suffix: str) -> tuple[str, list[Block]]:
    """A decoded file's text (a web page's visible text) and its blocks, by its ``suffix``.

    Example:
        >>> text_with_blocks("Intro\\n=====\\n\\nIt boils.", Path("a.rst"), ".rst")[1][0].kind
        'heading'
    """
    if suffix in (".html", ".htm"):
        return html_text(text)
    if suffix == ".rst" or inner_name(path).lower().endswith(".rst.txt"):
        return text, rst_blocks(text)
    return text, text_blocks(text, markdown=suffix in (".md", ".markdown"))


FileProgress = Callable[[int, int], None]
"""``(files read, files to read)``, called by :func:`load_paths` within :func:`reporting_reads`."""

_reads: ContextVar[FileProgress | None] = ContextVar("ragkit_reads", default=None)


@contextmanager
def reporting_reads(progress: FileProgress) -> Iterator[None]:
    """Within the block, :func:`load_paths` calls ``progress(done, total)`` once the files to
    read are known (``done = 0``) and after each file: how a caller that starts an ingest
    (``ragkit ingest``) follows its reading, which happens before any document is known.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.txt").write_text("Water boils.")
        >>> seen = []
        >>> with reporting_reads(lambda done, total: seen.append((done, total))):
        ...     _ = load_paths([folder])
        >>> seen
        [(0, 1), (1, 1)]
    """
    token = _reads.set(progress)
    try:
        yield
    finally:
        _reads.reset(token)


def load_paths(paths: Iterable[Path], options: LoadOptions | None = None) -> LoadResult:
    """Discover and load every supported file that ``options`` select; failures become
    ``skipped`` entries.

    Each file's problem is reported on its own (see :mod:`ragkit.documents.discovery` for the files passed
    over); the files that load are returned whatever happened to the others.
    """
    chosen = options or LoadOptions()
    files, skipped = discover(paths, chosen)
    max_file_bytes()  # a bad RAGKIT_MAX_FILE_MB fails the whole run, not every file
    report_reads(0, len(files))
    result = load_files(files, chosen, total=len(files))
    return LoadResult(result.documents, [*skipped, *result.skipped])


def report_reads(done: int, total: int) -> None:
    """Tell the caller within :func:`reporting_reads` (if any) that ``done`` of ``total`` files
    were read."""
    progress = _reads.get()
    if progress:
        progress(done, total)


def load_files(
    files: Sequence[Path], options: LoadOptions | None = None, done: int = 0, total: int = 0
) -> LoadResult:
    """Load ``files`` (found by :func:`~ragkit.documents.discovery.discover`); failures become
    ``skipped`` entries. Files read are reported (:func:`reporting_reads`) as ``done`` plus
    those of ``files``, of ``total`` (``len(files)`` when 0): how an ingest that reads a folder
    in groups counts them all.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.txt").write_text("Water boils.")
        >>> [d.text for d in load_files([folder / "a.txt"]).documents]
        ['Water boils.']
    """
    chosen = options or LoadOptions()
    result = LoadResult()
    for count, path in enumerate(files, start=done + 1):
        try:
            load_file(path, result, chosen.text_field)
        except RagkitError as error:
            result.skipped.append(SkippedFile.of_error(path, error))
        report_reads(count, total or len(files))
    return result


def iter_batches(items: Sequence[T], size: int) -> Iterator[list[T]]:
    """``items`` in consecutive lists of ``size`` (the last may be shorter).

    Example:
        >>> list(iter_batches([1, 2, 3], 2))
        [[1, 2], [3]]
    """
    for start in range(0, len(items), size):
        yield list(items[start : start + size])
