"""The indexes a server answers for: opened once, models loaded once, read-only.

Each index (a folder or a Milvus collection) is opened as an :class:`ragkit.Index`; its
searches follow the last generation a ``ragkit ingest`` (or a flow) committed
(:meth:`ragkit.store.IndexStore.refresh`), so a server
never needs a restart to see new documents. Encoders are loaded at start-up
(:func:`ragkit.embed.models.load_encoder` keeps one per model for the whole process); a
reranker on the first search that asks for one.

Example:
    >>> [(each.name, str(each.path)) for each in parse_locations(["docs=/srv/docs", "wiki"])]
    [('docs', '/srv/docs'), ('wiki', 'wiki')]
    >>> parse_locations(["milvus://db:19530/notes"])[0].name
    'notes'
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragkit.embed.models import AUTO_MODEL
from ragkit.errors import BackendUnavailableError, IndexNotFoundError, NotFoundError, RagkitError
from ragkit.index import Index
from ragkit.serve.inspection import DocumentTexts, explanations
from ragkit.serve.schemas import IndexHealth, IndexSummary, SearchRequest, SearchResponse
from ragkit.store import DB_NAME
from ragkit.store.address import Location, default_name, display, is_milvus

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
log = logging.getLogger(__name__)


def folder_identity(location: Location) -> tuple[int, int] | None:
    """Device and inode of an index folder's database (None: no database there; a Milvus
    collection has a fixed identity). A folder deleted and built again has another one.

    Example:
        >>> folder_identity("milvus://db:19530/notes")
        (0, 0)
        >>> folder_identity(Path("/nonexistent/index")) is None
        True
    """
    if is_milvus(location):
        return (0, 0)
    try:
        info = os.stat(Path(location) / DB_NAME)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


class UnknownIndexError(NotFoundError):
    """A request named an index the server does not serve (HTTP 404)."""


@dataclass(frozen=True)
class IndexLocation:
    """A served index: the name requests use and where it is (a folder or a Milvus
    address, :mod:`ragkit.store.address`)."""

    name: str
    path: Location


def parse_locations(arguments: Sequence[str]) -> list[IndexLocation]:
    """``PATH`` or ``NAME=PATH`` per index (``PATH``: a folder, ``milvus://…`` or
    ``milvus-lite://…``); a name defaults to the folder's name or the Milvus collection. Names
    must be unique and made of letters, digits, ``.``, ``_`` and ``-``."""
    locations: list[IndexLocation] = []
    for argument in arguments:
        name, separator, path = argument.partition("=")
        if not separator or is_milvus(argument):
            path = argument
            name = default_name(argument)
        if not _NAME.fullmatch(name):
            raise RagkitError(
                f"index name {name!r} ({argument}): use letters, digits, '.', '_' and '-', "
                "or name it with NAME=PATH"
            )
        if any(each.name == name for each in locations):
            raise RagkitError(
                f"two indexes named {name!r}; name them apart with NAME=PATH, e.g. {name}2={path}"
            )
        locations.append(IndexLocation(name, path if is_milvus(path) else Path(path)))
    if not locations:
        raise RagkitError("no index to serve: give one or more index folders")
    return locations


class ServedIndexes:
    """Open indexes by name; safe to search from many threads at once."""

    def __init__(self, locations: Sequence[IndexLocation], warm: bool = True) -> None:
        self.paths = {each.name: each.path for each in locations}
        self._indexes = {each.name: Index.open(each.path) for each in locations}
        self._identities = {each.name: folder_identity(each.path) for each in locations}
        self._locks = {each.name: threading.Lock() for each in locations}
        self._texts = DocumentTexts()  # the documents hits are shown in (explain)
        if warm:
            for index in self._indexes.values():
                if index.settings.embedding_model != AUTO_MODEL:
                    # what queries run on (a checked ONNX copy, else the model) now, not at
                    # the first query
                    index.encoder.runtime()

    @property
    def names(self) -> list[str]:
        return list(self._indexes)

    def get(self, name: str | None) -> tuple[str, Index]:
        """The index called ``name`` (``None``: the only one served)."""
        if name is None:
            if len(self._indexes) != 1:
                raise UnknownIndexError(
                    f"this server holds {len(self._indexes)} indexes; name one of "
                    f"{', '.join(self._indexes)} in 'index'"
                )
            name = self.names[0]
        if name not in self._indexes:
            raise UnknownIndexError(
                f"no index named {name!r}; this server holds {', '.join(self._indexes)}"
            )
        identity = folder_identity(self.paths[name])
        if identity != self._identities[name]:
            self._reopen(name, identity)
        return name, self._indexes[name]

    def _reopen(self, name: str, identity: tuple[int, int] | None) -> None:
        """Open index ``name`` again: its folder was deleted and built again (another
        database file) since it was opened, and the old handle reads the deleted one."""
        with self._locks[name]:
            if self._identities[name] == identity:
                return  # another request reopened it meanwhile
            if identity is None:
                raise IndexNotFoundError(
                    f"{display(self.paths[name])}: no ragkit index there any more (deleted "
                    "since the server started)"
                )
            stale = self._indexes[name]
            self._indexes[name] = Index.open(self.paths[name])
            self._identities[name] = identity
            log.info("%s: the index folder was built again; reopened", self.paths[name])
            stale.close()

    def search(self, request: SearchRequest) -> SearchResponse:
        """:meth:`ragkit.Index.search` with the request's arguments."""
        name, index = self.get(request.index)
        if request.rerank:
            with self._locks[name]:
                _ = index.reranker  # loaded once, even when requests arrive together
        options = request.options()
        if not request.explain:
            hits = index.search(request.query, options)
            return SearchResponse(index=name, generation=index.store.generation, hits=hits)
        explained = index.explain(request.query, options)
        return SearchResponse(
            index=name,
            generation=index.store.generation,
            hits=[each.hit for each in explained],
            explanations=explanations(index, explained, self._texts),
        )

    def health(self) -> list[IndexHealth]:
        """Each index's state: its backend asked for the last commit (a Milvus collection
        released by a restart is loaded again on the way)."""
        states = []
        for name in self.names:
            try:
                self.get(name)[1].store.refresh()
            except RagkitError as error:  # a folder deleted since: "error"
                state = "unavailable" if isinstance(error, BackendUnavailableError) else "error"
                states.append(IndexHealth(name=name, state=state, detail=str(error)))
            else:
                states.append(IndexHealth(name=name))
        return states

    def summaries(self) -> list[IndexSummary]:
        """Every served index with its current generation and counts."""
        summaries = []
        for name in self.names:
            _, index = self.get(name)
            index.store.refresh()
            counts = index.store.counts()
            summaries.append(
                IndexSummary(
                    name=name,
                    path=display(self.paths[name]),
                    generation=index.store.generation,
                    embedding_model=index.store.settings.embedding_model,
                    documents=counts["documents"],
                    chunks=counts["chunks"],
                )
            )
        return summaries

    def close(self) -> None:
        for index in self._indexes.values():
            index.close()
