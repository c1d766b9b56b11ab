"""Haystack 2 components (``pip install "ragkit-pipeline[haystack]"``): a retriever over a ragkit
index, a document store that is a ragkit index, and a splitter running ragkit's adaptive
chunker.

Their documents carry offsets the way Haystack's ``DocumentSplitter`` writes them:
``source_id`` (the document a passage comes from), ``split_idx_start`` and
``split_idx_end`` (``text[split_idx_start:split_idx_end]`` is the passage).

Example:
    >>> from haystack import Pipeline
    >>> pipeline = Pipeline()  # doctest: +SKIP
    >>> pipeline.add_component("retriever", RagkitRetriever("my-index", top_k=3))  # doctest: +SKIP
    >>> pipeline.run({"retriever": {"query": "boiling point"}})["retriever"]["documents"]  # doctest: +SKIP
    [Document(id=/docs/water.md:0-52, content: 'Water boils at 100 …', score: 0.93, …)]
"""

from ragkit.integrations.common import FrameworkNotInstalled

try:
    import haystack  # noqa: F401 - the framework, checked before any component loads
except ImportError as error:
    raise FrameworkNotInstalled.of("haystack-ai", "haystack", error) from error

try:  # Haystack 3 loads pipelines' classes from allowed modules only: these are plain settings
    from haystack.core.serialization import allow_deserialization_module
except ImportError:  # Haystack 2
    pass
else:
    allow_deserialization_module(__name__)

from ragkit.integrations.haystack.document_store import RagkitDocumentStore
from ragkit.integrations.haystack.filters import HaystackFilterError, haystack_filters
from ragkit.integrations.haystack.retriever import RagkitRetriever, hit_document
from ragkit.integrations.haystack.splitter import RagkitDocumentSplitter

__all__ = [
    "HaystackFilterError",
    "RagkitDocumentSplitter",
    "RagkitDocumentStore",
    "RagkitRetriever",
    "haystack_filters",
    "hit_document",
]
