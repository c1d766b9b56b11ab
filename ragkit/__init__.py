"""ragkit: multilingual RAG preprocessing, indexing and retrieval on a laptop CPU.

Example:
    >>> from ragkit import Index, Settings
    >>> Settings().embedding_model
    'auto'
"""

from ragkit.chunking import Chunk
from ragkit.config import Settings
from ragkit.documents import Block, Document
from ragkit.errors import RagkitError
from ragkit.index import Hit, Index
from ragkit.pipeline import IngestReport

__all__ = [
    "Block",
    "Chunk",
    "Document",
    "Hit",
    "Index",
    "IngestReport",
    "RagkitError",
    "Settings",
]
