"""``RagkitDocumentSplitter``: a Haystack ``@component`` splitting documents with ragkit's
adaptive chunker, or by Haystack's units (words, sentences, passages, pages, lines).

Example:
    >>> splitter = RagkitDocumentSplitter(split_length=64, chunker="sentence")
    >>> [d.content for d in splitter.run([Document(content="One. Two.")])["documents"]]
    ['One. Two.']
    >>> by_sentence = RagkitDocumentSplitter(split_by="sentence", split_length=1)
    >>> [d.content for d in by_sentence.run([Document(content="One. Two.")])["documents"]]
    ['One. ', 'Two.']
"""

import asyncio
from copy import deepcopy
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict

from ragkit.chunking import counter_for
from ragkit.chunking.types import Span
from ragkit.embed.models import AUTO_MODEL
from ragkit.errors import InvalidArgumentError, RagkitError
from ragkit.integrations.common import TextChunker
from ragkit.integrations.haystack.units import (
    UNITS,
    overlapped,
    page_number,
    unit_spans,
    windows,
)
from ragkit.normalize import detect_language

# No ``from __future__ import annotations`` here: Haystack 2 matches sockets by the run
# methods' evaluated annotations.

TOKEN = "token"
REFUSED = {
    "period": "split_by='sentence' cuts at ragkit's sentence boundaries, which keep numbers "
    "(3.14) and abbreviations (Dr., e.g.) whole",
    "function": "a splitting function is Haystack's DocumentSplitter(split_by='function', "
    "splitting_function=…)",
}


