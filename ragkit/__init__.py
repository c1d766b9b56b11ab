"""ragkit: multilingual RAG preprocessing, indexing and retrieval on a laptop CPU.

Example:
    >>> from ragkit import Index, Settings
    >>> Settings().embedding_model
    'auto'
    >>> __version__.count(".") >= 1
    True
"""

from ragkit.threads import apply_thread_policy

apply_thread_policy()  # before anything below loads torch, faiss or OpenMP (ragkit.threads)

from importlib.metadata import PackageNotFoundError, version

from ragkit.chunking import Chunk
from ragkit.config import Settings
from ragkit.documents import Block, Document, Record
from ragkit.errors import (
    BackendUnavailableError,
    IndexBusyError,
    IndexDamagedError,
    IndexExistsError,
    IndexNotFoundError,
    InputRefusedError,
    InvalidArgumentError,
    NotFoundError,
    RagkitError,
    SettingsMismatchError,
)
from ragkit.index import Hit, Index
from ragkit.pipeline import IngestReport

try:
    __version__ = version("ragkit-pipeline")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "BackendUnavailableError",
    "Block",
    "Chunk",
    "Document",
    "Hit",
    "Index",
    "IndexBusyError",
    "IndexDamagedError",
    "IndexExistsError",
    "IndexNotFoundError",
    "IngestReport",
    "InputRefusedError",
    "InvalidArgumentError",
    "NotFoundError",
    "RagkitError",
    "Record",
    "Settings",
    "SettingsMismatchError",
]
