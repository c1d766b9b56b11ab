"""Documents: discover files, load them by file type, keep their block structure.

- :mod:`~ragkit.documents.discovery`: which files under the given paths are ingested, and why
  the others are skipped;
- :mod:`~ragkit.documents.load`: the :class:`Document` record and one loader per file type
  (text, Markdown, HTML, PDF, JSONL).

Example:
    >>> from ragkit.documents import text_blocks
    >>> [b.kind for b in text_blocks("# Title\\n\\nBody.", markdown=True)]
    ['heading', 'paragraph']
"""

from ragkit.documents.discovery import SkippedFile, discover, display_path
from ragkit.documents.load import (
    Block,
    Document,
    LoadResult,
    content_hash,
    iter_batches,
    load_file,
    load_paths,
    max_file_bytes,
    text_blocks,
)

__all__ = [
    "Block",
    "Document",
    "LoadResult",
    "SkippedFile",
    "content_hash",
    "discover",
    "display_path",
    "iter_batches",
    "load_file",
    "load_paths",
    "max_file_bytes",
    "text_blocks",
]
