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
from typing import TYPE_CHECKING, get_args

import numpy as np

from ragkit.embed.int8 import AUTO_PRECISION, int8_copy, resolve_precision
from ragkit.embed.models import load_encoder, model_spec
from ragkit.embed.onnx_runtime import OnnxEncoder, Precision, runtime_choice
from ragkit.errors import RagkitError
from ragkit.normalize.unicode import text_only

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

PRECISIONS: tuple[str, ...] = (AUTO_PRECISION, *get_args(Precision))


class Encoder:
    """Embeds queries and passages with the prefixes the model was trained with.

    Passages and queries run on ONNX Runtime where they can (:mod:`ragkit.embed.onnx_runtime`),
    one runtime for the whole process (:meth:`runtime`, chosen at the first use): with a copy an
    earlier process checked, without importing torch at all (``ragkit ingest``, ``ragkit
    query``); otherwise the copy is exported and checked beside the torch model first (once
    per machine); where it cannot run, through the torch modules (loaded at the first use of
    :attr:`model`). ``precision="int8"`` embeds with the int8 copy (:mod:`ragkit.embed.int8`;
    ``"auto"``: the model's own, :func:`~ragkit.embed.int8.resolve_precision`),
    which has no torch path.
    """

    def __init__(self, model_name: str, batch_size: int = 32, precision: str = "fp32") -> None:
        if precision not in PRECISIONS:
            raise RagkitError(
                f"embedding_precision {precision!r}: give one of {', '.join(PRECISIONS)}"
            )
        self.spec = model_spec(model_name)
        self.precision = resolve_precision(self.spec.name, precision)
        self._model: SentenceTransformer | None = None
        self.batch_size = batch_size
        self._onnx: OnnxEncoder | None = None
        self._runtime_chosen = False
        self._lock = threading.Lock()

    @property
    def model(self) -> SentenceTransformer:
        """The sentence-transformers model, loaded at first use (once per process)."""
        if self._model is None:
            self._model = load_encoder(self.spec.location)
        return self._model

    @property
    def dimension(self) -> int:
        onnx = self.runtime()
        dimension = onnx.dimension if onnx else self.model.get_embedding_dimension()
        if dimension is None:
            raise RagkitError(f"model {self.spec.name!r}: its output has no fixed dimension")
        return int(dimension)

    def runtime(self) -> OnnxEncoder | None:
        """The ONNX copy every text of this encoder runs on, or None (torch), chosen at the
        first call."""
        with self._lock:
            if not self._runtime_chosen:
                self._onnx = self._open_runtime()
                self._runtime_chosen = True
        return self._onnx

    def _open_runtime(self) -> OnnxEncoder | None:
        """A checked copy (no torch) if there is one, else the copy made and checked beside
        the torch model, else None; the int8 copy of it for ``precision="int8"``."""
        name, location = self.spec.name, Path(self.spec.location)
        onnx = None
        if self._model is None:  # copies an earlier process checked: no torch
            onnx = OnnxEncoder.checked(name, location, self.precision)
            if onnx is not None:
                return onnx
            if self.precision != "fp32":  # the int8 copy is made from the fp32 one
                onnx = OnnxEncoder.checked(name, location)
        if onnx is None:
            onnx = OnnxEncoder.for_model(self.model, name)
        if self.precision == "fp32":
            return onnx
        if onnx is None:
            raise RagkitError(
                f"embedding_precision int8: {name} cannot run on ONNX Runtime here (runtime "
                f"{runtime_choice()}; see the log), and int8 has no torch path; give an index "
                'embedding_precision = "fp32"'
            )
        return int8_copy(onnx)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of texts through sentence-transformers' ``encode`` (torch)."""
        vectors = self.model.encode(
            [text_only(t) for t in texts],
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _forward(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of a few texts from one forward pass of the torch modules: the same
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

    def _vectors(self, texts: Sequence[str], onnx: OnnxEncoder | None) -> np.ndarray:
        """Vectors of ``texts`` (prefixed, in order): on ``onnx``, else torch's batches of
        :attr:`batch_size`."""
        if onnx is None:
            return self._encode(texts)
        return onnx([text_only(t) for t in texts])

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """Query vectors: on the ONNX copy where it runs, else one direct torch pass for up to
        one batch (:meth:`_forward`), batched encoding for more."""
        texts = [self.spec.query_prefix + q for q in queries]
        onnx = self.runtime()
        if onnx is not None or not 0 < len(texts) <= self.batch_size:
            return self._vectors(texts, onnx)
        return self._forward(texts)

    def encode_passages(
        self, passages: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """Embed passages in steps of eight batches, calling ``progress(n_done_in_step)`` after
        each.

        Passages are taken longest first across the whole call: torch's batches then hold
        texts of like length and pad little, and ONNX Runtime's threads start on the longest
        texts and end together; the vectors come back in the given order."""
        if not passages:
            return np.zeros((0, self.dimension), dtype=np.float32)
        onnx = self.runtime()
        parts: list[np.ndarray] = []
        step = self.batch_size * 8
        order = sorted(range(len(passages)), key=lambda i: -len(passages[i]))
        ordered = [self.spec.passage_prefix + passages[i] for i in order]
        for start in range(0, len(ordered), step):
            batch = ordered[start : start + step]
            parts.append(self._vectors(batch, onnx))
            if progress:
                progress(len(batch))
        vectors = np.empty((len(ordered), parts[0].shape[1]), dtype=np.float32)
        vectors[order] = np.concatenate(parts)
        return vectors
