"""Reranking with a trained groupwise model: groups, passes, score averaging, interpolation.

More candidates than the model's ``group_size`` are split into balanced groups; each of
``passes`` passes shuffles the candidates first (seeded), so a candidate meets different
rivals, and its expected scores are averaged. Scores are comparable across groups because
training rewards calibrated levels (the distributional term of
:mod:`ragkit.training.rewards`), not only the order within a group. The final score optionally
mixes in the first-stage score: ``(1 − w) · rerank + w · minmax(first_stage)``. The
first-stage scores are also one of the model's inputs (the ``prior`` signal of
:mod:`ragkit.rerank.features`); without them the candidates' order stands in.

Weights load from ``safetensors`` (never pickle). The shipped model lives in
``ragkit/rerank/weights/groupwise-minilm/`` with its model card.

Example:
    >>> reranker = Reranker.load()  # doctest: +SKIP
    >>> docs = ["Water boils at 100 °C at sea level.", "Paris is the capital of France."]
    >>> [c.index for c in reranker.rank("boiling point of water", docs)]  # doctest: +SKIP
    [0, 1]
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np
import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ragkit.config import Settings
from ragkit.embed.models import MINILM_NAMES
from ragkit.environment import read
from ragkit.errors import RagkitError
from ragkit.paths import package_folder
from ragkit.rerank.backbone import Backbone, TokenStates
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.features import (
    anchor_vectors,
    candidate_signals,
    first_stage_prior,
    overlaps,
)
from ragkit.rerank.model import GroupwiseReranker, expected_score, group_features
from ragkit.search.fusion import minmax

log = logging.getLogger(__name__)

WEIGHTS_DIR = package_folder("ragkit.rerank", "weights")
DEFAULT_RERANKER = "groupwise-minilm"  # English; "auto" picks it for English-only text
MULTILINGUAL_RERANKER = "groupwise-e5"  # multilingual-e5-small backbone; "auto" for the rest
AUTO = "auto"
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


class Scored(Protocol):
    """Anything with a ``text`` and a first-stage ``score`` (e.g. :class:`ragkit.Hit`)."""

    @property
    def text(self) -> str: ...

    @property
    def score(self) -> float: ...


H = TypeVar("H", bound=Scored)


@dataclass(frozen=True)
class RankedCandidate:
    """A candidate's position in the input list and its scores (``score`` sorts)."""

    index: int
    score: float
    rerank_score: float


def balanced_groups(count: int, size: int) -> list[slice]:
    """Split ``count`` items into the fewest groups of at most ``size``, sizes within one.

    Example:
        >>> [(s.start, s.stop) for s in balanced_groups(10, 4)]
        [(0, 3), (3, 7), (7, 10)]
    """
    groups = max(1, math.ceil(count / size))
    bounds = np.linspace(0, count, groups + 1).round().astype(int)
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(bounds)]


def choose_reranker(languages: Collection[str]) -> str:
    """The shipped reranker for text in ``languages`` (``auto``): ``groupwise-minilm`` when
    all of it is English (or undetermined), else ``groupwise-e5``. Without that one installed,
    text that is partly English keeps ``groupwise-minilm`` (its callers say that the rest is
    read as English); text with no English at all is a clear error.

    Example:
        >>> choose_reranker({"en", "und"})
        'groupwise-minilm'
    """
    others = sorted(set(languages) - {"en", "und"})
    if not others:
        return DEFAULT_RERANKER
    if not (WEIGHTS_DIR / MULTILINGUAL_RERANKER / WEIGHTS_FILE).exists():
        if "en" in languages:
            return DEFAULT_RERANKER
        raise RagkitError(
            f"no shipped reranker reads {', '.join(others)} ({MULTILINGUAL_RERANKER} is not "
            "installed); train one with `ragkit rerank train --backbone multilingual-e5-small` "
            "and pass its folder as the reranker, or search without reranking"
        )
    return MULTILINGUAL_RERANKER


