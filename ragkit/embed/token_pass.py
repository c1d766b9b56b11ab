"""The encoder's vector of one token seen alone: the forward pass behind static vectors.

A static token vector starts from the encoder's last hidden states for the token between the
model's special tokens (``[CLS] token [SEP]``), averaged over those positions, as model2vec's
distillation computes it (mean pooling, every position attended). All such inputs have the
same short length, so many tokens go through in one batch without padding:
:class:`OnnxTokenPass` runs them on the encoder's checked ONNX copy
(:mod:`ragkit.embed.onnx_runtime`; all-minilm-l6-v2 about 1,400 tokens a second per thread,
multilingual-e5-small about 700, here), batches on the machine's threads at once;
:class:`TorchTokenPass` on the torch modules where no copy runs.

Example:
    >>> from ragkit.embed import Encoder
    >>> encoder = Encoder("all-minilm-l6-v2")  # doctest: +SKIP
    >>> token_pass = token_pass_for(encoder)  # doctest: +SKIP
    >>> token_pass(np.array([[101, 3684, 102]])).shape  # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragkit.embed.onnx_runtime import OnnxEncoder, stages
from ragkit.errors import RagkitError
from ragkit.threads import thread_count

if TYPE_CHECKING:
    from ragkit.embed.encoder import Encoder

log = logging.getLogger(__name__)

BATCH = 256  # tokens per run (model2vec's batch size)

TokenPass = Callable[[np.ndarray], np.ndarray]
"""Input ids (tokens × positions, int64) → mean last hidden state (tokens × d, float32)."""


class OnnxTokenPass:
    """Tokens through an ONNX Runtime session of the encoder (its checked copy), in batches of
    :data:`BATCH`, ``threads`` batches at once."""

    def __init__(self, session: Any, inputs: tuple[str, ...], threads: int) -> None:
        self.session = session
        self.inputs = inputs
        self.threads = threads

    def _batch(self, ids: np.ndarray) -> np.ndarray:
        columns = {
            "input_ids": ids,
            "attention_mask": np.ones_like(ids),
            "token_type_ids": np.zeros_like(ids),
        }
        (hidden,) = self.session.run(None, {name: columns[name] for name in self.inputs})
        return np.asarray(hidden, dtype=np.float32).mean(axis=1)

    def __call__(self, sequences: np.ndarray) -> np.ndarray:
        batches = [sequences[i : i + BATCH] for i in range(0, len(sequences), BATCH)]
        if len(batches) < 2 or self.threads < 2:
            parts = [self._batch(batch) for batch in batches]
        else:
            with ThreadPoolExecutor(min(self.threads, len(batches))) as pool:
                parts = list(pool.map(self._batch, batches))
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)


class TorchTokenPass:
    """Tokens through the torch transformer (``model[0].auto_model``), in batches of
    :data:`BATCH`."""

    def __init__(self, backbone: Any) -> None:
        self.backbone = backbone
        self.token_types = "token_type_ids" in inspect.signature(backbone.forward).parameters

    def __call__(self, sequences: np.ndarray) -> np.ndarray:
        import torch

        parts = []
        with torch.inference_mode():
            for start in range(0, len(sequences), BATCH):
                ids = torch.from_numpy(np.ascontiguousarray(sequences[start : start + BATCH]))
                named = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
                if self.token_types:
                    named["token_type_ids"] = torch.zeros_like(ids)
                hidden = self.backbone(**named).last_hidden_state.float()
                parts.append(hidden.mean(dim=1).numpy())
        return np.concatenate(parts) if parts else np.zeros((0, 0), dtype=np.float32)


def token_pass_for(encoder: Encoder) -> TokenPass:
    """The pass for ``encoder``'s model: its fp32 ONNX copy where one runs (the one its texts
    run on, or the checked copy beside an int8 encoder's), else its torch transformer."""
    threads = thread_count(os.environ)
    onnx = encoder.runtime()
    if onnx is not None and encoder.precision != "fp32":
        onnx = OnnxEncoder.checked(encoder.spec.name, Path(encoder.spec.location))
    if onnx is not None:
        return OnnxTokenPass(onnx.session, onnx.record.inputs, threads)
    transformer = stages(encoder.model)[0]
    backbone = getattr(transformer, "auto_model", None) or getattr(transformer, "model", None)
    if backbone is None:
        raise RagkitError(
            f"{encoder.spec.name}: the model's first module has no transformer to make static "
            'vectors from (set chunk_vectors = "encoder")'
        )
    return TorchTokenPass(backbone)
