"""Settings: one pydantic model an index is built with.

A new index takes each setting from, first to last: ``Index.open`` arguments (``ragkit
ingest`` options), the settings file — ``ragkit.toml`` in the index folder, or the file given
as ``config=`` / ``--config`` — and the defaults (``RAGKIT_MODEL`` names the default model).
An existing index keeps the settings it was built with; the type of each says when it applies
(:class:`Applies`: :data:`Fixed` at creation, :data:`Reanalyzed`, or :data:`QueryTime`, which
an open index or a settings file may still set). Settings are grouped by what they shape
(:data:`GROUPS`: model, chunking, ingest, dense, sparse, normalization, query, rerank); the
file gives them flat or under their group's table, e.g.::

    fusion = "rrf"
    rerank_weight = 0.3

    [chunking]
    chunker = "sentence"
    chunk_tokens = 200
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from ragkit.environment import read
from ragkit.errors import (
    InvalidArgumentError,
    RagkitError,
    SettingsMismatchError,
    validation_message,
)

# "auto": the documents of an index's first ingest choose its model (ragkit.embed.models.choose_model):
# all-minilm-l6-v2 for an English collection, multilingual-e5-small for anything else.
DEFAULT_MODEL = "auto"
# What the first ingest of an ``auto`` index decides and stores (ragkit.pipeline.ingest).
CHOSEN_WITH_MODEL = ("embedding_model", "embedding_precision")
CONFIG_NAME = "ragkit.toml"  # the settings file in an index folder


class Applies(StrEnum):
    """When a setting takes effect, visible in its type: :data:`Fixed` settings are chosen at
    index creation (another value needs a new index), :data:`Reanalyzed` ones too but
    ``ragkit doctor --reanalyze`` may change them in place (they shape matching keys and sparse
    terms, derived again for every chunk), and :data:`QueryTime` ones shape queries only (an
    open index may override them for one handle, ``Index.open(path, rerank_weight=0.3)``)."""

    CREATION = "fixed at index creation"
    ANALYSIS = "fixed at index creation; doctor --reanalyze may change it"
    QUERY = "per handle or per query"


T = TypeVar("T")
Fixed = Annotated[T, Applies.CREATION]
Reanalyzed = Annotated[T, Applies.ANALYSIS]
QueryTime = Annotated[T, Applies.QUERY]


class Settings(BaseModel):
    """Settings an index is built with; stored in the index so queries use the same model.

    Example:
        >>> Settings().chunk_tokens
        256
    """

    embedding_model: Fixed[str] = Field(default_factory=lambda: read("model") or DEFAULT_MODEL)
    # The encoder's numbers (ragkit.embed.int8): "fp32", or "int8", its dynamically quantized
    # ONNX copy (faster, vectors close to fp32's, not equal); "auto": int8 for the models whose
    # int8 copy was measured to hold retrieval quality (all-minilm-l6-v2), fp32 for any other,
    # resolved with the model and stored resolved. An index's vectors, passages and queries,
    # all come from one precision.
    embedding_precision: Fixed[Literal["auto", "fp32", "int8"]] = "auto"
    # Chunking (ragkit.chunking): "adaptive" picks per document among the chunkers by the
    # weighted metrics (SC BI ICC DCC RC; None = equal weights); any other value names one chunker.
    chunker: Fixed[str] = "adaptive"
    chunk_tokens: Fixed[int] = Field(default=256, ge=8, le=8192)
    chunk_min_tokens: Fixed[int | None] = Field(default=None, ge=0)
    chunk_weights: Fixed[dict[str, float] | None] = None
    # The sentence vectors adaptive selection (ICC/DCC) and the semantic chunker compare:
    # "static" token vectors from the index's encoder, made once per token met (ragkit.embed
    # .static; tens of times cheaper), or "encoder", a full encoder pass over every sentence.
    chunk_vectors: Fixed[Literal["static", "encoder"]] = "static"
    # What a chunk is embedded and matched with besides its own text (ragkit.pipeline
    # .context_titles): its document's title, or nothing.
    chunk_context: Fixed[Literal["title", "none"]] = "title"
    embed_batch_size: Fixed[int] = Field(default=32, ge=1)
    # An ingest commits (a new generation, searchable, kept if the process is killed) once it
    # holds this many documents, chunks, or seconds of work since its last commit, whichever
    # comes first (ragkit.pipeline.cadence); `ingest -` commits what it read at each interval.
    commit_every_documents: Fixed[int] = Field(default=500, ge=1)
    commit_every_chunks: Fixed[int] = Field(default=5_000, ge=1)
    commit_every_seconds: Fixed[float] = Field(default=30.0, gt=0, le=86_400)
    hnsw_threshold: Fixed[int] = Field(default=50_000, ge=1)
    hnsw_m: Fixed[int] = Field(default=32, ge=4)
    hnsw_ef_search: Fixed[int] = Field(default=128, ge=1)
    ivf_threshold: Fixed[int] = Field(default=2_000_000, ge=1)
    ivf_nprobe: Fixed[int] = Field(default=32, ge=1)
    ivf_pq_m: Fixed[int] = Field(default=48, ge=1)
    rescore_factor: Fixed[int] = Field(default=10, ge=1)
    # Vectors a commit adds go to a small exact tail beside the main FAISS index (one file per
    # commit) while the tail stays under dense_tail_fraction of the main index and
    # dense_tail_max vectors; past that, the next commit merges them in (ragkit.search.dense
    # .advance). 0 rewrites the main index at every commit.
    dense_tail_fraction: Fixed[float] = Field(default=0.25, ge=0.0, le=1.0)
    dense_tail_max: Fixed[int] = Field(default=50_000, ge=0)
    # Hybrid fusion (ragkit.search.fusion): min-max normalized scores weighted dense_weight /
    # 1 - dense_weight, reciprocal rank fusion with rrf_k, or per-query (the default: weighted
    # fusion with the dense weight and the phrase lift chosen for each query from its first
    # pass, ragkit.search.per_query).
    fusion: Fixed[Literal["weighted", "rrf", "per-query"]] = "per-query"
    rrf_k: Fixed[int] = Field(default=60, ge=1)
    # Sparse terms (ragkit.search.sparse): stems where a stemmer exists, else SentencePiece pieces.
    sparse_terms: Fixed[Literal["auto", "pieces", "stems"]] = "auto"
    # Next to each stem, the word as written (normalized) is a term too, so an exact match
    # outranks a match of the stem alone: "auto" where measured to help (Arabic, whose stemmer
    # strips clitics and affixes; ragkit.search.sparse.EXACT_TERM_LANGUAGES), "on", "off".
    exact_terms: Reanalyzed[Literal["auto", "on", "off"]] = "auto"
    fusion_depth: Fixed[int] = Field(default=100, ge=1)  # candidates taken from each list
    # Hits whose text another, better hit already shows are folded into it (Hit.duplicates),
    # so k hits are k distinct passages (ragkit.search.collapse); a query may turn it off.
    collapse: QueryTime[bool] = True
    dense_weight: Fixed[float] = Field(default=0.5, ge=0.0, le=1.0)
    # Pseudo-relevance feedback (ragkit.search.feedback): a second pass with the query expanded
    # by the first pass's top chunks' stored terms (sparse, RM3) and/or moved towards their
    # stored vectors (dense, Rocchio). "auto": as per-query fusion chooses for each query
    # (ragkit.search.per_query); with the other fusions, what was measured to help for the
    # query's languages. Query-time: a handle or a query may override it.
    feedback: QueryTime[Literal["auto", "off", "sparse", "dense", "both"]] = "auto"
    # Chunks of one document that score together lift its best one (ragkit.search.evidence);
    # query-time like feedback.
    document_evidence: QueryTime[Literal["auto", "off", "on"]] = "off"
    # Chunks holding the query's terms side by side and in order come first (ragkit.search
    # .phrase): a lookup's passage first, but headings' cross-references too; query-time like
    # feedback. "auto": as per-query fusion chooses for each query (ragkit.search.per_query),
    # off with the other fusions.
    phrase_evidence: QueryTime[Literal["auto", "off", "on"]] = "auto"
    # Where normalization applies (see ragkit.normalize): matching keys only (post-inference),
    # embeddings too (pre-index), or per language (auto: Arabic-script text is embedded
    # normalized, other scripts as written; ragkit.pipeline.stages.embeds_normalized).
    normalization: Fixed[Literal["auto", "post-inference", "pre-index", "off"]] = "auto"
    geez_mode: Fixed[Literal["homophones", "homophones+labialized"]] = "homophones"
    # Arabic in Quranic (Uthmani) spelling rewritten to standard (ragkit.normalize.uthmani):
    # lines carrying Quranic marks (auto), all Arabic text (uthmani) or none (standard).
    orthography: Reanalyzed[Literal["auto", "uthmani", "standard"]] = "auto"
    lexical_normalization: Fixed[bool] = False
    # Reranking (ragkit.rerank), used by search(..., rerank=True): a shipped model name, a
    # folder saved by `ragkit rerank train`, or `auto` (the shipped model that reads the index's
    # languages: ragkit.rerank.reranker.choose_reranker); the first-stage top `rerank_depth` are reranked and
    # `rerank_weight` of the min-max normalized first-stage score is mixed into the result.
    # These four shape queries only: `Index.open(path, rerank_weight=…)` overrides them for one
    # handle (RERANK_SETTINGS) without touching the stored index.
    reranker: QueryTime[str] = "auto"
    rerank_depth: QueryTime[int] = Field(default=50, ge=1)
    rerank_weight: QueryTime[float] = Field(default=0.2, ge=0.0, le=1.0)
    rerank_passes: QueryTime[int] = Field(default=3, ge=1)

    @classmethod
    def from_index(cls, stored: str) -> Settings:
        """The settings an index was built with, from their stored JSON. A field added after
        the index was built takes the value that reproduces how it was built, not today's
        default (older indexes embedded chunks without a context title and indexed stems
        without their exact words).

        Example:
            >>> Settings.from_index('{"embedding_model": "m"}').chunk_context
            'none'
        """
        values = json.loads(stored)
        values.setdefault("chunk_context", "none")
        values.setdefault("orthography", "standard")  # keys from before Uthmani conversion
        values.setdefault("exact_terms", "off")
        values.setdefault("chunk_vectors", "encoder")  # chunks chosen with the full encoder
        values.setdefault("embedding_precision", "fp32")  # from before int8 existed
        return cls.model_validate(values)

    @field_validator("chunker")
    @classmethod
    def _known_chunker(cls, value: str) -> str:
        from ragkit.chunking import available_chunkers

        choices = ["adaptive", *available_chunkers()]
        if value not in choices:
            raise ValueError(f"chunker {value!r} is unknown; use one of {', '.join(choices)}")
        return value

    @field_validator("chunk_weights")
    @classmethod
    def _known_metrics(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        from ragkit.chunking.adaptive import METRICS

        if value is None:
            return None
        unknown = sorted(set(value) - set(METRICS))
        if unknown:
            raise ValueError(
                f"chunk_weights: unknown metric(s) {unknown}; use {', '.join(METRICS)}"
            )
        if any(w < 0 for w in value.values()) or not any(value.values()):
            raise ValueError("chunk_weights must be ≥ 0 with at least one above 0")
        return value

    def summary(self) -> list[tuple[str, str]]:
        """The settings that shape results, as ``(what, value)`` rows (``ragkit info``).

        Example:
            >>> dict(Settings().summary())["fusion"]
            'per-query (dense weight and phrase lift per query), 100 candidates per list'
        """
        fusion = {
            "weighted": f"weighted, dense weight {self.dense_weight}",
            "rrf": f"rrf, k {self.rrf_k}",
            "per-query": "per-query (dense weight and phrase lift per query)",
        }[self.fusion]
        normalization = f"{self.normalization}, Ge'ez {self.geez_mode}" + (
            ", lexical" if self.lexical_normalization else ""
        )
        reranking = (
            f"{self.reranker}, top {self.rerank_depth}, first-stage weight {self.rerank_weight}, "
            f"{self.rerank_passes} passes"
        )
        vectors = (
            f", {self.chunk_vectors} vectors to choose cuts"
            if self.chunker in ("adaptive", "semantic")
            else ""
        )
        return [
            ("embedding precision", self.embedding_precision),
            ("chunking", f"{self.chunker}, {self.chunk_tokens} tokens per chunk{vectors}"),
            ("chunk context", self.chunk_context),
            ("fusion", f"{fusion}, {self.fusion_depth} candidates per list"),
            ("duplicate passages", "folded into one hit" if self.collapse else "each a hit"),
            (
                "feedback",
                (
                    f"{self.feedback}, document evidence {self.document_evidence}, "
                    f"phrase evidence {self.phrase_evidence}"
                ),
            ),
            ("sparse terms", self.sparse_terms),
            ("normalization", normalization),
            ("reranking", reranking),
        ]


def applying(when: Applies) -> frozenset[str]:
    """The settings whose type says they take effect ``when``.

    Example:
        >>> sorted(applying(Applies.ANALYSIS))
        ['exact_terms', 'orthography']
    """
    return frozenset(n for n, f in Settings.model_fields.items() if when in f.metadata)


# Settings that shape queries only; an open index may override them for one handle.
QUERY_SETTINGS = applying(Applies.QUERY)
RERANK_SETTINGS = frozenset(n for n in QUERY_SETTINGS if n.startswith("rerank"))
# Settings re-analysis (ragkit.pipeline.reanalyze) may change in an index that has chunks.
ANALYSIS_SETTINGS = applying(Applies.ANALYSIS)
# The settings by what they shape; a settings file may give them flat (`chunk_tokens = 200`)
# or under their group's table (`[chunking]` then `chunk_tokens = 200`).
GROUPS: dict[str, tuple[str, ...]] = {
    "model": ("embedding_model", "embedding_precision", "embed_batch_size"),
    "chunking": (
        "chunker", "chunk_tokens", "chunk_min_tokens", "chunk_weights", "chunk_vectors",
        "chunk_context",
    ),
    "ingest": ("commit_every_documents", "commit_every_chunks", "commit_every_seconds"),
    "dense": (
        "hnsw_threshold", "hnsw_m", "hnsw_ef_search", "ivf_threshold", "ivf_nprobe", "ivf_pq_m",
        "rescore_factor", "dense_tail_fraction", "dense_tail_max",
    ),
    "sparse": ("sparse_terms", "exact_terms"),
    "normalization": ("normalization", "geez_mode", "orthography", "lexical_normalization"),
    "query": (
        "fusion", "rrf_k", "fusion_depth", "dense_weight", "collapse", "feedback",
        "document_evidence", "phrase_evidence",
    ),
    "rerank": ("reranker", "rerank_depth", "rerank_weight", "rerank_passes"),
}  # fmt: skip


def flattened(values: dict[str, Any], path: Path) -> dict[str, Any]:
    """A settings file's values with each group's table (``[chunking]``) read as flat names.

    Example:
        >>> flattened({"fusion": "rrf", "chunking": {"chunk_tokens": 200}}, Path("ragkit.toml"))
        {'fusion': 'rrf', 'chunk_tokens': 200}
    """
    flat: dict[str, Any] = {}
    for name, value in values.items():
        if name not in GROUPS or not isinstance(value, dict):
            flat[name] = value
            continue
        strays = sorted(set(value) - set(GROUPS[name]))
        if strays:
            raise RagkitError(
                f"{path}: [{name}] has no setting(s) {', '.join(strays)}; its settings are "
                f"{', '.join(GROUPS[name])}"
            )
        twice = sorted(set(value) & set(flat))
        if twice:
            raise RagkitError(f"{path}: {', '.join(twice)} set twice (flat and under [{name}])")
        flat |= value
    return flat


def read_settings_file(path: Path) -> dict[str, Any]:
    """The settings a TOML file sets (only those), checked against :class:`Settings`.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / CONFIG_NAME
        >>> _ = path.write_text('chunker = "sentence"\\nchunk_tokens = 4\\n')
        >>> read_settings_file(path)
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: ...ragkit.toml: chunk_tokens: Input should be greater than or equal to 8
    """
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RagkitError(f"{path}: cannot read the settings file ({error.strerror})") from error
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise RagkitError(f"{path}: not a valid TOML settings file ({error})") from error
    values = flattened(values, path)
    unknown = sorted(set(values) - set(Settings.model_fields))
    if unknown:
        raise RagkitError(
            f"{path}: unknown setting(s) {', '.join(unknown)}; the settings are "
            f"{', '.join(Settings.model_fields)}"
        )
    try:
        Settings.model_validate(values)
    except ValidationError as error:
        setting = error.errors()[0]["loc"][0]
        raise RagkitError(f"{path}: {setting}: {validation_message(error)}") from error
    return values


def check_setting_names(settings: Mapping[str, Any], where: str) -> None:
    """Refuse a name that is no setting.

    Example:
        >>> check_setting_names({"chunk_size": 100}, "Index.open")
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: Index.open: unknown setting(s) chunk_size; the settings are ...
    """
    unknown = sorted(set(settings) - set(Settings.model_fields))
    if unknown:
        raise InvalidArgumentError(
            f"{where}: unknown setting(s) {', '.join(unknown)}; the settings are "
            f"{', '.join(Settings.model_fields)}"
        )


def with_settings_file(
    config: str | Path | None,
    folder_file: Path | None,
    model: str | None,
    settings: dict[str, Any],
) -> tuple[str | None, dict[str, Any], dict[str, Path]]:
    """``model`` and ``settings`` completed from the settings file: ``config``, else the
    index folder's ``folder_file`` when it exists (None: the index has no folder, as a Milvus
    index); the third item maps each setting taken from the file to the file."""
    path = Path(config) if config is not None else folder_file
    if path is None or (config is None and not path.is_file()):
        return model, settings, {}
    from_file = {k: v for k, v in read_settings_file(path).items() if k not in settings}
    if model is None:
        model = from_file.get("embedding_model")
    from_file.pop("embedding_model", None)
    return model, from_file | settings, dict.fromkeys(from_file, path)


def handle_settings(
    stored: Settings,
    model: str | None,
    given: Mapping[str, Any],
    filed: Mapping[str, Path],
    where: str,
) -> Settings:
    """The settings a handle of an existing index uses: ``stored`` with the query-time
    settings ``given`` (:data:`QUERY_SETTINGS`); any other setting, or a ``model``, that
    differs from the stored one is refused (``filed``: the settings that came from a file,
    named in the message).

    Example:
        >>> handle_settings(Settings(), None, {"rerank_weight": 0.5}, {}, "idx").rerank_weight
        0.5
        >>> handle_settings(Settings(), None, {"chunk_tokens": 64}, {}, "idx")
        Traceback (most recent call last):
        ...
        ragkit.errors.SettingsMismatchError: idx: built with chunk_tokens=256, not 64; use a new --index folder for other settings
        >>> fp32 = Settings(embedding_precision="fp32")
        >>> handle_settings(fp32, None, {"embedding_precision": "int8"}, {}, "idx")
        Traceback (most recent call last):
        ...
        ragkit.errors.SettingsMismatchError: idx: its vectors are fp32, not int8; one index holds vectors of one precision (embedding_precision): use a new --index folder for int8
        >>> handle_settings(fp32, None, {"embedding_precision": "auto"}, {}, "idx") == fp32
        True
    """
    if model and model not in (DEFAULT_MODEL, stored.embedding_model):
        raise SettingsMismatchError(
            f"{where}: built with {stored.embedding_model!r}, not {model!r}; "
            "use a new --index folder for another model"
        )
    fixed = {n: v for n, v in given.items() if n not in QUERY_SETTINGS}
    if fixed:  # a value no index can have is a bad value (ValidationError), not a mismatch
        Settings.model_validate(stored.model_dump() | fixed)
    undecided = {}  # a precision given to an index whose ``auto`` model is not chosen yet
    for name, value in given.items():
        if name == "embedding_precision" and "auto" in (value, stored.embedding_precision):
            if value != "auto":  # resolved and stored when the model is chosen
                undecided[name] = value
            continue  # ``auto`` given: the index's own precision
        if name not in QUERY_SETTINGS and getattr(stored, name) != value:
            source = f" (set in {filed[name]})" if name in filed else ""
            if name == "embedding_precision":  # as another model: vectors that do not compare
                raise SettingsMismatchError(
                    f"{where}: its vectors are {stored.embedding_precision}, not {value}{source}; "
                    "one index holds vectors of one precision (embedding_precision): use a new "
                    f"--index folder for {value}"
                )
            raise SettingsMismatchError(
                f"{where}: built with {name}={getattr(stored, name)!r}, not "
                f"{value!r}{source}; use a new --index folder for other settings"
            )
    overrides = {n: v for n, v in given.items() if n in QUERY_SETTINGS} | undecided
    if not overrides:
        return stored
    try:
        return Settings.model_validate(stored.model_dump() | overrides)
    except ValidationError as error:
        setting = error.errors()[0]["loc"][0]
        raise InvalidArgumentError(f"{where}: {setting}: {validation_message(error)}") from error
