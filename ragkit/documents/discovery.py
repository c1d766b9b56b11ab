"""Find the files to ingest under the paths a user gives, reporting every file that is passed over.

Folders are walked recursively in sorted order without following symbolic links to folders
(so a link loop cannot recurse); hidden files and folders (a name starting with ``.``) and what
the include/exclude globs leave out (:class:`~ragkit.documents.options.LoadOptions`) are
passed over silently; a ragkit index folder (holding ``INDEX_DATABASE``: an index kept inside
the folder it indexes) is passed over and listed as not read (``unsupported=True``), since any
documents kept in it are not read either. A file without an
extension (``README``, ``LICENSE``), or whose extension names no known file type
(``README.Debian``, ``changelog.Debian.amd64``: :func:`names_known_type`), is read when its
first bytes are UTF-8 text. A ``.gz``,
``.bz2`` or ``.xz`` file is judged by the name and bytes it holds (``README.md.gz``,
``changelog.gz``: :mod:`ragkit.documents.compressed`). Everything
else that is not ingested is reported with a reason: unsupported file types
(``unsupported=True``: not an error), symbolic-link loops, broken links, links to folders,
FIFOs and other non-regular files, folders that cannot be listed, and names that are not valid
UTF-8 (shown with ``\\xNN`` escapes, since such a name cannot be stored or printed as text).

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("text")
    >>> _ = (folder / "b.png").write_bytes(b"png")
    >>> (folder / "loop.txt").symlink_to(folder / "loop.txt")
    >>> files, skipped = discover([folder])
    >>> [f.name for f in files], [(Path(s.path).name, s.reason) for s in skipped]
    (['a.txt'], [('b.png', "unsupported file type '.png'"), ('loop.txt', 'symbolic link loop')])
"""

from __future__ import annotations

import errno
import mimetypes
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragkit.documents.compressed import compression, inner_name, reader_suffix, sample
from ragkit.documents.encodings import decode_document
from ragkit.documents.options import LoadOptions
from ragkit.errors import EmptyFileError, InvalidArgumentError, RagkitError

SUPPORTED_SUFFIXES = (
    *(".txt", ".md", ".markdown", ".rst", ".html", ".htm", ".pdf"),
    *(".jsonl", ".json", ".csv", ".tsv"),
)
INDEX_DATABASE = "ragkit.sqlite"  # the file that makes a folder a ragkit index
INDEX_FOLDER = "a ragkit index folder, not documents (files kept in it are not read)"
SNIFF_BYTES = 8192  # how much of a file without an extension is read to tell text


@dataclass(frozen=True)
class SkippedFile:
    """A file (or record) that was not ingested, and why; ``unsupported``: a file type ragkit
    does not read, ``empty``: nothing to index in it (both reported, but the files that could
    be read were all ingested)."""

    path: str
    reason: str
    unsupported: bool = False
    empty: bool = False  # nothing to index in it: reported, not a failure

    @classmethod
    def of_error(cls, path: str | Path, error: RagkitError) -> SkippedFile:
        """The entry of a file that could not be loaded (``error`` names it first).

        Example:
            >>> SkippedFile.of_error("a.txt", EmptyFileError("a.txt: empty (no text to index)"))
            SkippedFile(path='a.txt', reason='empty (no text to index)', unsupported=False, empty=True)
        """
        reason = str(error).removeprefix(f"{path}: ")
        return cls(str(path), reason, empty=isinstance(error, EmptyFileError))


