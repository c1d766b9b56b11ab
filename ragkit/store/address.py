"""An index's location, opened as its backend: a folder (:class:`ragkit.store.FolderStore`),
or a Milvus address (:class:`ragkit.store.milvus.MilvusStore`) — ``milvus://HOST:PORT/COLLECTION``
for a server, ``milvus-lite:///ABSOLUTE/PATH.db[?collection=NAME]`` for an embedded file.

Everything that takes an index (``--index``, :meth:`ragkit.Index.open`, ``serve NAME=…``,
the flows, ``eval --keep-index``) goes through :func:`open_store` / :func:`create_store`.
pymilvus is imported only when a Milvus location is used.

Example:
    >>> import tempfile
    >>> from ragkit.config import Settings
    >>> folder = Path(tempfile.mkdtemp()) / "idx"
    >>> index_exists(folder), type(create_store(folder, Settings(), 4)).__name__
    (False, 'FolderStore')
    >>> index_exists(str(folder)), display(str(folder)) == str(folder)
    (True, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragkit.config import Settings
from ragkit.errors import InvalidArgumentError
from ragkit.store.base import IndexStore
from ragkit.store.diagnosis import Diagnosis
from ragkit.store.folder import DB_NAME, FolderStore
from ragkit.store.folder import doctor as folder_doctor
from ragkit.store.milvus.address import MilvusAddress, is_milvus, parse_milvus

if TYPE_CHECKING:
    from ragkit.store.milvus.store import MilvusStore

__all__ = [
    "Location",
    "create_store",
    "default_name",
    "diagnose",
    "display",
    "index_exists",
    "is_milvus",
    "open_store",
    "repair",
]

Location = str | Path
INSTALL_HINT = (
    "Milvus support needs pymilvus and milvus-lite: pip install 'ragkit-pipeline[milvus]'"
)


def _milvus() -> type[MilvusStore]:
    """The Milvus backend, imported on first use (an install hint when pymilvus is missing)."""
    try:
        from ragkit.store.milvus.store import MilvusStore
    except ImportError as error:
        raise InvalidArgumentError(f"{INSTALL_HINT} ({error})") from error
    return MilvusStore


def _address(location: Location) -> MilvusAddress | None:
    return parse_milvus(location) if isinstance(location, str) and is_milvus(location) else None


def display(location: Location) -> str:
    """``location`` as messages show it (a Milvus token never appears)."""
    address = _address(location)
    return address.display if address else str(location)


def default_name(location: Location) -> str:
    """A short name of the index: the folder's name, or the Milvus collection (what
    ``ragkit serve`` and ``flows serve`` call it when no name is given).

    Example:
        >>> default_name("milvus://db:19530/notes"), default_name("/srv/wiki")
        ('notes', 'wiki')
    """
    address = _address(location)
    return address.collection if address else Path(location).resolve().name


def index_exists(location: Location) -> bool:
    """Whether an index is at ``location`` (a Milvus server that cannot be reached is a
    :class:`RagkitError`, not "no index")."""
    address = _address(location)
    if address is None:
        return (Path(location) / DB_NAME).exists()
    return _milvus().exists(address)


def open_store(location: Location) -> IndexStore:
    """The index at ``location``; a missing one is a :class:`RagkitError` saying how to
    create it."""
    address = _address(location)
    return FolderStore.open(Path(location)) if address is None else _milvus().open(address)


def create_store(location: Location, settings: Settings, dimension: int) -> IndexStore:
    """A new, empty index at ``location`` (:class:`ragkit.store.IndexExistsError` when one is
    there already)."""
    address = _address(location)
    if address is None:
        return FolderStore.create(Path(location), settings, dimension)
    return _milvus().create(address, settings, dimension)


def diagnose(location: Location) -> Diagnosis:
    """``ragkit doctor``'s checks of the index at ``location`` (nothing changed)."""
    return _doctor(location, fix=False)


def repair(location: Location) -> Diagnosis:
    """``ragkit doctor --repair``: rebuild what can be derived again, then check."""
    return _doctor(location, fix=True)


def _doctor(location: Location, fix: bool) -> Diagnosis:
    address = _address(location)
    if address is None:
        return folder_doctor.repair(location) if fix else folder_doctor.diagnose(location)
    _milvus()  # the install hint when pymilvus is missing
    from ragkit.store.milvus import doctor as milvus_doctor

    return milvus_doctor.repair(address) if fix else milvus_doctor.diagnose(address)
