"""Find the files to ingest under the paths a user gives, reporting every file that is passed over.

Folders are walked recursively in sorted order without following symbolic links to folders
(so a link loop cannot recurse); hidden files and folders (a name starting with ``.``) are left
out silently. Everything else that is not ingested is reported with a reason: unsupported file
types, symbolic-link loops, broken links, links to folders, FIFOs and other non-regular files,
folders that cannot be listed, and names that are not valid UTF-8 (shown with ``\\xNN``
escapes, since such a name cannot be stored or printed as text).

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
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SUPPORTED_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".pdf")


@dataclass(frozen=True)
class SkippedFile:
    """A file (or JSONL line) that was not ingested, and why."""

    path: str
    reason: str


def display_path(path: str | Path) -> str:
    """``path`` as printable text: bytes that are not UTF-8 become ``\\xNN`` escapes.

    Example:
        >>> display_path(os.fsdecode(b"caf\\xe9.txt"))
        'caf\\\\xe9.txt'
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")


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
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        return f"unsupported file type {path.suffix!r}"
    return None


def _walk(root: Path, found: dict[str, Path], skipped: list[SkippedFile]) -> None:
    def unreadable(error: OSError) -> None:
        where = display_path(error.filename or root)
        skipped.append(SkippedFile(where, f"cannot list folder ({error.strerror})"))

    entries: list[Path] = []
    for folder, subfolders, names in os.walk(root, onerror=unreadable):
        kept = []
        for name in sorted(subfolders):
            if name.startswith("."):
                continue
            child = Path(folder, name)
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
        problem = file_problem(child)
        if problem:
            skipped.append(SkippedFile(display_path(child), problem))
        else:
            found.setdefault(str(child), child)


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[SkippedFile]]:
    """Files under ``paths`` (recursively, sorted, each once) and the entries passed over."""
    found: dict[str, Path] = {}
    skipped: list[SkippedFile] = []
    for path in paths:
        if path.is_dir() and _is_text_name(path):
            _walk(path, found, skipped)
            continue
        problem = file_problem(path)
        if problem:
            skipped.append(SkippedFile(display_path(path), problem))
        else:
            found.setdefault(str(path), path)
    return list(found.values()), skipped
