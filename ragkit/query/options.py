"""Every per-query option, declared once: :class:`SearchOptions`.

:meth:`ragkit.Index.search` and :meth:`~ragkit.Index.explain` take them as keywords (or one
``SearchOptions``), ``POST /search`` as body fields (:class:`ragkit.serve.schemas.SearchRequest`
extends this model), ``ragkit query`` as options (:mod:`ragkit.cli.search_options` makes a
typer option of each field, its choices completed and checked by typer) and the framework
components as search keywords. An option left ``None`` takes the index's setting of the same
name (``ragkit.toml`` or ``Index.open(..., feedback="dense")``).

Example:
    >>> SearchOptions(k=3, mode="sparse").k
    3
    >>> SearchOptions.of(mode="fuzzy")
    Traceback (most recent call last):
    ...
    ragkit.errors.InvalidArgumentError: search mode 'fuzzy': use one of hybrid, dense, sparse
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)
from typing_extensions import TypeAliasType

from ragkit.errors import InvalidArgumentError, RagkitError, validation_message
from ragkit.normalize.detect import check_language
from ragkit.search.evidence import DocumentEvidence
from ragkit.search.feedback import Feedback
from ragkit.search.fusion import FusionMethod, SearchMode
from ragkit.search.phrase import PhraseEvidence

MMR_POOL_FACTOR = 4  # MMR's candidates by default: 4 × k (LangChain's fetch_k 20 for k 4)
MAX_MMR_CANDIDATES = 10_000
FILTERS_EXAMPLE = '{"language": "ar", "year": {"$gte": 2000}}'
# A filter's value: text, a number (finite: NaN and Infinity are no JSON numbers and match
# nothing), a boolean, null, or lists and objects of them ({"$gte": 2000}, ["fa", "ar"],
# {"$or": [...]}): the filter language (ragkit.store.filters) is checked when the search runs.
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
StrictList = Annotated[list["FilterValue"], Strict()]  # a list, not a set or tuple made one
FilterValue = TypeAliasType(
    "FilterValue",
    "str | bool | int | FiniteFloat | None | StrictList | dict[str, FilterValue]",
)


class SearchOptions(BaseModel):
    """How one query is searched; ``None`` means the index's setting of that name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    k: StrictInt = Field(10, ge=1, description="Number of hits.")
    mode: SearchMode = Field("hybrid", description="hybrid (dense + BM25, fused), dense or sparse.")
    filters: dict[str, FilterValue] | None = Field(
        None,
        description="Keep chunks whose document matches every entry: language, source (a "
        "glob), id, content or a metadata key → a value, a list (any of them) or operators "
        "($eq $ne $in $nin $gt $gte $lt $lte $exists $contains $icontains; ranges take numbers "
        "or ISO dates); $and, $or, $not join filters. A list-valued key matches by element. "
        "Applied before fusion.",
    )
    fusion: FusionMethod | None = Field(
        None, description="weighted or rrf (hybrid mode); default: the index's setting."
    )
    dense_weight: FiniteFloat | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Hybrid mode: the dense list's weight in weighted fusion, 0 (BM25 only) to "
        "1 (dense only; the sparse list's weight is 1 minus it); given, the query fuses by "
        "weight; default: the index's setting.",
    )
    rerank: StrictBool = Field(
        False, description="Rerank the first stage's top candidates with the groupwise reranker."
    )
    language: str | None = Field(
        None,
        description="Analyze the query as this language (ISO 639 code, e.g. en, ar); default: "
        "the languages the index holds for the query's script.",
    )
    collapse: StrictBool | None = Field(
        None,
        description="Fold hits whose text a better hit shows into it (listed in its "
        "'duplicates'), so k hits are k distinct passages; default: the index's setting (on).",
    )
    feedback: Feedback | None = Field(
        None,
        description="off | sparse | dense | both | auto: a second pass with the query expanded "
        "from the first pass's top chunks; default: the index's setting (auto: per-query "
        "fusion's choice).",
    )
    document_evidence: DocumentEvidence | None = Field(
        None,
        description="on | off | auto: lift a chunk whose document matches in other chunks "
        "too; default: the index's setting.",
    )
    phrase_evidence: PhraseEvidence | None = Field(
        None,
        description="on | off | auto: chunks holding the query's words side by side and in "
        "order come first; default: the index's setting (auto: per-query fusion's choice).",
    )
    mmr_lambda: StrictFloat | None = Field(
        None,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="Diversify the hits by maximal marginal relevance: 1 ranks by relevance "
        "alone, 0 by novelty alone, 0.5 balances them (LangChain's lambda_mult); default: off.",
    )
    mmr_candidates: StrictInt | None = Field(
        None,
        ge=1,
        le=MAX_MMR_CANDIDATES,
        description="How many of the best passages MMR picks the k hits from (LangChain's "
        "fetch_k); default: 4 × k.",
    )

    @model_validator(mode="after")
    def _weights_fuse_by_weight(self) -> SearchOptions:
        if self.dense_weight is not None and self.fusion == "rrf":
            raise ValueError(
                "dense_weight weighs weighted fusion; leave fusion out or give weighted"
            )
        return self

    @field_validator("language")
    @classmethod
    def _known_language(cls, language: str | None) -> str | None:
        try:
            return None if language is None else check_language(language, "language")
        except RagkitError as error:  # pydantic reports ValueErrors: a 422 over HTTP
            raise ValueError(str(error)) from None

    @model_validator(mode="after")
    def _mmr_pool(self) -> SearchOptions:
        if self.mmr_candidates is not None and self.mmr_lambda is None:
            raise ValueError("mmr_candidates: give mmr_lambda too (MMR is off without it)")
        if self.mmr_candidates is not None and self.mmr_candidates < self.k:
            raise ValueError(
                f"mmr_candidates={self.mmr_candidates} < k={self.k}: MMR picks the k hits "
                "from at least k candidates"
            )
        return self

    @property
    def mmr_pool(self) -> int:
        """How many candidates MMR picks the ``k`` hits from (``mmr_candidates``, else 4·k).

        Example:
            >>> SearchOptions(k=5, mmr_lambda=0.5).mmr_pool
            20
        """
        return self.mmr_candidates or MMR_POOL_FACTOR * self.k

    @classmethod
    def of(cls, options: SearchOptions | None = None, /, **given: Any) -> SearchOptions:
        """``options`` (default: all defaults) with the options ``given`` by name, checked:
        an unknown name or a value out of its choices raises one :class:`RagkitError`
        naming the option and what it takes.

        Example:
            >>> SearchOptions.of(SearchOptions(k=3), mode="dense").model_dump(exclude_defaults=True)
            {'k': 3, 'mode': 'dense'}
        """
        unknown = sorted(set(given) - set(cls.model_fields))
        if unknown:
            raise InvalidArgumentError(
                f"unknown search option(s) {', '.join(unknown)}; the options are "
                f"{', '.join(cls.model_fields)}"
            )
        base = options.model_dump(exclude_unset=True) if options is not None else {}
        try:
            return cls.model_validate(base | given)
        except ValidationError as error:
            raise InvalidArgumentError(refusal(error, base | given)) from None


