"""Out-of-fold ERR of many (margin, keep bias, multiword bias) settings, decoded once per bar.

Training tunes the normalizer's thresholds on a grid of several hundred settings over the same
scored tokens (:func:`ragkit.normalize.lexical.train.tune_thresholds`). Decoding every sentence
again for each setting (:func:`~ragkit.normalize.lexical.normalizer.decode`, then
:func:`~ragkit.normalize.lexical.evaluate.score_predictions`) took minutes; a
:class:`ThresholdScorer` reads the tokens once. A token's decision depends on the setting only
through its *bar* (the margin, plus the keep bias for a vocabulary word) and the multiword bias,
so for each (multiword bias, bar) every token's choice is found at once with numpy, with the
float operations of :func:`decode` (the first best candidate on ties). ERR needs only TP − FP,
a sum of per-token gains; a chosen merge blanks the next token, and those few are followed token
by token. The ERR equals ``score_predictions(gold, decoded).err`` for every setting.

Example:
    >>> from ragkit.normalize.lexical.candidates import Candidate
    >>> from ragkit.normalize.lexical.format import LexToken
    >>> from ragkit.normalize.lexical.normalizer import TokenDecision
    >>> ya = (Candidate("ya", identity=True), Candidate("you"))
    >>> gold = [(LexToken("ya", "you"), LexToken("ok", "ok"))]
    >>> ok = (Candidate("ok", identity=True),)
    >>> found = [[TokenDecision(ya, (0.0, 1.0)), TokenDecision(ok, (0.0,))]]
    >>> scorer = ThresholdScorer(gold, found)
    >>> scorer.err(0.5, 0.0, 0.0), scorer.err(1.5, 0.0, 0.0)
    (1.0, 0.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragkit.errors import RagkitError
from ragkit.normalize.lexical.format import LexToken, Sentence
from ragkit.normalize.lexical.normalizer import TokenDecision


def _gain(token: LexToken, prediction: str) -> int:
    """+1 for a true positive, −1 for a false positive, 0 otherwise (ERR's numerator)."""
    if token.changed:
        return int(prediction == token.norm)
    return -int(prediction != token.raw)


@dataclass(frozen=True)
class _Choices:
    """Every token's outcome for one (multiword bias, bar): gain and whether it merges."""

    gains: np.ndarray  # per token with candidates to choose from
    merges: np.ndarray  # bool, same order


class ThresholdScorer:
    """ERR of scored tokens for any (margin, keep bias, multiword bias), as :func:`decode`
    with ``keep_case=False`` followed by ``score_predictions`` would give."""

    def __init__(
        self, gold: Sequence[Sentence], decisions: Sequence[Sequence[TokenDecision]]
    ) -> None:
        if len(gold) != len(decisions):
            raise RagkitError(f"{len(decisions)} decided sentences for {len(gold)} gold sentences")
        keep: list[int] = []  # gain of leaving each token as it is
        empty: list[int] = []  # gain of blanking it (the token after a merge)
        sentence_of: list[int] = []
        chosen: list[int] = []  # tokens with a choice, by token number
        known: list[bool] = []
        first: list[float] = []
        starts: list[int] = []
        scores: list[float] = []
        multiword: list[bool] = []
        merge: list[bool] = []
        gains: list[int] = []
        for number, (sentence, found) in enumerate(zip(gold, decisions, strict=True)):
            if len(sentence) != len(found):
                raise RagkitError(f"sentence of {len(sentence)} tokens got {len(found)} decisions")
            for token, decision in zip(sentence, found, strict=True):
                if len(decision.candidates) > 1:
                    chosen.append(len(keep))
                    known.append(decision.known)
                    first.append(decision.scores[0])
                    starts.append(len(scores))
                    for candidate, score in zip(
                        decision.candidates[1:], decision.scores[1:], strict=True
                    ):
                        scores.append(score)
                        multiword.append(candidate.merge or " " in candidate.text)
                        merge.append(candidate.merge)
                        gains.append(_gain(token, candidate.text))
                keep.append(_gain(token, token.raw))
                empty.append(_gain(token, ""))
                sentence_of.append(number)
        self._changed = sum(token.changed for sentence in gold for token in sentence)
        self._keep = np.array(keep, dtype=np.int64)
        self._empty = np.array(empty, dtype=np.int64)
        self._sentence = np.array(sentence_of, dtype=np.int64)
        self._chosen = np.array(chosen, dtype=np.int64)
        self._slot = {token: slot for slot, token in enumerate(chosen)}
        self._known = np.array(known, dtype=bool)
        self._first = np.array(first, dtype=np.float64)
        self._starts = np.array(starts, dtype=np.int64)
        self._lengths = np.diff(np.append(self._starts, len(scores)))
        self._scores = np.array(scores, dtype=np.float64)
        self._multiword = np.array(multiword, dtype=bool)
        self._merge = np.array(merge, dtype=bool)
        self._gains = np.array(gains, dtype=np.int64)
        self._fixed = int(np.delete(self._keep, self._chosen).sum())  # tokens with no choice
        self._cache: dict[tuple[float, float], _Choices] = {}

    def _choices(self, bar: float, multiword_bias: float) -> _Choices:
        """Every token's choice when its candidates must beat the identity by ``bar`` (plus
        ``multiword_bias`` for a split or merge), computed as :func:`decode` does."""
        cached = self._cache.get((bar, multiword_bias))
        if cached is not None:
            return cached
        if not len(self._starts):
            choices = _Choices(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
        else:
            bars = bar + np.where(self._multiword, multiword_bias, 0.0)
            key = self._scores - bars
            top = np.maximum.reduceat(key, self._starts)
            where = np.arange(len(key))
            firsts = np.where(key == np.repeat(top, self._lengths), where, len(key))
            best = np.minimum.reduceat(firsts, self._starts)
            replaced = ~(self._scores[best] - self._first <= bars[best])
            choices = _Choices(
                np.where(replaced, self._gains[best], self._keep[self._chosen]),
                replaced & self._merge[best],
            )
        self._cache[(bar, multiword_bias)] = choices
        return choices

    def numerator(self, margin: float, keep_bias: float, multiword_bias: float) -> int:
        """TP − FP of the decoded tokens."""
        plain = self._choices(margin + 0.0, multiword_bias)
        vocabulary = self._choices(margin + keep_bias, multiword_bias)
        gains = np.where(self._known, vocabulary.gains, plain.gains)
        merges = np.where(self._known, vocabulary.merges, plain.merges)
        total = self._fixed + int(gains.sum())
        blanked: set[int] = set()
        for token in self._chosen[merges].tolist():
            if token in blanked:  # a blanked token is skipped, its own merge too
                continue
            after = token + 1
            if after < len(self._keep) and self._sentence[after] == self._sentence[token]:
                blanked.add(after)
        for token in blanked:
            slot = self._slot.get(token)
            decided = int(self._keep[token]) if slot is None else int(gains[slot])
            total += int(self._empty[token]) - decided
        return total

    def err(self, margin: float, keep_bias: float, multiword_bias: float) -> float:
        """ERR = (TP − FP) / (TP + FN) of the tokens decoded with these thresholds."""
        numerator = self.numerator(margin, keep_bias, multiword_bias)
        return numerator / self._changed if self._changed else 0.0
