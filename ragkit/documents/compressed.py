"""Compressed single files (``.gz``, ``.bz2``, ``.xz``) read as the file they hold.

``changelog.gz``, ``README.md.gz`` and ``data.jsonl.xz`` are read as ``changelog``,
``README.md`` and ``data.jsonl`` would be: the name without its compression suffix (the *inner
name*) chooses the reader, an inner name without an extension (or with one that names no
known type: ``changelog.Debian.gz``) is read when its first bytes decompress to text, and an
inner type ragkit does not read (``photo.png.gz``, ``site.tar.gz``) is reported as unsupported. The document's key and source stay the compressed file's path;
its text, offsets and content hash are those of the decompressed bytes.

Decompression streams in blocks of :data:`BLOCK` bytes and stops as soon as the output passes
the file limit (``RAGKIT_MAX_FILE_MB``, as for any file): a decompression bomb (a gigabyte of
zeros in one megabyte) is refused after reading at most the limit, and memory never holds more.
A damaged or truncated archive is refused with one line saying why.

Example:
    >>> import gzip, io
    >>> inner_name(Path("docs/README.md.gz")), reader_suffix(Path("notes.TXT.xz"))
    ('README.md', '.txt')
    >>> decompress(io.BytesIO(gzip.compress(b"Water boils.")), Path("a.txt.gz"), 2**20)
    b'Water boils.'
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from pathlib import Path
from typing import BinaryIO, cast

from ragkit.errors import InputRefusedError, RagkitError

FORMATS = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}  # suffix -> format name
BLOCK = 2**20  # decompressed bytes taken per read


def compression(path: Path) -> str | None:
    """The compression format named by ``path``'s suffix (``gzip``, ``bzip2``, ``xz``), or
    None for a file that is not compressed.

    Example:
        >>> compression(Path("changelog.GZ")), compression(Path("notes.txt"))
        ('gzip', None)
    """
    return FORMATS.get(path.suffix.lower())


def inner_name(path: Path) -> str:
    """The name of the file ``path`` holds: its name without the compression suffix (the name
    itself when it is not compressed).

    Example:
        >>> inner_name(Path("/doc/changelog.gz")), inner_name(Path("a.md"))
        ('changelog', 'a.md')
    """
    return path.stem if compression(path) else path.name


def reader_suffix(path: Path) -> str:
    """The suffix (lower case) that chooses ``path``'s reader: that of its inner name.

    Example:
        >>> reader_suffix(Path("data.JSONL.bz2")), reader_suffix(Path("copyright.gz"))
        ('.jsonl', '')
    """
    return Path(inner_name(path)).suffix.lower()


class _Tracked:
    """A binary stream that remembers an ``OSError`` of its own reads, so a failing disk is
    told apart from a damaged archive (the decompressors raise ``OSError`` for bad data too)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.error: OSError | None = None

    def read(self, size: int = -1) -> bytes:
        try:
            return self.stream.read(size)
        except OSError as error:
            self.error = error
            raise


def _reader(source: _Tracked, kind: str) -> io.BufferedIOBase:
    """A decompressing reader of ``source`` (all its concatenated streams, as ``zcat`` reads
    them)."""
    stream = cast(BinaryIO, source)  # a file-like object: read() is all they call
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if kind == "bzip2":
        return bz2.BZ2File(stream, mode="rb")
    return lzma.LZMAFile(stream, mode="rb", format=lzma.FORMAT_XZ)


def decompress(stream: BinaryIO, path: Path, limit: int, size: int = 0) -> bytes:
    """The decompressed bytes of ``stream`` (the open file ``path``, compressed as its suffix
    says), at most ``limit`` of them; ``size``: its compressed size, named when it is refused.

    Raises :class:`RagkitError` naming ``path`` when the output passes ``limit`` (read no
    further), when the archive is damaged or truncated, or when the file cannot be read (that
    error chained, so it counts as an I/O error worth retrying).

    Example:
        >>> import io
        >>> decompress(io.BytesIO(b"not gzip"), Path("a.gz"), 2**20)
        Traceback (most recent call last):
        ...
        ragkit.errors.InputRefusedError: a.gz: damaged gzip file (Not a gzipped file (b'no')); recompress it from the original
    """
    kind = compression(path) or "gzip"
    source = _Tracked(stream)
    blocks: list[bytes] = []
    total = 0
    try:
        with _reader(source, kind) as reader:
            while block := reader.read(min(BLOCK, limit + 1 - total)):
                total += len(block)
                if total > limit:
                    raise _too_big(path, limit, size)
                blocks.append(block)
    except RagkitError:
        raise
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as error:
        if source.error is not None:
            reason = source.error.strerror or source.error
            raise InputRefusedError(f"{path}: cannot read ({reason})") from source.error
        # Not chained: a damaged archive is content, not a failing disk (never retried).
        raise InputRefusedError(f"{path}: {_damage(kind, error)}") from None
    return b"".join(blocks)


def _too_big(path: Path, limit: int, size: int) -> RagkitError:
    ratio = f"over {limit // size:,} times its {size:,} compressed bytes: " if size else ""
    return RagkitError(
        f"{path}: decompresses past the {limit:,}-byte file limit ({ratio}a decompression bomb, "
        "or a file too big); split the file or raise RAGKIT_MAX_FILE_MB"
    )


def _damage(kind: str, error: BaseException) -> str:
    """Why a ``kind`` archive could not be decompressed, on one line."""
    if isinstance(error, EOFError):
        return f"truncated {kind} file (it ends before its end marker); copy or download it again"
    detail = " ".join(str(error).split()) or type(error).__name__
    return f"damaged {kind} file ({detail}); recompress it from the original"


def sample(path: Path, size: int) -> bytes | None:
    """The first ``size`` decompressed bytes of the compressed file ``path`` (fewer when it is
    shorter), or None when it cannot be read or decompressed (the loader reports why).

    Example:
        >>> sample(Path("no such file.gz"), 8) is None
        True
    """
    try:
        with open(path, "rb") as stream:
            source = _Tracked(stream)
            with _reader(source, compression(path) or "gzip") as reader:
                taken = b""
                while len(taken) < size and (block := reader.read(size - len(taken))):
                    taken += block
                return taken
    except (OSError, EOFError, zlib.error, lzma.LZMAError):
        return None
