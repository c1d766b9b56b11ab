"""The ingest pipeline: one function per stage (:mod:`~ragkit.pipeline.stages`) and the one
sequence that orders them (:mod:`~ragkit.pipeline.ingest`).

Example:
    >>> from ragkit.config import Settings
    >>> matching_key("إِلَى", "ar", Settings())
    'الي'
"""

from ragkit.pipeline.ingest import Ingest
from ragkit.pipeline.report import IngestReport, ProgressCallback
from ragkit.pipeline.scheduling import IngestStages, LocalStages
from ragkit.pipeline.stages import (
    DocumentChunker,
    PreparedDocument,
    attach_vectors,
    chunk_embed,
    context_titles,
    embedding_texts,
    is_io_error,
    load,
    matching_key,
    normalize_document_chunks,
    prepare,
    sparse_terms,
)

__all__ = [
    "DocumentChunker",
    "Ingest",
    "IngestReport",
    "IngestStages",
    "LocalStages",
    "PreparedDocument",
    "ProgressCallback",
    "attach_vectors",
    "chunk_embed",
    "context_titles",
    "embedding_texts",
    "is_io_error",
    "load",
    "matching_key",
    "normalize_document_chunks",
    "prepare",
    "sparse_terms",
]