def resolve_model_folder(
    name_or_path: str | Path | None, languages: Collection[str] = ("en",)
) -> Path:
    """A shipped model's folder by name, ``auto`` (:func:`choose_reranker` for ``languages``;
    the default, or ``RAGKIT_RERANKER``), or a folder path."""
    name = str(name_or_path or read("reranker") or AUTO)
    if name == AUTO:
        name = choose_reranker(languages)
    folder = WEIGHTS_DIR / name if (WEIGHTS_DIR / name).is_dir() else Path(name)
    if not (folder / WEIGHTS_FILE).exists() or not (folder / CONFIG_FILE).exists():
        shipped = sorted(p.name for p in WEIGHTS_DIR.glob("*/") if p.is_dir())
        raise RagkitError(
            f"reranker {name!r}: no {CONFIG_FILE} + {WEIGHTS_FILE} in {folder}; use a shipped "
            f"model ({', '.join(shipped) or 'none installed'}) or train one with "
            "`ragkit rerank train`"
        )
    return folder


def save_model(model: GroupwiseReranker, folder: Path) -> None:
    """Write ``config.json`` and ``model.safetensors`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CONFIG_FILE).write_text(model.config.model_dump_json(indent=2) + "\n")
    state = {
        key: (value.half() if key.startswith("upper.") else value).detach().contiguous()
        for key, value in model.state_dict().items()
    }
    save_file(state, str(folder / WEIGHTS_FILE))


RETRAIN = "train one with `ragkit rerank train` or use a shipped reranker"


def read_config(folder: Path) -> RerankerConfig:
    """The :class:`RerankerConfig` saved in ``folder``; a damaged or foreign one is a
    :class:`RagkitError` naming the file."""
    try:
        return RerankerConfig.model_validate_json((folder / CONFIG_FILE).read_text())
    except (OSError, ValueError) as error:  # pydantic's ValidationError is a ValueError
        problem = str(error).splitlines()[0]
        raise RagkitError(
            f"{folder / CONFIG_FILE}: not a reranker config ({problem}); {RETRAIN}"
        ) from error


def load_model(folder: Path, backbone: Backbone | None = None) -> GroupwiseReranker:
    """The model saved in ``folder`` by :func:`save_model`, in eval mode; a damaged or foreign
    config or weights file is a :class:`RagkitError` naming it. A model that tunes backbone
    layers takes their architecture from ``backbone`` (loaded from the config when None)."""
    config = read_config(folder)
    upper = None
    if config.tuned_layers:
        upper = (backbone or Backbone(config.backbone)).upper_layers(config.tuned_layers)
    model = GroupwiseReranker(config, upper)
    try:
        weights = load_file(str(folder / WEIGHTS_FILE))
        model.load_state_dict({k: v.float() for k, v in weights.items()})
    except (RuntimeError, OSError, SafetensorError) as error:
        problem = str(error).splitlines()[0]
        raise RagkitError(
            f"{folder / WEIGHTS_FILE}: not weights for this config ({problem}); {RETRAIN}"
        ) from error
    return model.eval()


class Reranker:
    """Scores a query against candidates with a :class:`GroupwiseReranker`.

    ``passes``: shuffled passes over groups when candidates exceed ``group_size``;
    ``first_stage_weight``: share of the min-max normalized first-stage score in the result.
    """

    def __init__(
        self,
        model: GroupwiseReranker,
        backbone: Backbone | None = None,
        passes: int = 3,
        first_stage_weight: float = 0.0,
        seed: int = 0,
    ) -> None:
        if passes < 1:
            raise RagkitError(f"reranker passes must be ≥ 1, got {passes}")
        if not 0.0 <= first_stage_weight <= 1.0:
            raise RagkitError(f"first_stage_weight must lie in [0, 1], got {first_stage_weight}")
        self.model = model.eval()
        self.config = model.config
        self.backbone = backbone or Backbone(self.config.backbone)
        self.passes = passes
        self.first_stage_weight = first_stage_weight
        self.seed = seed

    @classmethod
    def for_index(cls, settings: Settings, languages: Collection[str]) -> Reranker:
        """The reranker an index's ``settings`` name (``reranker``, ``rerank_passes``,
        ``rerank_weight``) for text in ``languages``; a warning when one that reads English
        only (a MiniLM backbone) will rerank other languages too."""
        reranker = cls.load(
            settings.reranker,
            languages=languages,
            passes=settings.rerank_passes,
            first_stage_weight=settings.rerank_weight,
        )
        others = sorted(set(languages) - {"en", "und"})
        if others and reranker.config.backbone in MINILM_NAMES:
            log.warning(
                "reranker %r reads English only (%s); hits in %s are reranked as if English",
                settings.reranker,
                reranker.config.backbone,
                ", ".join(others),
            )
        return reranker

    @classmethod
    def load(
        cls,
        name_or_path: str | Path | None = None,
        languages: Collection[str] = ("en",),
        **options: object,
    ) -> Reranker:
        """The shipped model (or a folder saved by training) with inference ``options``;
        ``languages``: what the text is in, for ``auto`` (:func:`choose_reranker`)."""
        folder = resolve_model_folder(name_or_path, languages)
        config = read_config(folder)
        backbone = Backbone(config.backbone) if config.tuned_layers else None
        return cls(load_model(folder, backbone), backbone=backbone, **options)  # type: ignore[arg-type]

    @torch.inference_mode()
    def score_states(
        self,
        query: TokenStates,
        docs: TokenStates,
        overlap: torch.Tensor,
        prior: torch.Tensor | None = None,
    ) -> np.ndarray:
        """Expected scores of ``n`` candidates (states of one query, ``n`` documents).

        ``prior``: :func:`~ragkit.rerank.features.first_stage_prior` of the candidates (by
        default, their order).
        """
        count = docs.hidden.shape[0]
        prior = first_stage_prior(None, count) if prior is None else prior
        signals = candidate_signals(query, docs, overlap, prior, anchor_vectors(docs, prior))
        upper = self.model.upper
        query_states, doc_states = query.hidden, docs.hidden
        if upper is not None:  # once per candidate, whatever groups it lands in
            query_states = upper(query.model_input(True), query.mask)
            doc_states = upper(docs.model_input(True), docs.mask)
        total = np.zeros(count)
        size = self.config.group_size
        passes = 1 if count <= size else self.passes
        rng = np.random.default_rng(self.seed)
        for pass_number in range(passes):
            order = np.arange(count) if pass_number == 0 else rng.permutation(count)
            for group in balanced_groups(count, size):
                members = torch.as_tensor(order[group])
                valid = torch.ones(1, len(members), dtype=torch.bool)
                features = group_features(signals[members].unsqueeze(0), valid)
                logits = self.model.interact(
                    query_states,
                    query.mask,
                    doc_states[members].unsqueeze(0),
                    docs.mask[members].unsqueeze(0),
                    features,
                )
                total[members.numpy()] += expected_score(logits)[0].double().numpy()
        return total / passes

    def score(
        self,
        query: str,
        documents: Sequence[str],
        first_stage: Sequence[float] | None = None,
    ) -> np.ndarray:
        """Expected relevance in [0, 1] of each document for ``query`` (no interpolation).

        ``first_stage``: the scores that ranked ``documents``; without them the documents'
        order is read as the first stage's ranking.
        """
        if not documents:
            return np.zeros(0)
        prior = first_stage_prior(first_stage, len(documents))
        tuned = self.config.tuned_layers
        query_states = self.backbone.encode([query], self.config.query_tokens, "query", tuned)
        doc_states = self.backbone.encode(documents, self.config.doc_tokens, "passage", tuned)
        return self.score_states(query_states, doc_states, overlaps(query, documents), prior)

    def rank(
        self,
        query: str,
        documents: Sequence[str],
        first_stage: Sequence[float] | None = None,
        top_k: int | None = None,
    ) -> list[RankedCandidate]:
        """Candidates best first; ``first_stage`` scores are mixed in by ``first_stage_weight``."""
        rerank = self.score(query, documents, first_stage)
        final = rerank
        if first_stage is not None and self.first_stage_weight > 0 and len(documents):
            prior = minmax(np.asarray(first_stage, dtype=np.float64))
            final = (1 - self.first_stage_weight) * rerank + self.first_stage_weight * prior
        order = sorted(range(len(documents)), key=lambda i: (-final[i], i))[:top_k]
        return [RankedCandidate(i, float(final[i]), float(rerank[i])) for i in order]

    def rerank_hits(self, query: str, hits: Sequence[H], k: int | None = None) -> list[H]:
        """``hits`` (frozen dataclasses with ``text`` and ``score``) reordered, rescored."""
        ranked = self.rank(query, [h.text for h in hits], [h.score for h in hits], top_k=k)
        return [replace(hits[c.index], score=c.score) for c in ranked]  # type: ignore[type-var]
