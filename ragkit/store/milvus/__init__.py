"""The Milvus backend: a ragkit index in Milvus Lite (an embedded file, or ``milvus-lite
server`` for tests), Milvus Standalone or Milvus Distributed, through one pymilvus client.

- :mod:`~ragkit.store.milvus.address`: ``milvus://`` and ``milvus-lite://`` locations;
- :mod:`~ragkit.store.milvus.collections`: the four collections of an index and the client;
- :mod:`~ragkit.store.milvus.terms`: ragkit's sparse terms spelled for Milvus's BM25;
- :mod:`~ragkit.store.milvus.rows`: documents to rows and back;
- :mod:`~ragkit.store.milvus.selection`: filters and globs with the folder store's rules;
- :mod:`~ragkit.store.milvus.statistics`: BM25 statistics of the visible chunks, and scores;
- :mod:`~ragkit.store.milvus.store`: :class:`~ragkit.store.milvus.store.MilvusStore`.

This package's ``__init__`` imports nothing from pymilvus, so parsing a location costs
nothing; :func:`ragkit.store.address.open_store` imports the store when it is used.

Example:
    >>> from ragkit.store.milvus.address import is_milvus
    >>> is_milvus("milvus-lite:///tmp/ragkit.db")
    True
"""
