"""A Milvus index coming into being and being opened: created by one process while others may
race it, opened after a server restart, refused when another ragkit's schema wrote it.

:func:`create` makes the state collection first — it marks the other names as ragkit's — then
the chunk, document and text collections, and writes the settings last: an index exists once
its state collection holds its settings, and a process that finds the state collection without
settings waits for the creator (up to :data:`CREATION_WAIT` seconds). A collection with one of
the index's names but no state collection of the index beside it is someone else's — another
ragkit index's (``zz_documents`` is the chunk collection of the index ``zz_documents``) or
not ragkit's at all: ragkit neither writes it nor advises dropping it, and says what it is.
Opening loads every collection into memory (Milvus answers nothing from a released
collection, as after a restart).

Example:
    >>> state_row("generation", "3")["value"]
    '3'
    >>> _owners_of("zz_documents", "zz")
    ['zz_documents']
    >>> _owners_of("notes_texts", "zz")
    ['notes_texts', 'notes']
"""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import Any

from pymilvus import MilvusClient, MilvusException

from ragkit.config import Settings
from ragkit.errors import IndexDamagedError, IndexExistsError, RagkitError
from ragkit.store.milvus import collections
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import SCHEMA_VERSION, guarded, names

__all__ = ["CREATION_WAIT", "connect_existing", "create", "exists", "state_row"]

CREATION_WAIT = 30.0  # seconds an open waits for an index another process is creating
STATE_FIELDS = {"name", "value", "placeholder"}  # the schema of a ragkit state collection
SUFFIXES = ("_documents", "_texts", "_state")


class Found(Enum):
    """What an index's collection names hold."""

    ABSENT = "none of its collections"
    CREATING = "its state collection, no settings yet"
    READY = "a ragkit index"
    FOREIGN = "collections with its names that ragkit did not create for it"


def state_row(name: str, value: str) -> dict[str, Any]:
    """A row of the state collection."""
    return {"name": name, "value": value, "placeholder": collections.PLACEHOLDER}


def exists(address: MilvusAddress) -> bool:
    """Whether ``address`` holds a ragkit index (its settings are written); collections with
    its names that ragkit did not create for it are a :class:`RagkitError` saying what they
    are (neither opening nor creating an index there would do)."""
    if address.embedded and not Path(address.uri).exists():
        return False  # connecting would create the file
    client = collections.connect(address)
    try:
        found = _found(address, client)
        if found is Found.FOREIGN:
            raise _not_ours(address, client)
        return found is Found.READY
    finally:
        client.close()


def create(address: MilvusAddress, settings: Settings, dimension: int) -> MilvusClient:
    """Create the state collection, then the other collections of an empty index, and write
    its settings last; a client of it. :class:`ragkit.store.IndexExistsError` when an index is
    there, or another process is creating it; a :class:`RagkitError` saying what is there when
    a collection with one of its names is not ragkit's for this index."""
    if address.embedded:
        Path(address.uri).parent.mkdir(parents=True, exist_ok=True)
    client = collections.connect(address)
    known = names(address.collection)
    try:
        found = _found(address, client)
        if found is Found.FOREIGN:
            raise _not_ours(address, client)
        if found is not Found.ABSENT:
            raise IndexExistsError(f"{address.display}: already holds a ragkit index")
        collections.create_state(client, address.collection)
    except MilvusException as error:
        client.close()
        if _has(address, known["state"]):  # another process won the race
            raise IndexExistsError(f"{address.display}: created meanwhile") from error
        raise collections.failed(address, "creating the index", error) from error
    except RagkitError:
        client.close()
        raise
    try:
        collections.create(client, address.collection, dimension, address.shards)
    except MilvusException as error:
        client.close()
        raise collections.failed(address, "creating the index", error) from error
    values = {
        "settings": settings.model_dump_json(),
        "dimension": str(dimension),
        "schema": str(SCHEMA_VERSION),
        "generation": "0",
    }
    rows = [state_row(name, value) for name, value in values.items()]
    guarded(address, "creating the index", client.upsert, known["state"], rows)
    return client


def connect_existing(address: MilvusAddress) -> MilvusClient:
    """A client of the index at ``address``, its collections loaded. A missing index, one
    never finished, one missing a collection or written in another schema is a
    :class:`RagkitError` saying what to do."""
    absent = RagkitError(
        f"{address.display}: no ragkit index here; create one with "
        f"`ragkit ingest PATH --index {address.display}`"
    )
    if address.embedded and not Path(address.uri).exists():
        raise absent
    client = collections.connect(address)
    try:
        _check(address, client, absent)
    except RagkitError:
        client.close()
        raise
    return client


