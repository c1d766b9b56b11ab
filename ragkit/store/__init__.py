"""Storage: the store interface and its two backends, an index folder and Milvus.

- :mod:`~ragkit.store.base`: :class:`IndexStore`, what ingest and search need of a backend;
- :mod:`~ragkit.store.address`: an index location (a folder, ``milvus://``,
  ``milvus-lite://``) opened or created as its backend;
- :mod:`~ragkit.store.store`: :class:`Store`, the folder: SQLite rows + FAISS + BM25 with
  atomic commits;
- :mod:`~ragkit.store.milvus`: :class:`~ragkit.store.milvus.MilvusStore`, the same interface
  over a Milvus collection;
- :mod:`~ragkit.store.schema`: the SQLite tables, connection settings and migrations;
- :mod:`~ragkit.store.manifest`: ``MANIFEST.json`` (generation, counts, checksums);
- :mod:`~ragkit.store.lock`: the single-writer lock;
- :mod:`~ragkit.store.doctor`: checks an index folder and repairs what can be derived again.

Example:
    >>> from ragkit.store import DB_NAME
    >>> DB_NAME
    'ragkit.sqlite'
"""

from ragkit.store.base import IndexStore
from ragkit.store.records import DocumentEntry, PendingDocument, StoredChunk
from ragkit.store.schema import DB_NAME
from ragkit.store.store import IndexExistsError, Store

__all__ = [
    "DB_NAME",
    "DocumentEntry",
    "IndexExistsError",
    "IndexStore",
    "PendingDocument",
    "Store",
    "StoredChunk",
]
