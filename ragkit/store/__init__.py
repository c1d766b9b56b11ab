"""Storage: the store interface, the types and pieces both backends share, and the two
backends, an index folder and Milvus.

- :mod:`~ragkit.store.base`: the interface, split by who calls it — :class:`IndexReader`
  (search and query reads), :class:`IndexWriter` (ingest writes), :class:`IndexMaintenance`
  (re-analysis, near-duplicates, settings) — and :class:`IndexStore`, all three;
- :mod:`~ragkit.store.records`: the types crossing the interface;
- :mod:`~ragkit.store.address`: an index location (a folder, ``milvus://``,
  ``milvus-lite://``) opened, created or diagnosed as its backend;
- :mod:`~ragkit.store.consistent`: a search reads one generation;
- :mod:`~ragkit.store.filters` and :mod:`~ragkit.store.catalog`: the filter language and the
  SQL over document rows both backends evaluate;
- :mod:`~ragkit.store.language_rules` and :mod:`~ragkit.store.tokenizers`: the language rules
  and tokenizers an index was analyzed with;
- :mod:`~ragkit.store.diagnosis`: :class:`~ragkit.store.diagnosis.Diagnosis`, what ``ragkit
  doctor`` found;
- :mod:`~ragkit.store.folder`: :class:`FolderStore`, the index folder: SQLite rows + FAISS +
  BM25 with atomic commits;
- :mod:`~ragkit.store.milvus`: :class:`~ragkit.store.milvus.MilvusStore`, the same interface
  over Milvus collections.

Neither backend imports the other; only :mod:`~ragkit.store.address` knows both.

Example:
    >>> from ragkit.store import DB_NAME
    >>> DB_NAME
    'ragkit.sqlite'
"""

from ragkit.errors import IndexExistsError
from ragkit.store.base import IndexMaintenance, IndexReader, IndexStore, IndexWriter
from ragkit.store.folder import DB_NAME, FolderStore
from ragkit.store.records import DocumentEntry, PendingDocument, StoredChunk

__all__ = [
    "DB_NAME",
    "DocumentEntry",
    "FolderStore",
    "IndexExistsError",
    "IndexMaintenance",
    "IndexReader",
    "IndexStore",
    "IndexWriter",
    "PendingDocument",
    "StoredChunk",
]
