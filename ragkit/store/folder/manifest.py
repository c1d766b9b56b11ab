"""``MANIFEST.json``: the commit record of an index folder, with a checksum per derived file.

Written after each commit (and after each BM25 build) by :class:`ragkit.store.FolderStore`; read by
:mod:`ragkit.store.folder.doctor`, which recomputes the checksums. The file is replaced atomically
(a unique temporary name, then ``os.replace``), so concurrent writers of the same generation
never interleave bytes.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "vectors-3.faiss").write_bytes(b"abc")
    >>> write_manifest(folder, 3, 4, "m", {"documents": 0, "chunks": 0, "vectors": 0})
    >>> verify_checksums(folder, read_manifest(folder))
    []
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ragkit.errors import IndexDamagedError
from ragkit.paths import file_sha256

MANIFEST_NAME = "MANIFEST.json"
FORMAT = 1


def vector_file(generation: int) -> str:
    return f"vectors-{generation}.faiss"


def sparse_folder(generation: int) -> str:
    return f"bm25-{generation}"


def checksums(
    folder: Path, generation: int, vectors: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Checksums of generation ``generation``'s FAISS files and BM25 files (when present).
    ``vectors``: the FAISS files' names and checksums, known since they were written
    (:mod:`ragkit.store.folder.vectors`); without it, ``vectors-<generation>.faiss`` is hashed."""
    if vectors is None:
        vectors = {vector_file(generation): file_sha256(folder / vector_file(generation))}
    files = dict(vectors)
    sparse = folder / sparse_folder(generation)
    if sparse.is_dir():
        files.update({f"{sparse.name}/{p.name}": file_sha256(p) for p in sorted(sparse.iterdir())})
    return files


def write_manifest(
    folder: Path,
    generation: int,
    dimension: int,
    model: str,
    counts: dict[str, int],
    vectors: Mapping[str, str] | None = None,
) -> None:
    """Record generation ``generation`` with the checksums of its files (``vectors``: as in
    :func:`checksums`)."""
    manifest = {
        "format": FORMAT,
        "generation": generation,
        "dimension": dimension,
        "embedding_model": model,
        "counts": counts,
        "files": checksums(folder, generation, vectors),
    }
    temporary = folder / f".{MANIFEST_NAME}.{os.getpid()}.{threading.get_ident()}.tmp"
    temporary.write_text(json.dumps(manifest, indent=2))
    os.replace(temporary, folder / MANIFEST_NAME)


def read_manifest(folder: Path) -> dict[str, Any]:
    """The manifest of ``folder``; a missing or unreadable one is a :class:`RagkitError`."""
    path = folder / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError as error:
        raise IndexDamagedError(f"{path}: missing; `ragkit doctor --repair` rewrites it") from error
    except (OSError, ValueError) as error:
        raise IndexDamagedError(
            f"{path}: unreadable ({error}); `ragkit doctor --repair` rewrites it"
        ) from error
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise IndexDamagedError(
            f"{path}: not a ragkit manifest; `ragkit doctor --repair` rewrites it"
        )
    return manifest


def _inside(folder: Path, name: str) -> bool:
    """Whether ``name`` is one a manifest may list: a file of the index folder or of one BM25
    folder in it (``vectors-3.faiss``, ``bm25-3/params.index.json``), not a path that leaves
    it — ``..``, absolute, or a symbolic link pointing out.

    Example:
        >>> _inside(Path("/idx"), "bm25-3/vocab.index.json"), _inside(Path("/idx"), "../../etc/passwd")
        (True, False)
    """
    parts = PurePosixPath(name).parts
    if not 1 <= len(parts) <= 2 or name.startswith("/") or ".." in parts or "\\" in name:
        return False
    return (folder / name).resolve().is_relative_to(folder.resolve())


def verify_checksums(folder: Path, manifest: dict[str, Any]) -> list[str]:
    """Problems found re-hashing the files the manifest lists (empty when all match); the
    files of a missing folder (a BM25 index) are one problem."""
    problems: list[str] = []
    gone: dict[str, int] = {}  # missing folder → how many listed files it held
    for name, expected in sorted(manifest["files"].items()):
        path = folder / name
        if not _inside(folder, name):
            problems.append(
                f"{name!r}: {MANIFEST_NAME} names a file outside the index folder (not read); "
                "`ragkit doctor --repair` rewrites it"
            )
        elif "/" in name and not path.parent.is_dir():
            gone[path.parent.name] = gone.get(path.parent.name, 0) + 1
        elif not path.is_file():
            problems.append(f"{name}: listed in {MANIFEST_NAME} but missing")
        elif file_sha256(path) != expected:
            problems.append(f"{name}: checksum differs from {MANIFEST_NAME} (file damaged)")
    problems += [
        f"{name}/: listed in {MANIFEST_NAME} ({count} files) but missing"
        for name, count in gone.items()
    ]
    return problems