def display_path(path: str | Path) -> str:
    """``path`` as printable text: bytes that are not UTF-8 become ``\\xNN`` escapes.

    Example:
        >>> display_path(os.fsdecode(b"caf\\xe9.txt"))
        'caf\\\\xe9.txt'
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def document_key(path: str | Path) -> str:
    """The key of the file ``path`` in an index, however the path was typed: absolute and
    normalized (``.``/``..`` and repeated ``/`` folded). Symbolic links are kept as written,
    not resolved: a link is the name the user gave the file (and resolving would follow links
    the discovery walk does not).

    Example:
        >>> document_key("/docs/../docs/./a.txt")
        '/docs/a.txt'
        >>> document_key("a.txt") == os.path.join(os.getcwd(), "a.txt")
        True
    """
    return os.path.abspath(path)


def _is_text_name(path: str | Path) -> bool:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def file_problem(path: Path) -> str | None:
    """Why ``path`` (a directory entry) cannot be ingested, or None when it can be read.

    Example:
        >>> file_problem(Path("/dev/null"))
        'not a regular file (FIFO, socket or device)'
    """
    if not _is_text_name(path):
        return "name is not valid UTF-8; rename it"
    try:
        info = path.stat()
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
        if error.errno == errno.ENOENT and path.is_symlink():
            return "broken symbolic link (its target is missing)"
        if error.errno == errno.ENOENT:
            return "no such file or folder"
        return f"cannot read ({error.strerror})"
    if stat.S_ISDIR(info.st_mode):
        return "symbolic link to a folder (not followed; pass the folder itself)"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (FIFO, socket or device)"
    return None


def looks_like_text(path: Path) -> bool:
    """Whether the first :data:`SNIFF_BYTES` of ``path`` (decompressed, for a compressed file)
    are text: UTF-16 with a BOM, UTF-8 without NUL bytes (a character cut by the end of the
    sample is fine), or text in a legacy 8-bit encoding that
    :func:`~ragkit.documents.encodings.decode_document` would read.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "README").write_text("Read me.")
        >>> _ = (folder / "blob").write_bytes(bytes(range(256)))
        >>> looks_like_text(folder / "README"), looks_like_text(folder / "blob")
        (True, False)
    """
    if compression(path):
        head = sample(path, SNIFF_BYTES)
    else:
        try:
            with open(path, "rb") as stream:
                head = stream.read(SNIFF_BYTES)
        except OSError:
            head = None
    if head is None:
        return True  # the loader reports why it cannot be read
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        if len(head) == SNIFF_BYTES and error.start >= len(head) - 3:
            return True
        try:
            decode_document(head, path)
        except RagkitError:
            return False
    return True


_TYPES = mimetypes.MimeTypes()  # the standard library's own table, not /etc/mime.types
_KNOWN_SUFFIXES = frozenset(
    suffix.lower()
    for table in (*_TYPES.types_map, _TYPES.encodings_map, _TYPES.suffix_map)
    for suffix in table
).union(SUPPORTED_SUFFIXES)


def names_known_type(suffix: str) -> bool:
    """Whether ``suffix`` (lower case, with its dot) names a file type: one ragkit reads, or
    one the standard library's :mod:`mimetypes` table knows (``.png``, ``.py``, ``.tar``).
    A suffix that names none (``.debian``, ``.amd64``, ``.1``) is read like no extension.

    Example:
        >>> names_known_type(".png"), names_known_type(".debian"), names_known_type("")
        (True, False, False)
    """
    return suffix in _KNOWN_SUFFIXES


def unsupported_type(path: Path) -> SkippedFile | None:
    """``path`` reported as an unsupported file type, or None when ragkit reads it (a
    compressed file by the name inside: ``notes.md.gz`` as ``notes.md``).

    Example:
        >>> unsupported_type(Path("site.tar.gz")).reason
        "unsupported file type '.tar.gz'"
    """
    suffix = reader_suffix(path)
    if suffix in SUPPORTED_SUFFIXES:
        return None
    known = names_known_type(suffix)
    if not known and looks_like_text(path):
        return None
    kind = compression(path)
    if suffix and not known:  # 'README.Debian' holding bytes that are not text
        reason = f"unsupported file type {suffix!r}: not text"
    elif suffix:
        named = suffix + path.suffix.lower() if kind else suffix  # '.tar.gz', '.png'
        reason = f"unsupported file type {named!r}"
    elif kind:
        reason = f"{kind} file of {inner_name(path)!r}: no extension and not text"
    else:
        reason = "no extension and not text"
    return SkippedFile(display_path(path), reason, unsupported=True)


def _take(
    path: Path,
    relative: str,
    options: LoadOptions,
    found: dict[str, Path],
    skipped: list[SkippedFile],
) -> None:
    """Add ``path`` to ``found`` or report why not (nothing when the globs leave it out)."""
    if not options.selects(relative):
        return
    problem = file_problem(path)
    if problem:
        skipped.append(SkippedFile(display_path(path), problem))
    elif unsupported := unsupported_type(path):
        skipped.append(unsupported)
    else:
        found.setdefault(str(path), path)


def _walk(
    root: Path, options: LoadOptions, found: dict[str, Path], skipped: list[SkippedFile]
) -> None:
    def unreadable(error: OSError) -> None:
        where = display_path(error.filename or root)
        skipped.append(SkippedFile(where, f"cannot list folder ({error.strerror})"))

    entries: list[Path] = []
    for folder, subfolders, names in os.walk(root, onerror=unreadable):
        if INDEX_DATABASE in names:  # a ragkit index: its files are not documents
            subfolders[:] = []
            skipped.append(SkippedFile(display_path(folder), INDEX_FOLDER, unsupported=True))
            continue
        kept = []
        for name in sorted(subfolders):
            if name.startswith("."):
                continue
            child = Path(folder, name)
            if options.excludes(child.relative_to(root).as_posix()):
                continue
            if child.is_symlink():
                entries.append(child)  # reported by file_problem, never walked
            elif not _is_text_name(child):
                skipped.append(
                    SkippedFile(display_path(child), "name is not valid UTF-8; rename it")
                )
            else:
                kept.append(name)
        subfolders[:] = kept
        entries.extend(Path(folder, name) for name in names if not name.startswith("."))
    for child in sorted(entries):
        _take(child, child.relative_to(root).as_posix(), options, found, skipped)


def check_apart(paths: Iterable[Path], index: str | Path) -> None:
    """Refuse documents that are the index folder ``index`` or lie inside it: the index would
    write its files among them (and then pass the folder over as an index). Called before the
    index is created or changed.

    Example:
        >>> check_apart([Path("docs")], "docs-index")
        >>> check_apart([Path("docs")], "docs/")
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: docs: the folder of documents cannot be the index folder (the index would write its files among them); give the index a folder of its own, e.g. --index docs-index
    """
    folder = Path(os.path.realpath(index))
    for path in paths:
        where = Path(os.path.realpath(path))
        if where == folder:
            typed = str(path).rstrip("/")
            named = typed if Path(typed).name not in ("", ".", "..") else str(where)
            raise InvalidArgumentError(
                f"{display_path(path)}: the folder of documents cannot be the index folder (the "
                "index would write its files among them); give the index a folder of its own, "
                f"e.g. --index {display_path(named)}-index"
            )
        if folder in where.parents:
            raise InvalidArgumentError(
                f"{display_path(path)}: inside the index folder {display_path(index)}; keep "
                "documents out of the index folder"
            )


def others_than(skipped: list[SkippedFile], index: str) -> list[SkippedFile]:
    """``skipped`` without the entry of the index folder ``index`` itself (an index kept inside
    the folder it indexes is passed over silently; other index folders are listed).

    Example:
        >>> entries = [SkippedFile("docs/ix", INDEX_FOLDER, unsupported=True)]
        >>> others_than(entries, "docs/ix"), len(others_than(entries, "docs/other"))
        ([], 1)
    """
    own = os.path.realpath(index)
    return [
        item
        for item in skipped
        if item.reason != INDEX_FOLDER or os.path.realpath(item.path) != own
    ]


def discover(
    paths: Iterable[Path], options: LoadOptions | None = None
) -> tuple[list[Path], list[SkippedFile]]:
    """Files under ``paths`` (recursively, sorted, each once) that ``options`` select, and the
    entries passed over."""
    chosen = options or LoadOptions()
    found: dict[str, Path] = {}
    skipped: list[SkippedFile] = []
    for path in paths:
        before = (len(found), len(skipped))
        if path.is_dir() and (path / INDEX_DATABASE).exists():  # a mistake, not a tree to read
            reason = "a ragkit index folder, not documents; give the folder of your documents"
            skipped.append(SkippedFile(display_path(path), reason))
        elif path.is_dir() and _is_text_name(path):
            _walk(path, chosen, found, skipped)
        else:
            _take(path, path.name, chosen, found, skipped)
        if chosen.include and (len(found), len(skipped)) == before and path.exists():
            globs = " ".join(repr(glob) for glob in chosen.include)
            skipped.append(SkippedFile(display_path(path), f"no file matches --include {globs}"))
    return list(found.values()), skipped
