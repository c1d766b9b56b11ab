"""One query through ONNX Runtime: the same vector as the torch model, in about half the time.

A single short query is what a search embeds, and on a CPU a 20-token pass through torch's
eager modules costs more in per-operator overhead than in arithmetic. ONNX Runtime runs the
same graph (exported once from the loaded model, fused by its optimizer) on one thread without
that overhead: all-minilm-l6-v2, 100 Cranfield queries on 2 cores, median 8 ms against 15 ms
through :meth:`ragkit.embed.Encoder._forward`, vectors equal to 1e-6 (``benchmarks/latency.py``
reports the ratio).

The export is ragkit's own (``torch.onnx.export`` of the transformer, then the model's own
pooling and normalization in numpy) rather than sentence-transformers' ``backend="onnx"``: that
backend exports through ``optimum`` and still pays ``encode``'s per-call setup, which is the
cost this module removes. Only models laid out as ``Transformer → Pooling (mean or cls) →
Normalize?`` run here; anything else, a missing ``onnxruntime``, or a copy whose vectors differ
from torch's on the probe texts (checked every time a session starts) keeps the torch path.

The copy lives at ``<cache>/models/onnx/<model>-<key>.onnx`` (``RAGKIT_CACHE``), the key
naming the weight files it came from. It is exported once (all-minilm-l6-v2 ~6 s, 90 MB;
multilingual-e5-small ~25 s, 470 MB), stored already optimized so that later sessions start
without the optimizer (0.2 s / 1.2 s), and written to a temporary file and renamed so that two
processes exporting at once both end with a whole file. ``RAGKIT_QUERY_RUNTIME`` chooses:
``auto`` (default: ONNX Runtime when installed), ``onnx`` (required: an error when it cannot
run) or ``torch``.

Example:
    >>> runtime_choice({"RAGKIT_QUERY_RUNTIME": "torch"})
    'torch'
    >>> runtime_choice({})
    'auto'
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ragkit.errors import RagkitError
from ragkit.paths import cache_dir

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

RUNTIMES = ("auto", "onnx", "torch")
# Texts both runtimes embed whenever a session starts; a copy whose vectors differ by more than
# TOLERANCE on any of them is not used (a stale or damaged file, an export that went wrong).
PROBES = ("ab", "heat transfer", "ما هو أثر الحرارة على سطح الجناح عند السرعات العالية؟")
TOLERANCE = 1e-4
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model")


def runtime_choice(environ: Mapping[str, str] = os.environ) -> str:
    """``RAGKIT_QUERY_RUNTIME`` checked: ``auto``, ``onnx`` or ``torch``."""
    value = environ.get("RAGKIT_QUERY_RUNTIME", "auto").strip().lower() or "auto"
    if value not in RUNTIMES:
        raise RagkitError(
            f"RAGKIT_QUERY_RUNTIME={value!r}: give one of {', '.join(RUNTIMES)} "
            "(auto: ONNX Runtime for single queries when installed)"
        )
    return value


def export_key(location: Path) -> str:
    """A short hash of the weight and config files under ``location`` (names, sizes, times):
    a changed model folder gets a new copy.

    Example:
        >>> export_key(Path("/no/such/model/folder"))  # no files: the hash of nothing
        'e3b0c44298fc1c14'
    """
    digest = hashlib.sha256()
    for path in sorted(location.rglob("*")):
        if path.is_file() and path.suffix in _WEIGHT_SUFFIXES:
            stat = path.stat()
            digest.update(
                f"{path.relative_to(location)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
            )
    return digest.hexdigest()[:16]


def stages(model: SentenceTransformer) -> list[Any]:
    """The modules of ``model`` in order (Transformer, Pooling, …), untyped as torch lists them."""
    return list(model)


class _Hidden(torch.nn.Module):
    """The transformer's last hidden state from named inputs: the graph that is exported."""

    def __init__(self, transformer: torch.nn.Module, inputs: Sequence[str]) -> None:
        super().__init__()
        self.transformer = transformer
        self.inputs = tuple(inputs)

    def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
        return self.transformer(**dict(zip(self.inputs, tensors, strict=True))).last_hidden_state