def choices(option: str) -> tuple[str, ...]:
    """The values a choice option of :class:`SearchOptions` takes.

    Example:
        >>> choices("feedback")
        ('auto', 'off', 'sparse', 'dense', 'both')
    """
    annotation = SearchOptions.model_fields[option].annotation
    literal = next(a for a in (annotation, *get_args(annotation)) if get_origin(a) is Literal)
    return get_args(literal)


def refusal(error: ValidationError, given: dict[str, Any]) -> str:
    """One line for the first problem pydantic found in ``given``, in ragkit's words."""
    problem = error.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else ""
    value = given.get(name)
    if name == "k":
        return f"k={value!r}: ask for at least one hit (a whole number ≥ 1)"
    if name == "mode":
        return f"search mode {value!r}: use one of {', '.join(choices('mode'))}"
    if name == "filters":
        if any(each["type"] == "finite_number" for each in error.errors()):
            return "filters: NaN and Infinity are no JSON numbers; give finite numbers"
        if isinstance(value, dict) and (odd := _not_json(value)) is not None:
            key, held = odd  # as the store's filters say it
            return f"filter {key!r}: match a string or a number, not {type(held).__name__}"
        return f"filters={value!r:.60}: give a dict of field → value, e.g. {FILTERS_EXAMPLE}"
    if name in ("fusion", "feedback", "document_evidence", "phrase_evidence"):
        return f"{name}={value!r}: use one of {', '.join(choices(name))}"
    if name == "language":
        return validation_message(error)
    if name == "dense_weight":
        return f"dense_weight={value!r}: give a number from 0 (BM25 only) to 1 (dense only)"
    if name in ("rerank", "collapse"):
        return f"{name}={value!r}: give True or False"
    if name == "mmr_lambda":
        return f"mmr_lambda={value!r}: give a number from 0 (novelty) to 1 (relevance)"
    if name == "mmr_candidates":
        return (
            f"mmr_candidates={value!r}: give a whole number of candidates from k to "
            f"{MAX_MMR_CANDIDATES:,}"
        )
    if not name:  # a check of the whole model (mmr_candidates against k, dense_weight and rrf)
        return str(problem["msg"]).removeprefix("Value error, ")
    return f"{name or 'search options'}={value!r:.60}: {problem['msg']}"


def _not_json(value: Any, key: Any = None) -> tuple[Any, Any] | None:
    """The first value in a filter that is no JSON value (a set, a tuple…) and the key it is
    under, or None.

    Example:
        >>> _not_json({"$and": [{"year": 2020}, {"tags": {"$in": ("x",)}}]})
        ('tags', ('x',))
    """
    if isinstance(value, dict):
        for name, part in value.items():
            if not isinstance(name, str):
                return name, name
            inner = name if not name.startswith("$") or key is None else key
            if (found := _not_json(part, inner)) is not None:
                return found
        return None
    if isinstance(value, list):
        return next((f for part in value if (f := _not_json(part, key)) is not None), None)
    return None if value is None or isinstance(value, str | int | float) else (key, value)