def _check(address: MilvusAddress, client: MilvusClient, absent: RagkitError) -> None:
    known = names(address.collection)
    deadline = time.monotonic() + CREATION_WAIT
    while (found := _found(address, client)) is Found.CREATING and time.monotonic() < deadline:
        time.sleep(0.2)
    if found is Found.ABSENT:
        raise absent
    if found is Found.FOREIGN:
        raise _not_ours(address, client)
    if found is Found.CREATING:
        raise RagkitError(
            f"{address.display}: the index was never finished (its creator stopped before "
            f"writing its settings); drop the collections {', '.join(_ours(address, client))} "
            "and ingest again"
        )
    missing = [name for name in known.values() if not client.has_collection(name)]
    if missing:
        raise IndexDamagedError(
            f"{address.display}: collection {', '.join(missing)} missing; the index is "
            f"damaged: drop its collections ({', '.join(_ours(address, client))}) and ingest "
            "again"
        )
    for name in known.values():
        collections.load(address, client, name)
    rows = guarded(address, "reading the index state", client.query, known["state"],
                   filter='name == "schema"', output_fields=["value"])  # fmt: skip
    schema = int(rows[0]["value"]) if rows else 0
    if schema != SCHEMA_VERSION:
        raise RagkitError(
            f"{address.display}: written by a ragkit with Milvus schema {schema}, this one "
            f"reads schema {SCHEMA_VERSION}; export it with that version "
            "(`ragkit export --vectors`) and ingest again into a new collection"
        )


def _found(address: MilvusAddress, client: MilvusClient) -> Found:
    """What the collection names of the index at ``address`` hold (ownership: a ragkit state
    collection of this index)."""
    known = names(address.collection)
    present = set(known.values()) & set(_listed(address, client))
    if not present:
        return Found.ABSENT
    if known["state"] not in present or not _is_state(address, client, known["state"]):
        return Found.FOREIGN
    collections.load(address, client, known["state"])
    settings = guarded(address, "reading the index state", client.query, known["state"],
                       filter='name == "settings"', output_fields=["name"])  # fmt: skip
    return Found.READY if settings else Found.CREATING


def _listed(address: MilvusAddress, client: MilvusClient) -> list[str]:
    return list(guarded(address, "looking for the index", client.list_collections))


def _is_state(address: MilvusAddress, client: MilvusClient, name: str) -> bool:
    """Whether the collection ``name`` has the fields of a ragkit state collection."""
    described = guarded(address, "looking for the index", client.describe_collection, name)
    return {field["name"] for field in described["fields"]} == STATE_FIELDS


def _owners_of(name: str, own: str) -> list[str]:
    """The other indexes whose collection ``name`` could be: the index ``name`` (its chunks),
    or the one it names with a suffix taken off."""
    bases = [name, *(name.removesuffix(s) for s in SUFFIXES if name.endswith(s))]
    return [base for base in bases if base and base != own]


def _owner(address: MilvusAddress, client: MilvusClient, name: str, listed: set[str]) -> str:
    """The other ragkit index that the collection ``name`` belongs to, or ''."""
    for base in _owners_of(name, address.collection):
        state = names(base)["state"]
        if name in names(base).values() and state in listed and _is_state(address, client, state):
            return base
    return ""


def _ours(address: MilvusAddress, client: MilvusClient) -> list[str]:
    """The index's collections that ragkit created for it (none that another index owns)."""
    listed = set(_listed(address, client))
    return [
        name
        for name in names(address.collection).values()
        if name in listed and not _owner(address, client, name, listed)
    ]


def _not_ours(address: MilvusAddress, client: MilvusClient) -> RagkitError:
    """The error for collection names of this index held by collections ragkit did not create
    for it: what each one is, and what to do — never to drop them."""
    listed = set(_listed(address, client))
    held = []
    for name in names(address.collection).values():
        if name in listed:
            owner = _owner(address, client, name, listed)
            held.append(
                f"{name} belongs to the ragkit index {owner!r}"
                if owner
                else f"{name} is not a ragkit collection of this index"
            )
    return RagkitError(
        f"{address.display}: no ragkit index here, and its collection names are taken: "
        f"{'; '.join(held)}; ragkit leaves collections it did not create alone: give this index "
        "another collection name"
    )


def _has(address: MilvusAddress, collection: str) -> bool:
    """Whether ``collection`` exists, asked on a new connection."""
    client = collections.connect(address)
    try:
        return bool(client.has_collection(collection))
    finally:
        client.close()
