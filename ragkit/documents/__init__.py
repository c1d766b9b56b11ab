"""Documents: discover files, load them by file type, keep their block structure.

- :mod:`~ragkit.documents.discovery`: which files under the given paths are ingested, and why
  the others are skipped;
- :mod:`~ragkit.documents.types`: the :class:`Document` record and its :class:`Block` spans;
- :mod:`~ragkit.documents.options`: include/exclude globs and the text field of records;
- :mod:`~ragkit.documents.formats`: one reader per file type (text, Markdown, reST, HTML, PDF,
  JSONL); :mod:`~ragkit.documents.records`: ``.json`` documents, ``.csv`` / ``.tsv`` rows;
- :mod:`~ragkit.documents.load`: bounded reads, the reader by suffix, whole folders;
  :mod:`~ragkit.documents.compressed`: ``.gz``, ``.bz2``, ``.xz`` files read as the file they
  hold, decompressed within the file limit;
- :mod:`~ragkit.documents.given`: records given from Python or standard input (no file).

Example:
    >>> from ragkit.documents import text_blocks
    >>> [b.kind for b in text_blocks("# Title\\n\\nBody.", markdown=True)]
    ['heading', 'paragraph']
"""

from ragkit.documents.discovery import SkippedFile, discover, display_path, document_key
from ragkit.documents.formats import text_blocks
from ragkit.documents.given import Record, record_documents
from ragkit.documents.load import (
    iter_batches,
    load_file,
    load_files,
    load_paths,
    max_file_bytes,
    reporting_reads,
)
from ragkit.documents.options import LoadOptions
from ragkit.documents.types import Block, Document, Identified, LoadResult, content_hash

__all__ = [
    "Block",
    "Document",
    "Identified",
    "LoadOptions",
    "LoadResult",
    "Record",
    "SkippedFile",
    "content_hash",
    "discover",
    "display_path",
    "document_key",
    "iter_batches",
    "load_file",
    "load_files",
    "load_paths",
    "max_file_bytes",
    "record_documents",
    "reporting_reads",
    "text_blocks",
]
