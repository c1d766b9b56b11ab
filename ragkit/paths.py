"""Where ragkit keeps derived files, and where the shared evaluation data lives.

- :func:`cache_dir`: converted models and other derived files (``RAGKIT_CACHE`` overrides);
- :func:`package_folder`: a folder of files shipped inside the package (tokenizers, the
  lexical normalizer's data, reranker weights), wherever ragkit is installed;
- :func:`shared_data_dir`: the judged collections tests and benchmarks read
  (``RAGKIT_SHARED_DATA`` overrides; default ``../shared/data`` beside the repository).

Example:
    >>> (cache_dir() / "models").parent == cache_dir()
    True
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

from ragkit.environment import read
from ragkit.errors import RagkitError

REPOSITORY = Path(__file__).resolve().parents[1]
"""The folder holding the ``ragkit`` package (the repository root in a checkout)."""


def package_folder(package: str, name: str) -> Path:
    """The folder ``name`` shipped inside ``package`` (package data, found through
    :mod:`importlib.resources`, so an installed wheel finds it as a checkout does).

    Example:
        >>> package_folder("ragkit.normalize", "data").name
        'data'
    """
    folder = resources.files(package).joinpath(name)
    if not isinstance(folder, Path):  # e.g. a package imported from a zip file
        raise RagkitError(
            f"{package}/{name}: ragkit's shipped files must be on disk; install ragkit as a "
            "folder (pip install ragkit), not inside a zip file"
        )
    return folder


def cache_dir() -> Path:
    """Folder for converted models and other derived files (``RAGKIT_CACHE`` overrides).

    Example:
        >>> import os
        >>> cache_dir().name in {"ragkit", os.environ.get("RAGKIT_CACHE", "ragkit").rsplit("/", 1)[-1]}
        True
    """
    return read("cache") or Path.home() / ".cache" / "ragkit"


def shared_data_dir() -> Path:
    """The shared evaluation data (BEIR collections, MultiLexNorm): ``RAGKIT_SHARED_DATA``, or
    ``../shared/data`` next to the repository. It may not exist: callers say what is missing.

    Example:
        >>> import os
        >>> str(shared_data_dir()) == os.environ.get("RAGKIT_SHARED_DATA", str(shared_data_dir()))
        True
        >>> "RAGKIT_SHARED_DATA" in os.environ or shared_data_dir().parts[-2:] == ("shared", "data")
        True
    """
    return read("shared_data") or REPOSITORY.parent / "shared" / "data"


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in blocks.

    Example:
        >>> import tempfile
        >>> file = Path(tempfile.mkdtemp()) / "a"
        >>> _ = file.write_bytes(b"abc")
        >>> file_sha256(file)[:12]
        'ba7816bf8f01'
    """
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