@component
class RagkitDocumentSplitter:
    """Splits documents with ragkit's adaptive chunker: every candidate chunker runs on each
    document and the best by ragkit's chunk metrics is kept (or the one ``chunker`` names:
    ``fixed``, ``sentence``, ``recursive``, ``structure``, ``semantic``).

    ``split_by`` says what ``split_length`` and ``split_overlap`` count:

    - ``token`` (the default): ``split_length`` is a budget in tokens of the document's
      language (ragkit's tokenizers) for the chunker; with ``split_overlap``, each split after
      the first also holds the last whole words, at most ``split_overlap`` tokens, of the one
      before.
    - ``word``, ``sentence``, ``passage``, ``page``, ``line``: Haystack's ``DocumentSplitter``
      units, ``split_length`` of them per split, ``split_overlap`` shared with the split
      before (words, passages, pages and lines end at ``" "``, ``"\n\n"``, ``"\f"``,
      ``"\n"`` as Haystack's do; sentences at ragkit's multilingual sentence boundaries, no
      NLTK needed). ``chunker``, ``model``, ``weights`` and ``markdown`` shape ``token``
      splits only.
    - ``period`` and ``function`` are refused, with what to use instead.

    Each split copies its document's ``meta`` and adds, as Haystack's ``DocumentSplitter``
    does, ``source_id``, ``page_number``, ``split_id``, ``split_idx_start`` (and with an
    overlap ``_split_overlap``: the neighbouring splits' ids and the shared ranges), and also
    ``split_idx_end`` and ``chunker`` (the chunker chosen for the document, or
    ``<unit>-<split_length>``). ``model`` embeds sentences for the metrics (``auto``: by
    language), ``markdown`` reads headings, lists and code as blocks, ``language`` overrides
    detection.

    Example:
        >>> splitter = RagkitDocumentSplitter(split_length=64, chunker="sentence")
        >>> split = splitter.run(documents=[Document(content="One. Two.")])["documents"][0]
        >>> split.meta["split_idx_start"], split.meta["split_idx_end"], split.meta["chunker"]
        (0, 9, 'sentence')
        >>> words = RagkitDocumentSplitter(split_by="word", split_length=3, split_overlap=1)
        >>> [d.content for d in words.run([Document(content="a b c d e")])["documents"]]
        ['a b c ', 'c d e']
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
        split_overlap: int = 0,
        split_by: str = TOKEN,
    ) -> None:
        _check_split(split_by, split_length, split_overlap)
        self.split_length = split_length
        self.chunker = chunker
        self.model = model
        self.weights = weights
        self.markdown = markdown
        self.language = language
        self.skip_empty_documents = skip_empty_documents
        self.split_overlap = split_overlap
        self.split_by = split_by
        self._chunk: TextChunker | None = None
        if split_by == TOKEN:
            self._chunk = TextChunker(chunker, split_length, model, weights, markdown, language)
            return
        shaping = {"chunker": chunker != "adaptive", "model": model != AUTO_MODEL,
                   "weights": weights is not None, "markdown": markdown}  # fmt: skip
        if any(shaping.values()):
            given = ", ".join(name for name, set_ in shaping.items() if set_)
            raise InvalidArgumentError(
                f"RagkitDocumentSplitter(split_by={split_by!r}): {given} shape(s) "
                "split_by='token' splits only (ragkit's chunkers); leave them out, or split by "
                "token"
            )

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
            split_overlap=self.split_overlap,
            split_by=self.split_by,
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
        texts = [d.content or "" for d in kept]
        for document, text, (spans, label) in zip(kept, texts, self._spans(texts), strict=True):
            made = [
                Document(
                    content=text[start:end],
                    meta=deepcopy(document.meta)
                    | {
                        "source_id": document.id,
                        "page_number": page_number(text, start, end),
                        "split_id": number,
                        "split_idx_start": start,
                        "split_idx_end": end,
                        "chunker": label,
                    },
                )
                for number, (start, end) in enumerate(spans)
            ]
            if self.split_overlap:
                _mark_overlaps(made, spans)
            splits.extend(made)
        return {"documents": splits}

    def _spans(self, texts: list[str]) -> list[tuple[list[Span], str]]:
        """Each text's split spans and the label of what cut it."""
        if self._chunk is not None:
            return [
                (
                    overlapped(c.text, c.chunks, self.split_overlap, counter_for(c.language)),
                    c.chosen,
                )
                for c in self._chunk(texts)
            ]
        label = f"{self.split_by}-{self.split_length}"
        found = []
        for text in texts:
            language = self.language or (
                detect_language(text) if self.split_by == "sentence" else ""
            )
            units = unit_spans(text, self.split_by, language)
            spans = windows(units, self.split_length, self.split_overlap)
            found.append(
                ([s for s in spans if s[1] > s[0] or not self.skip_empty_documents], label)
            )
        return found

    @component.output_types(documents=list[Document])
    async def run_async(self, documents: list[Document]) -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread, for async pipelines."""
        return await asyncio.to_thread(self.run, documents)


def _check_split(split_by: Any, split_length: Any, split_overlap: Any) -> None:
    """Refuse a ``split_by`` ragkit does not offer and lengths that are no split."""
    if split_by in REFUSED:
        raise InvalidArgumentError(
            f"RagkitDocumentSplitter(split_by={split_by!r}): not offered; {REFUSED[split_by]}"
        )
    if split_by not in (TOKEN, *UNITS):
        raise InvalidArgumentError(
            f"RagkitDocumentSplitter(split_by={split_by!r}): split by {', '.join((TOKEN, *UNITS))}"
        )
    for name, value, least in (
        ("split_length", split_length, 1),
        ("split_overlap", split_overlap, 0),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InvalidArgumentError(
                f"RagkitDocumentSplitter({name}={value!r}): give a whole number ≥ {least}"
            )
    if split_overlap >= split_length:
        raise InvalidArgumentError(
            f"RagkitDocumentSplitter(split_overlap={split_overlap}): give less than "
            f"split_length ({split_length}), or every split would repeat the one before"
        )


def _mark_overlaps(splits: list[Document], spans: list[Span]) -> None:
    """Haystack's ``_split_overlap`` meta: each split lists the neighbours it shares text with
    (their ids and the shared range, in the neighbour's offsets)."""
    for split in splits:
        split.meta["_split_overlap"] = []
    for position in range(1, len(splits)):
        (previous_start, previous_end), (start, _) = spans[position - 1], spans[position]
        if start < previous_end:
            before, after = splits[position - 1], splits[position]
            shared = (start - previous_start, previous_end - previous_start)
            after.meta["_split_overlap"].append({"doc_id": before.id, "range": shared})
            before.meta["_split_overlap"].append(
                {"doc_id": after.id, "range": (0, previous_end - start)}
            )
