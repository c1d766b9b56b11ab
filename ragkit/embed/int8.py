"""The int8 copy of an encoder: ONNX Runtime's dynamic quantization of the checked fp32 copy.

``embedding_precision = "int8"`` (an index setting) embeds passages and queries with this copy:
its weights (matrix products and the token embedding table) stored as 8-bit integers with one
scale per output channel, activations quantized on the fly (``quantize_dynamic``). It is made
once per model and machine from the fp32 copy (:mod:`ragkit.embed.onnx_runtime`), without torch
(all-minilm-l6-v2 ~2 s, 22 MB; multilingual-e5-small ~10 s, 120 MB), checked against it on the
probe texts (cosine at least :data:`AGREEMENT`: a quantization gone wrong is refused, not used)
and recorded beside it (``….int8.onnx.checked.json``). Its vectors are close to fp32's, not
equal (per-channel int8 on Cranfield abstracts: cosine ~0.994 on average), so an index keeps
the precision it was built with (a Fixed setting) and never mixes the two.

``embedding_precision = "auto"`` (the default) is int8 for the models in :data:`INT8_BY_DEFAULT`
and fp32 for every other one (:func:`resolve_precision`), resolved when the index's model is
known and stored resolved.

Example:
    >>> int8_path(Path("/cache/models/onnx/all-minilm-l6-v2-1a2b.onnx")).name
    'all-minilm-l6-v2-1a2b.int8.onnx'
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import cast

import numpy as np

from ragkit.embed.models import MINILM_NAMES
from ragkit.embed.onnx_runtime import (
    PROBES,
    CheckedCopy,
    OnnxEncoder,
    Precision,
    remove_if_changed,
    runtime_choice,
    session_of,
)
from ragkit.errors import RagkitError
from ragkit.paths import file_sha256

log = logging.getLogger(__name__)

AGREEMENT = 0.97  # least cosine between an int8 probe vector and the fp32 one
AUTO_PRECISION = "auto"
INT8_BY_DEFAULT = MINILM_NAMES
"""Models whose ``auto`` precision is int8: on the sets ``auto`` gives them (English: Cranfield,
its known-item spans, the Python and Debian handbook heading tuning sets, CISI) int8 nDCG@10 stays
within 0.005 of fp32, dense and hybrid (``python -m benchmarks.int8_quality``, results in
``benchmarks/results/int8_quality*.json``). multilingual-e5-small stays fp32: its dense
nDCG@10 drops 0.039 on Bukhari known-item spans."""


def resolve_precision(model: str, precision: str) -> Precision:
    """The precision ``precision`` is for ``model``: itself, or for ``auto`` int8 where the
    model is in :data:`INT8_BY_DEFAULT` and ONNX Runtime may run (``RAGKIT_EMBED_RUNTIME`` is
    not ``torch``: int8 has no torch path), else fp32.

    Example:
        >>> resolve_precision("multilingual-e5-small", "auto"), resolve_precision("m", "int8")
        ('fp32', 'int8')
        >>> resolve_precision("all-minilm-l6-v2", "auto") in ("int8", "fp32")  # by runtime
        True
    """
    if precision != AUTO_PRECISION:
        return cast(Precision, precision)
    if model in INT8_BY_DEFAULT and runtime_choice() != "torch":
        return "int8"
    return "fp32"


_QUANTIZING = threading.Lock()


def int8_path(fp32: Path) -> Path:
    """Where the int8 copy of the fp32 copy at ``fp32`` is kept: beside it."""
    return fp32.with_name(fp32.name.removesuffix(".onnx") + ".int8.onnx")


def int8_copy(fp32: OnnxEncoder) -> OnnxEncoder:
    """The int8 encoder of the fp32 encoder ``fp32`` (same tokenizer, pooling and record):
    quantized and checked first when its copy is missing or changed.

    Raises:
        RagkitError: the quantized copy's vectors are too far from fp32's (it is removed).
    """
    path = int8_path(fp32.path)
    record = CheckedCopy.record_of(path)
    remove_if_changed(path)
    if path.exists() and record.exists():
        return OnnxEncoder(path, CheckedCopy.read_from(record), fp32.tokenize)
    quantize(fp32.path, path)
    quantized = OnnxEncoder(path, fp32.record, fp32.tokenize)
    least = agreement(quantized(PROBES), fp32(PROBES))
    if least < AGREEMENT:
        path.unlink(missing_ok=True)
        raise RagkitError(
            f"{path}: int8 vectors at cosine {least:.3f} from fp32 (at least {AGREEMENT} "
            'expected); removed. Use embedding_precision = "fp32"'
        )
    quantized.record = CheckedCopy(**{**asdict(fp32.record), "sha256": file_sha256(path)})
    if CheckedCopy.record_of(fp32.path).exists():  # its tokenizer.json alone will do later
        quantized.record.write_to(path)
    return quantized


def quantize(source: Path, path: Path) -> None:
    """Write the int8 copy of the ONNX graph at ``source`` to ``path`` (per-channel int8
    weights, dynamic activations), optimized for loading, through temporary files."""
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from onnxruntime.quantization.quant_utils import add_pre_process_metadata
    except ImportError as error:
        raise RagkitError(
            "embedding_precision int8 needs ONNX Runtime's quantizer: pip install onnxruntime onnx"
        ) from error
    log.warning("quantizing %s to int8, once per model and machine, into %s", source.name, path)
    clock = time.perf_counter()
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    optimized = scratch.with_suffix(".optimized.tmp")
    try:
        with _QUANTIZING:
            model = onnx.load(source)
            # The fp32 copy is already what the quantizer's pre-processing makes (optimized by
            # ONNX Runtime); the fused operators shape inference does not know take their type
            # from DefaultTensorType (1 = float).
            add_pre_process_metadata(model)
            quantize_dynamic(
                model,
                scratch,
                per_channel=True,
                weight_type=QuantType.QInt8,
                extra_options={"DefaultTensorType": 1},
            )
        session_of(scratch, optimized_to=optimized)
        os.replace(optimized, path)
    finally:
        scratch.unlink(missing_ok=True)
        optimized.unlink(missing_ok=True)
    log.warning("int8 encoder ready in %.0f s", time.perf_counter() - clock)


def agreement(first: np.ndarray, second: np.ndarray) -> float:
    """The least cosine between matching rows of two sets of unit vectors.

    Example:
        >>> agreement(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32))
        1.0
    """
    return float(np.min(np.sum(first * second, axis=1)))
