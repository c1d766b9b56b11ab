"""A ragkit index's own encoder as a LlamaIndex embedding model: :class:`RagkitEmbedding`.

Example:
    >>> embedding = RagkitEmbedding("my-index")  # doctest: +SKIP
    >>> len(embedding.get_query_embedding("boiling point of water"))  # doctest: +SKIP
    384
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragkit.embed import Encoder
from ragkit.embed.models import AUTO_MODEL, choose_model
from ragkit.index import Index
from ragkit.integrations.common import FrameworkNotInstalled, open_index
from ragkit.normalize.detect import detect_language
from ragkit.pipeline import matching_key
from ragkit.pipeline.stages import embeds_normalized
from ragkit.query.analyze import query_vector, route

try:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr
except ImportError as error:
    raise FrameworkNotInstalled.of("llama-index-core", "llama-index", error) from error

Embedding = list[float]


class RagkitEmbedding(BaseEmbedding):
    """The encoder of a ragkit index (``index``: an open :class:`~ragkit.Index` or its
    location) as a LlamaIndex ``BaseEmbedding``, so LlamaIndex embeds with the index's model
    and never reaches for another (OpenAI by default).

    A query is embedded as :meth:`ragkit.Index.search` embeds it (routed to the index's
    languages, normalized where the index embeds normalized text, with the model's query
    prefix), a text as ingest embeds a chunk (its language detected, normalized likewise,
    with the passage prefix), so the vectors compare with the index's stored ones. An index
    whose model is still ``auto`` (nothing added yet) embeds with the model ragkit would choose
    for the texts' languages.

    Example:
        >>> from llama_index.core import Settings
        >>> Settings.embed_model = RagkitEmbedding("my-index")  # doctest: +SKIP
    """

    _index: Index = PrivateAttr()
    _chosen: dict[str, Encoder] = PrivateAttr(default_factory=dict)

    def __init__(self, index: Index | str | Path, **kwargs: Any) -> None:
        opened = open_index(index)
        kwargs.setdefault("model_name", opened.settings.embedding_model)
        kwargs.setdefault("embed_batch_size", max(opened.settings.embed_batch_size, 1))
        super().__init__(**kwargs)
        self._index = opened

    @classmethod
    def class_name(cls) -> str:
        return "RagkitEmbedding"

    def _encoder(self, texts: Sequence[str]) -> Encoder:
        """The index's encoder; for an ``auto`` index, the one its first ingest of ``texts``
        would choose."""
        if self._index.settings.embedding_model != AUTO_MODEL:
            return self._index.encoder
        characters: Counter[str] = Counter()
        for text in texts:
            characters[detect_language(text)] += len(text)
        name, _ = choose_model(dict(characters))
        if name not in self._chosen:
            self._chosen[name] = Encoder(name, self._index.settings.embed_batch_size)
        return self._chosen[name]

    def _get_query_embedding(self, query: str) -> Embedding:
        index = self._index
        languages = route(query, None, index.store)
        vector = query_vector(query, languages, index.settings, lambda: self._encoder([query]))
        return [float(x) for x in vector]

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._get_text_embeddings([text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        settings = self._index.settings
        shown = []
        for text in texts:
            language = detect_language(text)
            normalized = embeds_normalized(language, settings)
            shown.append(matching_key(text, language, settings) if normalized else text)
        vectors = self._encoder(texts).encode_passages(shown)
        return [[float(x) for x in vector] for vector in vectors]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await asyncio.to_thread(self._get_query_embedding, query)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return await asyncio.to_thread(self._get_text_embedding, text)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)
