"""Encoder wrapper: prefixes, batching, normalized float32 vectors.

Example:
    >>> encoder = Encoder("all-minilm-l6-v2")  # doctest: +SKIP
    >>> encoder.encode_queries(["boiling point of water"]).shape  # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragkit.embed.models import load_encoder, model_spec
from ragkit.embed.onnx_query import OnnxQueryEncoder
from ragkit.errors import RagkitError
from ragkit.normalize.unicode import text_only

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class Encoder:
    """Embeds queries and passages with the prefixes the model was trained with.

    :attr:`on_passages`, when set, is called as ``(done, total)`` after each batch of every
    :meth:`encode_passages` call (whoever calls it: chunk scoring or the chunk vectors), so a
    progress display moves while a long call runs.

    The sentence-transformers model (and torch) loads at the first use of :attr:`model`. Every
    single query runs on ONNX Runtime where it can (:mod:`ragkit.embed.onnx_query`), so one
    process never mixes two runtimes' vectors: with a copy an earlier process checked, without
    loading torch or the model at all (``ragkit query``); otherwise the copy is exported and
    checked beside the model first (:meth:`onnx_queries`, once per machine: ``Index.ingest``
    and ``ragkit serve`` do it ahead); where it cannot run, through the torch modules
    (:meth:`_forward`).
    """

    def __init__(self, model_name: str, batch_size: int = 32) -> None:
        self.spec = model_spec(model_name)
        self._model: SentenceTransformer | None = None
        self.batch_size = batch_size
        self.on_passages: Callable[[int, int], None] | None = None
        self._onnx: OnnxQueryEncoder | None = None
        self._onnx_tried = False
        self._onnx_lock = threading.Lock()

    @property
    def model(self) -> SentenceTransformer:
        """The sentence-transformers model, loaded at first use (once per process)."""
        if self._model is None:
            self._model = load_encoder(self.spec.location)
        return self._model

    @property
    def dimension(self) -> int:
        dimension = self.model.get_embedding_dimension()
        if dimension is None:
            raise RagkitError(f"model {self.spec.name!r}: its output has no fixed dimension")
        return int(dimension)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.model.encode(
            [text_only(t) for t in texts],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _forward(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of a few texts from one forward pass of the model's modules: the same
        numbers as :meth:`_encode`, without ``encode``'s per-call setup (device checks, mode
        switches, length sorting), which costs milliseconds next to a short query's pass."""
        import torch

        if self.model.training:  # a caller fine-tuning the model left dropout on
            self.model.eval()
        features = self.model.preprocess([text_only(t) for t in texts])
        threads = torch.get_num_threads()
        if len(texts) == 1:
            # One short text: splitting its small products across threads costs more than it
            # saves (median 20-token queries: 18-20 ms on one thread, 23-26 ms on two, on 2
            # cores; 27-29 against 39 ms with other work running). torch counts per thread.
            torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                vectors = self.model(features)["sentence_embedding"]
                vectors = torch.nn.functional.normalize(vectors, dim=-1)
        finally:
            torch.set_num_threads(threads)
        return np.ascontiguousarray(vectors.numpy(), dtype=np.float32)

    @property
    def loaded(self) -> bool:
        """Whether the sentence-transformers model is loaded in this encoder."""
        return self._model is not None

    def prepare_query_copy(self) -> None:
        """Export and check the ONNX copy now unless a checked one exists (``Index.ingest``
        calls it after embedding, so later ``ragkit query`` processes start without torch)."""
        if OnnxQueryEncoder.needs_preparing(self.spec.name, Path(self.spec.location)):
            self.onnx_queries()

    def onnx_queries(self) -> OnnxQueryEncoder | None:
        """The ONNX Runtime copy single queries run on, prepared once beside the torch model
        (None: torch)."""
        with self._onnx_lock:
            if self._onnx is None and not self._onnx_tried:
                self._onnx = OnnxQueryEncoder.for_model(self.model, self.spec.name)
                self._onnx_tried = True
        return self._onnx

    def query_runtime(self) -> OnnxQueryEncoder | None:
        """What single queries run on, ready after this call: a checked copy while the torch
        model is not loaded (no torch import at all), else the copy prepared beside the model,
        else None (torch)."""
        if self._onnx is None and self._model is None and not self._onnx_tried:
            with self._onnx_lock:
                self._onnx = OnnxQueryEncoder.checked(self.spec.name, Path(self.spec.location))
        return self._onnx if self._onnx is not None else self.onnx_queries()

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Query vectors; a single query (a search's) runs on ONNX Runtime where it can, up to
        one batch of queries takes one direct forward pass (:meth:`_forward`), more go through
        batched encoding."""
        texts = [self.spec.query_prefix + q for q in queries]
        if len(texts) == 1 and (onnx := self.query_runtime()) is not None:
            return onnx([text_only(texts[0])])
        if 0 < len(texts) <= self.batch_size:
            return self._forward(texts)
        return self._encode(texts)

    def encode_passages(
        self, passages: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Embed passages in batches, calling ``progress(n_done_in_batch)`` after each batch.

        Passages are taken longest first across the whole call (sentence-transformers sorts
        only within each of its calls), so batches hold texts of like length and pad little;
        the vectors come back in the given order."""
        parts: list[np.ndarray] = []
        step = self.batch_size * 8
        order = sorted(range(len(passages)), key=lambda i: -len(passages[i]))
        ordered = [passages[i] for i in order]
        for start in range(0, len(ordered), step):
            batch = ordered[start : start + step]
            parts.append(self._encode([self.spec.passage_prefix + p for p in batch]))
            if progress:
                progress(len(batch))
            if self.on_passages:
                self.on_passages(start + len(batch), len(passages))
        if not parts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.empty((len(ordered), parts[0].shape[1]), dtype=np.float32)
        vectors[order] = np.concatenate(parts)
        return vectors
