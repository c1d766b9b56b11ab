"""Passages and queries through ONNX Runtime: the same vectors as the torch model, faster.

On a CPU a pass through torch's eager modules costs more in per-operator overhead than a
runtime that executes the graph fused and planned once: ONNX Runtime runs the same graph
(exported once from the loaded model, fused by its optimizer) with the model's own pooling and
normalization done in numpy. Every text runs alone, on one thread (all-minilm-l6-v2, 100
Cranfield queries on 2 cores: median 8 ms against 15 ms through torch); the texts of a call
(passages) run on the machine's thread count at once (:func:`ragkit.threads.thread_count`), one
text per thread, through the same session: no padding, no barrier between threads, and a text's
vector never depends on the texts beside it (which int8's dynamic quantization would otherwise
make it do). Throughput against torch: ``benchmarks/onnx_passages.py``; vectors equal torch's
to 1e-5.

The export is ragkit's own (``torch.onnx.export`` of the transformer) rather than
sentence-transformers' ``backend="onnx"``: that backend exports through ``optimum`` and still
pays ``encode``'s per-call setup. Only models laid out as ``Transformer → Pooling (mean or cls)
→ Normalize?`` run here; anything else, a missing ``onnxruntime``, or a copy whose vectors
differ from torch's on the probe texts keeps the torch path.

The copy lives at ``<cache>/models/onnx/<model>-<key>.onnx`` (``RAGKIT_CACHE``), the key
naming the weight files it came from. It is exported once (all-minilm-l6-v2 ~6 s, 90 MB;
multilingual-e5-small ~25 s, 470 MB), stored already optimized so that later sessions start
without the optimizer (0.2 s / 1.2 s), and written to a temporary file and renamed so that two
processes exporting at once both end with a whole file. A copy started beside the loaded torch
model (:meth:`OnnxEncoder.for_model`) is checked against it on the probe texts, and then
``<copy>.checked.json`` is written (inputs, pooling, tokenizer file,
length limit, checksum); with that record a new process embeds passages and queries without
importing torch at all (:meth:`OnnxEncoder.checked`), through the model's own
``tokenizer.json`` (the ``tokenizers`` library), whose pieces were found equal to the model's.
The int8 copy beside it (:mod:`ragkit.embed.int8`) has a record of its own.

``RAGKIT_EMBED_RUNTIME`` chooses: ``auto`` (default: ONNX Runtime when installed), ``onnx``
(required: an error when it cannot run) or ``torch``.

Example:
    >>> runtime_choice({"RAGKIT_EMBED_RUNTIME": "torch"})
    'torch'
    >>> runtime_choice({})
    'auto'
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ragkit.environment import read
from ragkit.errors import RagkitError
from ragkit.paths import cache_dir, file_sha256
from ragkit.threads import thread_count

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

# Texts both runtimes embed when a copy is made beside the torch model; a copy whose vectors
# differ by more than TOLERANCE on any of them is not used (stale, damaged, a bad export).
PROBES = ("ab", "heat transfer", "ما هو أثر الحرارة على سطح الجناح عند السرعات العالية؟")
TOLERANCE = 1e-4
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model")

Precision = Literal["fp32", "int8"]
Features = dict[str, np.ndarray]  # input name → int64 array (texts × tokens)


def runtime_choice(environ: Mapping[str, str] | None = None) -> str:
    """``RAGKIT_EMBED_RUNTIME`` checked: ``auto``, ``onnx`` or ``torch``; where it is unset
    (or ``auto``), ``RAGKIT_QUERY_RUNTIME``, its name before passages ran on ONNX Runtime too.

    Example:
        >>> runtime_choice({"RAGKIT_QUERY_RUNTIME": "torch"})
        'torch'
    """
    chosen = read("embed_runtime", environ)
    return chosen if chosen != "auto" else read("query_runtime", environ)


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


def copy_path(name: str, location: Path, precision: Precision = "fp32") -> Path:
    """Where the ONNX copy of the model ``name`` in the folder ``location`` is kept (the int8
    copy: beside it, ``….int8.onnx``).

    Example:
        >>> copy_path("all-minilm-l6-v2", Path("/no/such"), "int8").name
        'all-minilm-l6-v2-e3b0c44298fc1c14.int8.onnx'
    """
    safe_name = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    kind = "" if precision == "fp32" else f".{precision}"
    return cache_dir() / "models" / "onnx" / f"{safe_name}-{export_key(location)}{kind}.onnx"


def copy_files(
    name: str, location: Path, precision: Precision = "fp32"
) -> tuple[Path, Path] | None:
    """The copy and its checked record for the model ``name`` in the folder ``location``
    (existing or not), or None where none is used (``RAGKIT_EMBED_RUNTIME=torch``, a model
    that is not a folder)."""
    if runtime_choice() == "torch" or not location.is_dir():
        return None
    path = copy_path(name, location, precision)
    return path, CheckedCopy.record_of(path)


def stages(model: SentenceTransformer) -> list[Any]:
    """The modules of ``model`` in order (Transformer, Pooling, …), untyped as torch lists them."""
    return list(model)


@dataclass(frozen=True)
class CheckedCopy:
    """What ``<copy>.checked.json`` records of a copy found equal to its torch model (or, for
    the int8 copy, close to the fp32 copy): enough to embed with the copy alone.

    Example:
        >>> import tempfile
        >>> copy = Path(tempfile.mkdtemp()) / "model.onnx"
        >>> record = CheckedCopy(("input_ids", "attention_mask"), "mean", True, "tokenizer.json", 512)
        >>> CheckedCopy.read_from(record.write_to(copy)) == record
        True
    """

    inputs: tuple[str, ...]
    pooling: str  # mean or cls
    normalize: bool
    tokenizer: str  # the model's tokenizer file, relative to its folder
    max_length: int  # tokens a text is truncated to
    sha256: str = ""  # of the copy when it was checked; verified before every load

    @staticmethod
    def record_of(path: Path) -> Path:
        return path.with_name(path.name + ".checked.json")

    def write_to(self, path: Path) -> Path:
        """Write the record beside the copy at ``path`` (temporary file, then rename)."""
        record = self.record_of(path)
        scratch = record.with_name(f".{record.name}.{os.getpid()}.tmp")
        scratch.write_text(json.dumps(asdict(self)), encoding="utf-8")
        os.replace(scratch, record)
        return record

    @classmethod
    def read_from(cls, record: Path) -> CheckedCopy:
        values = json.loads(record.read_text(encoding="utf-8"))
        return cls(**{**values, "inputs": tuple(values["inputs"])})


class PieceTokenizer:
    """The model's ``tokenizer.json`` through the ``tokenizers`` library, truncating to
    ``max_length`` and padding a batch to its longest text, as sentence-transformers does.

    Example:
        >>> from ragkit.embed.models import model_spec
        >>> folder = Path(model_spec("all-minilm-l6-v2").location)
        >>> pieces = PieceTokenizer(folder / "tokenizer.json", 256, ("input_ids", "attention_mask"))
        >>> pieces(["heat transfer"])["input_ids"].tolist()
        [[101, 3684, 4651, 102]]
    """

    def __init__(self, path: Path, max_length: int, inputs: Sequence[str]) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(path))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.no_padding()
        self.inputs = tuple(inputs)

    def __call__(self, texts: Sequence[str]) -> Features:
        encodings = self.tokenizer.encode_batch(list(texts))
        longest = max(len(e.ids) for e in encodings)
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        features = {}
        for name in ("attention_mask", *self.inputs):
            rows = np.zeros((len(encodings), longest), dtype=np.int64)
            for row, values in zip(rows, columns[name], strict=True):
                row[: len(values)] = values
            features[name] = rows
        return features


class OnnxEncoder:
    """Embeds texts (already prefixed) with ONNX Runtime, pooled and normalized as the
    sentence-transformers model would: each text alone on one intra-op thread, the texts of
    one call on :attr:`threads` at once. Build it with :meth:`for_model` (beside the loaded
    model) or :meth:`checked` (from a checked copy alone).

    Example:
        >>> from ragkit.embed import Encoder
        >>> encoder = Encoder("all-minilm-l6-v2")  # doctest: +SKIP
        >>> onnx = OnnxEncoder.for_model(encoder.model, "all-minilm-l6-v2")  # doctest: +SKIP
        >>> onnx(["heat transfer", "wing flutter"]).shape  # doctest: +SKIP
        (2, 384)
    """

    def __init__(
        self, path: Path, record: CheckedCopy, tokenize: Callable[[Sequence[str]], Features]
    ) -> None:
        self.path = path
        self.record = record
        self.tokenize = tokenize
        self.threads = thread_count(os.environ)
        self.session = session_of(path)  # loads now: a copy that cannot load fails here

    @property
    def dimension(self) -> int:
        """The length of this copy's vectors (its hidden size)."""
        size = self.session.get_outputs()[0].shape[-1]
        if not isinstance(size, int):
            raise RagkitError(f"{self.path}: its output has no fixed dimension")
        return size

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
    def for_model(cls, model: SentenceTransformer, name: str) -> OnnxEncoder | None:
        """An encoder over ``model``'s copy (exported on first use) and checked against it, or
        None when this model or machine cannot run it (logged; an error if
        ``RAGKIT_EMBED_RUNTIME=onnx``)."""
        choice = runtime_choice()
        if choice == "torch":
            return None
        try:
            return cls._build(model, name)
        except Exception as error:  # an optimization: in auto mode it never fails a search
            if choice == "onnx":
                raise RagkitError(
                    f"RAGKIT_EMBED_RUNTIME=onnx: {name} cannot run on ONNX Runtime ({error})"
                ) from error
            expected = isinstance(error, ImportError | RagkitError | OSError)
            log.log(
                logging.INFO if expected else logging.WARNING,
                "%s embeds on torch: %s",
                name,
                error,
                exc_info=not expected,
            )
            return None

    @classmethod
    def checked(
        cls, name: str, location: Path, precision: Precision = "fp32"
    ) -> OnnxEncoder | None:
        """An encoder over the ``precision`` copy of the model in ``location`` that an earlier
        process checked, without loading that model; None when there is none (or
        ``RAGKIT_EMBED_RUNTIME=torch``, or it cannot load: the copy is then removed)."""
        files = copy_files(name, location, precision)
        if files is None or not all(file.exists() for file in files):
            return None
        path, record = files
        try:
            checked = CheckedCopy.read_from(record)
            if checked.sha256 != file_sha256(path):
                raise RagkitError("its checksum differs from the one recorded when it was checked")
            pieces = PieceTokenizer(
                location / checked.tokenizer, checked.max_length, checked.inputs
            )
            return cls(path, checked, pieces)
        except Exception as error:  # noqa: BLE001  (damaged record or copy; onnxruntime errors have their own types)
            log.warning("%s could not be loaded (%s); it will be made again", path, error)
            record.unlink(missing_ok=True)
            path.unlink(missing_ok=True)
            return None

    @classmethod
    def _build(cls, model: SentenceTransformer, name: str) -> OnnxEncoder:
        import onnxruntime  # noqa: F401  (not installed: ImportError, the torch path)

        if not cls.layout_supported(model):
            raise RagkitError("only Transformer → Pooling (mean, cls) → Normalize models export")
        location = Path(str(stages(model)[0].auto_model.name_or_path))
        if not location.is_dir():
            raise RagkitError(f"model folder {location} not found on disk")
        path = copy_path(name, location)
        try:
            return cls._open(model, location, path)
        except RagkitError as error:  # a damaged or stale copy: removed, exported again once
            log.warning("%s; exporting it again", error)
            return cls._open(model, location, path)

    @classmethod
    def _open(cls, model: SentenceTransformer, location: Path, path: Path) -> OnnxEncoder:
        """The encoder over ``path`` (exported first if missing) checked against ``model``, whose
        folder is ``location``, with its record written; a copy that cannot be loaded or
        differs is removed and the error raised."""
        inputs = tuple(n for n in model.tokenizer.model_input_names if n != "position_ids")
        remove_if_changed(path)
        if not path.exists():
            example = model.preprocess(["an example query"])
            export(stages(model)[0].auto_model, {name: example[name] for name in inputs}, path)
        modules = stages(model)
        record = CheckedCopy(
            inputs,
            str(modules[1].get_config_dict()["pooling_mode"]),
            len(modules) == 3,
            "tokenizer.json",
            int(model.max_seq_length or 512),
        )

        def preprocess(texts: Sequence[str]) -> Features:
            features = model.preprocess(list(texts))
            return {n: features[n].numpy().astype(np.int64) for n in {"attention_mask", *inputs}}

        try:
            encoder = cls(path, record, preprocess)
        except Exception as error:  # onnxruntime raises its own Fail/InvalidProtobuf types
            path.unlink(missing_ok=True)
            raise RagkitError(f"{path} could not be loaded ({error}); removed") from error
        try:
            encoder.check(model)
        except RagkitError:
            path.unlink(missing_ok=True)
            raise
        encoder.record = record = CheckedCopy(**{**asdict(record), "sha256": file_sha256(path)})
        pieces_file = location / record.tokenizer
        if pieces_file.exists() and encoder.same_pieces(pieces_file, record):
            encoder.tokenize = PieceTokenizer(pieces_file, record.max_length, inputs)
            record.write_to(path)
        return encoder

    def check(self, model: SentenceTransformer) -> None:
        """Raise unless this copy's vectors of :data:`PROBES` equal ``model``'s (within
        :data:`TOLERANCE`)."""
        import torch

        with torch.inference_mode():
            expected = model(model.preprocess(list(PROBES)))["sentence_embedding"].numpy()
        difference = float(np.abs(self(PROBES) - expected).max())
        if difference > TOLERANCE:
            raise RagkitError(
                f"{self.path} gives vectors {difference:.1e} away from the model's; removed"
            )

    def same_pieces(self, pieces_file: Path, record: CheckedCopy) -> bool:
        """Whether ``pieces_file`` (the model's ``tokenizer.json``) alone splits the probes
        (and a text past the length limit) exactly as the model does."""
        pieces = PieceTokenizer(pieces_file, record.max_length, record.inputs)
        texts = [*PROBES, " Heat  TRANSFER ", "الماء ", " ".join(["heat"] * record.max_length)]
        for text in texts:
            expected, found = self.tokenize([text]), pieces([text])
            if any(not np.array_equal(expected[n], found[n]) for n in record.inputs):
                return False
        return True

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Float32 vectors of ``texts`` (tokenized exactly as the model tokenizes them), each
        text alone; several on :attr:`threads` at once (tokenized here first: the model's own
        tokenizer is not safe to share between threads)."""
        features = [self.tokenize([text]) for text in texts]
        if len(features) < 2 or self.threads < 2:
            rows = [self._vector(each) for each in features]
        else:
            with ThreadPoolExecutor(min(self.threads, len(features))) as pool:
                rows = list(pool.map(self._vector, features))
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.ascontiguousarray(np.vstack(rows), dtype=np.float32)

    def _vector(self, features: Features) -> np.ndarray:
        """The pooled (and normalized) vector of one tokenized text, as a 1-row array."""
        (hidden,) = self.session.run(None, {name: features[name] for name in self.record.inputs})
        if self.record.pooling == "cls":
            vectors = hidden[:, 0]
        else:
            mask = features["attention_mask"][..., None].astype(np.float32)
            vectors = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        if self.record.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors


_EXPORTING = threading.Lock()


def remove_if_changed(path: Path) -> None:
    """Remove the copy at ``path`` (and its record) when its bytes are no longer those that
    were checked: a copy damaged in a way that still loads gives wrong vectors silently."""
    record = CheckedCopy.record_of(path)
    if not (path.exists() and record.exists()):
        return
    try:
        recorded = CheckedCopy.read_from(record).sha256
    except (ValueError, TypeError, KeyError):
        recorded = ""
    if recorded != file_sha256(path):
        log.warning("%s changed since it was checked; making it again", path)
        record.unlink(missing_ok=True)
        path.unlink(missing_ok=True)


def session_of(path: Path, optimized_to: Path | None = None) -> Any:
    """An ONNX Runtime session on one thread over ``path``, an optimized copy (no optimizer
    run), or, with ``optimized_to``, over a raw graph whose optimized form it writes there.
    One thread: a text's small products gain less from splitting than they lose to the
    threads' meeting points; several texts run on several threads at once instead."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
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
    import torch

    class Hidden(torch.nn.Module):
        """The transformer's last hidden state from positional inputs: the exported graph."""

        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            named = dict(zip(inputs, tensors, strict=True))
            return self.transformer(**named).last_hidden_state

    path.parent.mkdir(parents=True, exist_ok=True)
    log.warning(
        "exporting the encoder to ONNX, once per model and machine, into %s (about 6 s for "
        "all-minilm-l6-v2, 30 s for multilingual-e5-small)",
        path,
    )
    clock = time.perf_counter()
    inputs = list(example)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*inputs, "hidden")}
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    optimized = scratch.with_suffix(".optimized.tmp")
    try:
        with _EXPORTING, warnings.catch_warnings(), torch.inference_mode(False):
            warnings.simplefilter("ignore")  # tracer notes on shapes the export makes dynamic
            torch.onnx.export(
                Hidden().eval(),
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
        log.warning("ONNX encoder ready in %.0f s", time.perf_counter() - clock)
    finally:
        scratch.unlink(missing_ok=True)
        optimized.unlink(missing_ok=True)