class OnnxQueryEncoder:
    """Embeds a few texts (already prefixed) with ONNX Runtime on one thread, pooled and
    normalized as the sentence-transformers ``model`` would; build it with :meth:`for_model`.

    Example:
        >>> from ragkit.embed import Encoder
        >>> encoder = Encoder("all-minilm-l6-v2")  # doctest: +SKIP
        >>> onnx = OnnxQueryEncoder.for_model(encoder.model, "all-minilm-l6-v2")  # doctest: +SKIP
        >>> onnx(["heat transfer"]).shape  # doctest: +SKIP
        (1, 384)
    """

    def __init__(self, model: SentenceTransformer, session: Any, inputs: Sequence[str]) -> None:
        self.model = model
        self.session = session
        self.inputs = tuple(inputs)
        modules = stages(model)
        self.pooling = str(modules[1].get_config_dict()["pooling_mode"])
        self.normalize = len(modules) == 3

    @staticmethod
    def layout_supported(model: SentenceTransformer) -> bool:
        """Whether ``model`` is ``Transformer → Pooling (mean or cls) → Normalize?``."""
        names = [type(module).__name__ for module in model]
        if names not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return False
        pooling = stages(model)[1].get_config_dict()
        return pooling.get("pooling_mode") in ("mean", "cls") and pooling.get(
            "include_prompt", True
        )

    @classmethod
    def for_model(cls, model: SentenceTransformer, name: str) -> OnnxQueryEncoder | None:
        """An encoder over ``model``'s exported copy (exported on first use), or None when
        this model or machine cannot run it (logged; an error if ``RAGKIT_QUERY_RUNTIME=onnx``)."""
        choice = runtime_choice()
        if choice == "torch":
            return None
        try:
            return cls._build(model, name)
        except (ImportError, RagkitError, RuntimeError, OSError, ValueError) as error:
            if choice == "onnx":
                raise RagkitError(
                    f"RAGKIT_QUERY_RUNTIME=onnx: {name} cannot run on ONNX Runtime ({error})"
                ) from error
            log.info("queries of %s run on torch: %s", name, error)
            return None

    @classmethod
    def _build(cls, model: SentenceTransformer, name: str) -> OnnxQueryEncoder:
        import onnxruntime  # noqa: F401  (not installed: ImportError, the torch path)

        if not cls.layout_supported(model):
            raise RagkitError("only Transformer → Pooling (mean, cls) → Normalize models export")
        location = Path(str(stages(model)[0].auto_model.name_or_path))
        if not location.is_dir():
            raise RagkitError(f"model folder {location} not found on disk")
        inputs = [n for n in model.tokenizer.model_input_names if n != "position_ids"]
        safe_name = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        path = cache_dir() / "models" / "onnx" / f"{safe_name}-{export_key(location)}.onnx"
        try:
            return cls._open(model, inputs, path)
        except RagkitError as error:  # a damaged or stale copy: removed, exported again once
            log.warning("%s; exporting it again", error)
            return cls._open(model, inputs, path)

    @classmethod
    def _open(cls, model: SentenceTransformer, inputs: list[str], path: Path) -> OnnxQueryEncoder:
        """The encoder over ``path`` (exported first if missing); a copy that cannot be loaded
        or fails :meth:`check` is removed and the error raised."""
        if not path.exists():
            example = model.preprocess(["an example query"])
            export(stages(model)[0].auto_model, {name: example[name] for name in inputs}, path)
        try:
            encoder = cls(model, session_of(path), inputs)
        except Exception as error:  # onnxruntime raises its own Fail/InvalidProtobuf types
            path.unlink(missing_ok=True)
            raise RagkitError(f"{path} could not be loaded ({error}); removed") from error
        try:
            encoder.check(path)
        except RagkitError:
            path.unlink(missing_ok=True)
            raise
        return encoder

    def check(self, path: Path) -> None:
        """Raise unless this copy's vectors of :data:`PROBES` equal the torch model's (within
        :data:`TOLERANCE`)."""
        with torch.inference_mode():
            features = self.model.preprocess(list(PROBES))
            expected = self.model(features)["sentence_embedding"].numpy()
        found = np.vstack([self([text]) for text in PROBES])
        difference = float(np.abs(found - expected).max())
        if difference > TOLERANCE:
            raise RagkitError(
                f"{path} gives vectors {difference:.1e} away from the model's; removed"
            )

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Float32 vectors of ``texts`` (tokenized exactly as the model tokenizes them)."""
        features = self.model.preprocess(list(texts))
        feed = {name: features[name].numpy().astype(np.int64) for name in self.inputs}
        (hidden,) = self.session.run(None, feed)
        if self.pooling == "cls":
            vectors = hidden[:, 0]
        else:
            mask = features["attention_mask"].numpy()[..., None].astype(np.float32)
            vectors = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        if self.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(vectors, dtype=np.float32)


_EXPORTING = threading.Lock()


def session_of(path: Path, optimized_to: Path | None = None) -> Any:
    """An ONNX Runtime session on one thread over ``path``, an optimized copy (no optimizer
    run), or, with ``optimized_to``, over a raw export whose optimized graph it writes there."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # one short query: threads cost more than they save
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    levels = onnxruntime.GraphOptimizationLevel
    if optimized_to is None:
        options.graph_optimization_level = levels.ORT_DISABLE_ALL
    else:  # extended: fused attention, layer norm and GELU kernels, none tied to this CPU
        options.graph_optimization_level = levels.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(optimized_to)
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def export(transformer: torch.nn.Module, example: Mapping[str, torch.Tensor], path: Path) -> None:
    """Write ``transformer``'s graph (inputs named as in ``example``, a tokenized text; output
    the last hidden state; batch and length dynamic), optimized by ONNX Runtime, to ``path``
    through temporary files in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    log.info("exporting the query encoder to ONNX once: %s", path)
    inputs = list(example)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*inputs, "hidden")}
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    optimized = scratch.with_suffix(".optimized.tmp")
    graph = _Hidden(transformer, inputs).eval()
    try:
        with _EXPORTING, warnings.catch_warnings(), torch.inference_mode(False):
            warnings.simplefilter("ignore")  # tracer notes on shapes the export makes dynamic
            torch.onnx.export(
                graph,
                tuple(example.values()),
                str(scratch),
                input_names=inputs,
                output_names=["hidden"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        session_of(scratch, optimized_to=optimized)
        os.replace(optimized, path)
    finally:
        scratch.unlink(missing_ok=True)
        optimized.unlink(missing_ok=True)
