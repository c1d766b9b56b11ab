"""A Milvus index coming into being and being opened: created by one process while others may
race it, opened after a server restart, refused when another ragkit's schema wrote it.

An index exists once its state collection holds its settings, written last by :func:`create`;
a process that finds some collections but no settings waits for the creator (up to
:data:`CREATION_WAIT` seconds). Opening loads every collection into memory (Milvus answers
nothing from a released collection, as after a restart).

Example:
    >>> state_row("generation", "3")["value"]
    '3'
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pymilvus import MilvusClient, MilvusException

from ragkit.config import Settings
from ragkit.errors import RagkitError
from ragkit.store.milvus import collections
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import SCHEMA_VERSION, guarded, names
from ragkit.store.store import IndexExistsError

__all__ = ["CREATION_WAIT", "connect_existing", "create", "exists", "state_row"]

CREATION_WAIT = 30.0  # seconds an open waits for an index another process is creating


def state_row(name: str, value: str) -> dict[str, Any]:
    """A row of the state collection."""
    return {"name": name, "value": value, "placeholder": collections.PLACEHOLDER}


def exists(address: MilvusAddress) -> bool:
    """Whether ``address`` holds a ragkit index (its settings are written)."""
    if address.embedded and not Path(address.uri).exists():
        return False  # connecting would create the file
    client = collections.connect(address)
    try:
        return _created(address, client) is True
    finally:
        client.close()


def create(address: MilvusAddress, settings: Settings, dimension: int) -> MilvusClient:
    """Create the collections of an empty index and write its settings last; a client of it.
    :class:`ragkit.store.IndexExistsError` when an index is there, or another process is
    creating it."""
    if address.embedded:
        Path(address.uri).parent.mkdir(parents=True, exist_ok=True)
    client = collections.connect(address)
    known = names(address.collection)
    try:
        if any(client.has_collection(name) for name in known.values()):
            raise IndexExistsError(f"{address.display}: already holds a ragkit index")
        collections.create(client, address.collection, dimension, address.shards)
        collections.create_state(client, address.collection)
    except MilvusException as error:
        client.close()
        if _has(address, known["state"]):  # another process won the race
            raise IndexExistsError(f"{address.display}: created meanwhile") from error
        raise collections.failed(address, "creating the index", error) from error
    except IndexExistsError:
        client.close()
        raise
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
    while (created := _created(address, client)) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if created is False:
        raise absent
    if created is None:
        raise RagkitError(
            f"{address.display}: the index was never finished (its creator stopped before "
            f"writing its settings); drop the collections {', '.join(known.values())} and "
            "ingest again"
        )
    missing = [name for name in known.values() if not client.has_collection(name)]
    if missing:
        raise RagkitError(
            f"{address.display}: collection {', '.join(missing)} missing; the index is "
            "damaged: drop its collections and ingest again"
        )
    for name in known.values():
        _load(address, client, name)
    rows = guarded(address, "reading the index state", client.query, known["state"],
                   filter='name == "schema"', output_fields=["value"])  # fmt: skip
    schema = int(rows[0]["value"]) if rows else 0
    if schema != SCHEMA_VERSION:
        raise RagkitError(
            f"{address.display}: written by a ragkit with Milvus schema {schema}, this one "
            f"reads schema {SCHEMA_VERSION}; export it with that version "
            "(`ragkit export --vectors`) and ingest again into a new collection"
        )


def _created(address: MilvusAddress, client: MilvusClient) -> bool | None:
    """True when the index at ``address`` exists, False when none of its collections do,
    None while it is being created (some collections, no settings yet)."""
    known = names(address.collection)
    if guarded(address, "looking for the index", client.has_collection, known["state"]):
        _load(address, client, known["state"])
        settings = guarded(address, "reading the index state", client.query, known["state"],
                           filter='name == "settings"', output_fields=["name"])  # fmt: skip
        if settings:
            return True
    present = guarded(address, "looking for the index", client.list_collections)
    return None if set(known.values()) & set(present) else False


def _load(address: MilvusAddress, client: MilvusClient, collection: str) -> None:
    """Load ``collection`` into memory unless it is (a restarted Milvus, or one whose
    collections were released, answers nothing until they are)."""
    state = guarded(address, "loading", client.get_load_state, collection)
    if "Loaded" not in str(state.get("state")):
        replicas = {"replica_number": address.replicas} if address.replicas > 1 else {}
        guarded(address, f"loading {collection}", client.load_collection, collection, **replicas)


def _has(address: MilvusAddress, collection: str) -> bool:
    """Whether ``collection`` exists, asked on a new connection."""
    client = collections.connect(address)
    try:
        return bool(client.has_collection(collection))
    finally:
        client.close()
