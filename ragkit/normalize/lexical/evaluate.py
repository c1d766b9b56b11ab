"""ERR by change type (keep, replace, split, merge) for MultiLexNorm predictions.

A gold token's type is ``merge`` when it is merged into its left neighbour or its neighbour is
merged into it, ``split`` when its normalization has a space, ``replace`` when it otherwise
changes and ``keep`` when it stays. Correct changes (TP) and missed ones (FN) count under the
gold type; a token that should stay but was changed (FP) counts under the type of the change
the system made, so the TP and FP of the three change types sum to the overall ones. ``keep``
has no ERR: its ``fp`` counts the tokens that should stay but were changed (whatever the change).

Example:
    >>> gold = [(LexToken("u", "you"), LexToken("d", "d"), LexToken("gonna", "going to"),
    ...     LexToken("screen", "screenshot"), LexToken("shot", "", merged=True))]
    >>> scores = score_by_change(gold, [["you", "the", "gonna", "screen", "shot"]])
    >>> {name: (s.tp, s.fp, s.fn) for name, s in scores.items()}
    {'keep': (0, 1, 0), 'replace': (1, 1, 0), 'split': (0, 0, 1), 'merge': (0, 0, 2)}
    >>> scores["replace"].err, scores["merge"].err
    (0.0, 0.0)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ragkit.errors import RagkitError
from ragkit.normalize.lexical.format import LexToken

CHANGE_TYPES = ("keep", "replace", "split", "merge")


def error_reduction(tp: int, fp: int, fn: int) -> float:
    """ERR = (TP − FP) / (TP + FN), 0 when no token needed a change.

    Example:
        >>> error_reduction(8, 2, 2), error_reduction(0, 3, 0)
        (0.6, 0.0)
    """
    needing = tp + fn
    return (tp - fp) / needing if needing else 0.0


@dataclass(frozen=True)
class ChangeScore:
    """TP, FP and FN of one change type; ``tokens`` counts gold tokens of that type."""

    tokens: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def err(self) -> float:
        """:func:`error_reduction`; 0 when no gold token has this type (always for ``keep``)."""
        return error_reduction(self.tp, self.fp, self.fn)

    def to_dict(self) -> dict[str, float]:
        """Counts plus ERR, for JSON reports."""
        return {**asdict(self), "err": self.err}


def gold_change_types(sentence: Sequence[LexToken]) -> list[str]:
    """The change type of each gold token of one sentence (see the module docstring).

    Example:
        >>> gold_change_types([LexToken("screen", "screenshot"), LexToken("shot", "", merged=True),
        ...     LexToken("ok", "ok")])
        ['merge', 'merge', 'keep']
    """
    types: list[str] = []
    for index, token in enumerate(sentence):
        merges_next = index + 1 < len(sentence) and sentence[index + 1].merged
        if token.merged or merges_next:
            types.append("merge")
        elif not token.changed:
            types.append("keep")
        else:
            types.append("split" if " " in token.norm else "replace")
    return types


def predicted_change_type(raw: str, prediction: str, next_prediction: str | None) -> str:
    """The type of the change a system made to ``raw`` (``keep`` when it left it alone).

    Example:
        >>> [predicted_change_type(*args) for args in [("u", "you", "r"), ("lol", "lol", None),
        ...     ("gonna", "going to", None), ("screen", "screenshot", ""), ("shot", "", None)]]
        ['replace', 'keep', 'split', 'merge', 'merge']
    """
    if prediction == raw:
        return "keep"
    if not prediction or next_prediction == "":
        return "merge"
    return "split" if " " in prediction else "replace"


def score_by_change(
    gold: Sequence[Sequence[LexToken]], predictions: Sequence[Sequence[str]]
) -> dict[str, ChangeScore]:
    """Per change type TP/FP/FN of ``predictions`` against ``gold`` (keys :data:`CHANGE_TYPES`)."""
    counts = {name: [0, 0, 0, 0] for name in CHANGE_TYPES}
    if len(gold) != len(predictions):
        raise RagkitError(f"{len(predictions)} predicted sentences for {len(gold)} gold sentences")
    for sentence, predicted in zip(gold, predictions, strict=True):
        if len(sentence) != len(predicted):
            raise RagkitError(
                f"sentence of {len(sentence)} tokens got {len(predicted)} predictions"
            )
        following = [*predicted[1:], None]
        for token, kind, prediction, after in zip(
            sentence, gold_change_types(sentence), predicted, following, strict=True
        ):
            counts[kind][0] += 1
            if token.changed:
                counts[kind][1 if prediction == token.norm else 3] += 1
            elif prediction != token.raw:
                counts[predicted_change_type(token.raw, prediction, after)][2] += 1
                counts["keep"][2] += kind == "keep"
    return {name: ChangeScore(*values) for name, values in counts.items()}


@dataclass(frozen=True)
class LexnormScore:
    """Word-level MultiLexNorm scores: ERR = (TP − FP) / (TP + FN)."""

    tokens: int
    correct: int
    tp: int
    fp: int
    fn: int

    @property
    def accuracy(self) -> float:
        """Fraction of tokens whose prediction equals the gold normalization."""
        return self.correct / self.tokens if self.tokens else 0.0

    @property
    def err(self) -> float:
        """Error reduction rate over leave-as-is (0 for LAI, 1 for perfect)."""
        return error_reduction(self.tp, self.fp, self.fn)

    def to_dict(self) -> dict[str, float]:
        """Counts plus accuracy and ERR, for JSON reports."""
        return {**asdict(self), "accuracy": self.accuracy, "err": self.err}


def score_predictions(
    gold: Sequence[Sequence[LexToken]], predictions: Sequence[Sequence[str]]
) -> LexnormScore:
    """Score predicted normalizations against gold sentences (exact string match)."""
    if len(gold) != len(predictions):
        raise RagkitError(f"{len(predictions)} predicted sentences for {len(gold)} gold sentences")
    tokens = correct = tp = fp = fn = 0
    for sentence, predicted in zip(gold, predictions, strict=True):
        if len(sentence) != len(predicted):
            raise RagkitError(
                f"sentence of {len(sentence)} tokens got {len(predicted)} predictions"
            )
        for token, prediction in zip(sentence, predicted, strict=True):
            tokens += 1
            correct += prediction == token.norm
            if token.changed:
                if prediction == token.norm:
                    tp += 1
                else:
                    fn += 1
            elif prediction != token.raw:
                fp += 1
    return LexnormScore(tokens, correct, tp, fp, fn)


def err_interval(
    gold: Sequence[Sequence[LexToken]],
    predictions: Sequence[Sequence[str]],
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ERR over whole sentences (resampled with replacement).

    Tells how far a set's ERR could move with other sentences of the same kind: on a few hundred
    changed tokens the 95 % interval reaches ±0.04 to ±0.07. (A percentile bootstrap is a few numpy
    lines; scipy is not a runtime dependency.)

    Example:
        >>> gold = [[LexToken("u", "you")], [LexToken("r", "are")], [LexToken("so", "so")]]
        >>> err_interval(gold, [["you"], ["r"], ["so"]], resamples=200)
        (0.0, 1.0)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie between 0 and 1, not {confidence}")
    counts = np.array(
        [
            [score.tp, score.fp, score.fn]
            for score in (
                score_predictions([sentence], [predicted])
                for sentence, predicted in zip(gold, predictions, strict=True)
            )
        ],
        dtype=float,
    ).reshape(-1, 3)
    if not len(counts):
        raise ValueError("no sentences to resample")
    picks = np.random.default_rng(seed).integers(0, len(counts), (resamples, len(counts)))
    errs = [error_reduction(*resample) for resample in counts[picks].sum(axis=1)]
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(errs, [tail, 100 - tail])
    return float(low), float(high)


def most_frequent_replacement(sentences: Iterable[Sequence[LexToken]]) -> dict[str, str]:
    """The MFR baseline: each raw token's most frequent training normalization (ties: first)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for sentence in sentences:
        for token in sentence:
            counts[token.raw][token.norm] += 1
    return {raw: options.most_common(1)[0][0] for raw, options in counts.items()}
