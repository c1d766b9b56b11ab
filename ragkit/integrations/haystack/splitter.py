"""``RagkitDocumentSplitter``: a Haystack ``@component`` splitting documents with ragkit's
adaptive chunker.

Example:
    >>> splitter = RagkitDocumentSplitter(split_length=64, chunker="sentence")
    >>> [d.content for d in splitter.run([Document(content="One. Two.")])["documents"]]
    ['One. Two.']
"""

import asyncio
from copy import deepcopy
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from ragkit.embed.models import AUTO_MODEL
from ragkit.errors import RagkitError
from ragkit.integrations.common import TextChunker

# No ``from __future__ import annotations`` here: Haystack 2 matches sockets by the run
# methods' evaluated annotations.


@component
class RagkitDocumentSplitter:
    """Splits documents with ragkit's adaptive chunker: every candidate chunker runs on each
    document and the best by ragkit's chunk metrics is kept (or the one ``chunker`` names:
    ``fixed``, ``sentence``, ``recursive``, ``structure``, ``semantic``).

    ``split_length`` is a budget in tokens of the document's language (ragkit's
    tokenizers); splits do not overlap. Each split copies its document's ``meta`` and adds,
    as Haystack's ``DocumentSplitter`` does, ``source_id``, ``page_number`` (form feeds
    before it, plus one), ``split_id`` and ``split_idx_start``, and also ``split_idx_end``
    and ``chunker`` (the chunker chosen for the document). ``model`` embeds sentences for the
    metrics (``auto``: by language), ``markdown`` reads headings, lists and code as blocks,
    ``language`` overrides detection.

    Example:
        >>> splitter = RagkitDocumentSplitter(split_length=64, chunker="sentence")
        >>> split = splitter.run(documents=[Document(content="One. Two.")])["documents"][0]
        >>> split.meta["split_idx_start"], split.meta["split_idx_end"], split.meta["chunker"]
        (0, 9, 'sentence')
    """

    def __init__(
        self,
        split_length: int = 256,
        chunker: str = "adaptive",
        model: str = AUTO_MODEL,
        weights: dict[str, float] | None = None,
        markdown: bool = False,
        language: str | None = None,
        skip_empty_documents: bool = True,
    ) -> None:
        self.split_length = split_length
        self.chunker = chunker
        self.model = model
        self.weights = weights
        self.markdown = markdown
        self.language = language
        self.skip_empty_documents = skip_empty_documents
        self._chunk = TextChunker(chunker, split_length, model, weights, markdown, language)

    def to_dict(self) -> dict[str, Any]:
        """The component as a dict."""
        return default_to_dict(
            self,
            split_length=self.split_length,
            chunker=self.chunker,
            model=self.model,
            weights=self.weights,
            markdown=self.markdown,
            language=self.language,
            skip_empty_documents=self.skip_empty_documents,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RagkitDocumentSplitter":
        """The component :meth:`to_dict` wrote."""
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        """Split ``documents`` (chunked in one batch).

        :param documents: Haystack documents with text ``content``.
        :returns: ``{"documents": [...]}``, the splits of each document in order.
        """
        if not isinstance(documents, list) or not all(isinstance(d, Document) for d in documents):
            raise RagkitError("RagkitDocumentSplitter takes a list of Haystack Documents")
        for document in documents:
            if document.content is None:
                raise RagkitError(
                    f"document {document.id}: no text content (RagkitDocumentSplitter splits text)"
                )
        kept = [d for d in documents if d.content or not self.skip_empty_documents]
        splits: list[Document] = []
        for document, chunked in zip(
            kept, self._chunk([d.content or "" for d in kept]), strict=True
        ):
            for number, chunk in enumerate(chunked.chunks):
                meta = deepcopy(document.meta) | {
                    "source_id": document.id,
                    "page_number": chunked.text.count("\f", 0, chunk.start) + 1,
                    "split_id": number,
                    "split_idx_start": chunk.start,
                    "split_idx_end": chunk.end,
                    "chunker": chunked.chosen,
                }
                splits.append(Document(content=chunk.text, meta=meta))
        return {"documents": splits}

    @component.output_types(documents=list[Document])
    async def run_async(self, documents: list[Document]) -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread, for async pipelines."""
        return await asyncio.to_thread(self.run, documents)
