"""The index folder backend: SQLite rows + FAISS vectors + BM25 terms on one machine, committed
by generation.

- :mod:`~ragkit.store.folder.store`: :class:`FolderStore`, the index folder with its atomic
  commits (:mod:`~ragkit.store.folder.reader`: its reads, :class:`FolderReader`);
- :mod:`~ragkit.store.folder.schema`: the SQLite tables, connection settings and migrations;
- :mod:`~ragkit.store.folder.vectors`: a generation's FAISS files (a main index and tail
  segments, named in SQLite);
- :mod:`~ragkit.store.folder.manifest`: ``MANIFEST.json`` (generation, counts, checksums);
- :mod:`~ragkit.store.folder.lock`: the single-writer lock;
- :mod:`~ragkit.store.folder.damage`: SQLite damage met while reading, one error naming the
  file;
- :mod:`~ragkit.store.folder.space`: a full disk met by a write, one error saying what was
  committed;
- :mod:`~ragkit.store.folder.stored`: documents read back whole;
- :mod:`~ragkit.store.folder.near_duplicates`: MinHash signatures and groups, outside the
  generations;
- :mod:`~ragkit.store.folder.metadata`: metadata SQLite cannot read as JSON (``NaN``);
- :mod:`~ragkit.store.folder.doctor`: checks an index folder and repairs what can be derived
  again.

It imports nothing from the Milvus backend (:mod:`ragkit.store.milvus`); both implement
:class:`ragkit.store.base.IndexStore`.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ragkit.config import Settings
    >>> store = FolderStore.create(Path(tempfile.mkdtemp()) / "idx", Settings(), dimension=4)
    >>> store.counts()
    {'documents': 0, 'chunks': 0, 'vectors': 0}
"""

from ragkit.store.folder.reader import FolderReader
from ragkit.store.folder.schema import DB_NAME
from ragkit.store.folder.store import FolderStore

__all__ = ["DB_NAME", "FolderReader", "FolderStore"]
