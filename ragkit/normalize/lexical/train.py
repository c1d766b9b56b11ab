"""Training and evaluation of the lexical normalizer on MultiLexNorm data.

Training features come from a k-fold split of the training sentences: the lexicon and bigram
counts a training token sees are built from the *other* folds, so the ranker learns how far to
trust a lexicon entry on words it has not seen as they will be at run time. Two parts of the
training file are carved out first (:func:`carve_train`): the replacement margin and the keep
bias are tuned on one, the other is held out and only scored, as is the dev set. The shipped
model keeps the counts of the remaining training sentences, so neither part was seen by it.

Example:
    >>> gold = [(LexToken("u", "you"), LexToken("ok", "ok"), LexToken("r", "are"))]
    >>> score = score_predictions(gold, [["you", "okay", "r"]])
    >>> score.tp, score.fp, score.fn, score.err
    (1, 1, 1, 0.0)
    >>> most_frequent_replacement([(LexToken("u", "you"), LexToken("u", "you"), LexToken("u", "u"))])
    {'u': 'you'}
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.errors import RagkitError
from ragkit.normalize.lexical.candidates import CandidateGenerator, Resources
from ragkit.normalize.lexical.evaluate import ChangeScore, score_by_change
from ragkit.normalize.lexical.format import LexToken, Sentence, read_lexnorm
from ragkit.normalize.lexical.normalizer import LexicalNormalizer, decode
from ragkit.normalize.lexical.ranker import candidate_rows, fit_ensemble

logger = logging.getLogger(__name__)
MARGINS = tuple(round(x, 2) for x in np.arange(-2.0, 4.01, 0.25))
KEEP_BIASES = tuple(round(x, 2) for x in np.arange(0.0, 4.01, 0.5))


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
        needing = self.tp + self.fn
        return (self.tp - self.fp) / needing if needing else 0.0

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


def most_frequent_replacement(sentences: Iterable[Sequence[LexToken]]) -> dict[str, str]:
    """The MFR baseline: each raw token's most frequent training normalization (ties: first)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for sentence in sentences:
        for token in sentence:
            counts[token.raw][token.norm] += 1
    return {raw: options.most_common(1)[0][0] for raw, options in counts.items()}


def english_vocabulary(size: int, language: str = "en") -> dict[str, float]:
    """The ``size`` most frequent words of ``language`` with Zipf frequencies, from wordfreq."""
    try:
        import wordfreq
    except ImportError as error:
        raise RagkitError(
            "training the lexical normalizer needs word frequencies: pip install wordfreq"
        ) from error
    words = wordfreq.top_n_list(language, size)
    return {word: round(wordfreq.zipf_frequency(word, language), 2) for word in words}


def build_resources(sentences: Sequence[Sentence], vocabulary: Mapping[str, float]) -> Resources:
    """Lexicon and normalized-side bigrams of ``sentences`` over ``vocabulary``."""
    return Resources.build(
        ((token.raw, token.norm) for sentence in sentences for token in sentence),
        vocabulary,
        ([token.norm for token in sentence if token.norm] for sentence in sentences),
    )


def _candidate_rows(
    sentences: Sequence[Sentence], resources: Resources
) -> tuple[list[list[float]], list[int], int, int]:
    """Feature rows and labels of every decision in ``sentences``; also gold-reachable counts."""
    generator = CandidateGenerator(resources)
    rows: list[list[float]] = []
    labels: list[int] = []
    changed = reachable = 0
    for sentence in sentences:
        tokens = [token.raw for token in sentence]
        for position, token in enumerate(sentence):
            if token.merged:
                continue
            candidates = generator.generate(tokens, position)
            texts = [candidate.text for candidate in candidates]
            if token.changed:
                changed += 1
                reachable += token.norm in texts
            if len(candidates) == 1:
                continue
            rows.extend(candidate_rows(tokens, position, candidates, resources).tolist())
            labels.extend(int(candidate.text == token.norm) for candidate in candidates)
    return rows, labels, changed, reachable


def carve_train(
    sentences: Sequence[Sentence], every: int = 10
) -> tuple[list[Sentence], list[Sentence], list[Sentence]]:
    """Split training sentences into (fit, tune, held-out): every ``every``-th twice over.

    Example:
        >>> fit, tune, held = carve_train([(LexToken(str(i), str(i)),) for i in range(20)])
        >>> len(fit), [s[0].raw for s in tune], [s[0].raw for s in held]
        (16, ['8', '18'], ['9', '19'])
    """
    fit = [s for i, s in enumerate(sentences) if i % every < every - 2]
    tune = [s for i, s in enumerate(sentences) if i % every == every - 2]
    held = [s for i, s in enumerate(sentences) if i % every == every - 1]
    return fit, tune, held


@dataclass(frozen=True)
class Evaluation:
    """Scores of one model on one gold set: overall and by change type."""

    overall: LexnormScore
    by_change: dict[str, ChangeScore]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            **self.overall.to_dict(),
            "by_change": {name: score.to_dict() for name, score in self.by_change.items()},
        }


def evaluate_normalizer(normalizer: LexicalNormalizer, gold: Sequence[Sentence]) -> Evaluation:
    """Score ``normalizer`` (its margin and keep bias) on ``gold`` sentences."""
    predictions = [normalizer.normalize_tokens([t.raw for t in sentence]) for sentence in gold]
    return Evaluation(score_predictions(gold, predictions), score_by_change(gold, predictions))


def tune_thresholds(
    normalizer: LexicalNormalizer, gold: Sequence[Sentence]
) -> dict[tuple[float, float], LexnormScore]:
    """ERR on ``gold`` for every (margin, keep bias) of :data:`MARGINS` × :data:`KEEP_BIASES`."""
    tokens = [[token.raw for token in sentence] for sentence in gold]
    decisions = [normalizer.decisions(t) for t in tokens]
    return {
        (margin, bias): score_predictions(
            gold,
            [
                decode(t, found, margin, keep_case=False, keep_bias=bias)
                for t, found in zip(tokens, decisions, strict=True)
            ],
        )
        for margin in MARGINS
        for bias in KEEP_BIASES
    }


@dataclass(frozen=True)
class TrainingReport:
    """What :func:`train_lexical` did and how the model scored on dev and the held-out part.

    ``most_frequent`` and ``held_most_frequent`` are the MFR baseline built from the fit part.
    """

    language: str
    train_sentences: int
    tune_sentences: int
    held_sentences: int
    train_tokens: int
    dev_tokens: int
    vocabulary_words: int
    candidate_rows: int
    trees: int
    margin: float
    keep_bias: float
    tune: LexnormScore
    dev: Evaluation
    held: Evaluation
    leave_as_is: LexnormScore
    most_frequent: LexnormScore
    held_most_frequent: LexnormScore
    dev_candidate_recall: float
    model_path: str
    model_bytes: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data = asdict(self)
        for key in ("tune", "dev", "held", "leave_as_is", "most_frequent", "held_most_frequent"):
            data[key] = getattr(self, key).to_dict()
        return data


def _candidate_recall(normalizer: LexicalNormalizer, gold: Sequence[Sentence]) -> float:
    """Fraction of changed gold tokens whose normalization is among their candidates."""
    reachable = changed = 0
    for sentence in gold:
        tokens = [token.raw.lower() for token in sentence]
        for position, token in enumerate(sentence):
            if token.changed and not token.merged:
                changed += 1
                found = normalizer.generator.generate(tokens, position)
                reachable += token.norm in {candidate.text for candidate in found}
    return reachable / changed if changed else 0.0


def _mfr_score(mfr: Mapping[str, str], gold: Sequence[Sentence]) -> LexnormScore:
    """The most-frequent-replacement baseline on ``gold``."""
    return score_predictions(gold, [[mfr.get(t.raw, t.raw) for t in sentence] for sentence in gold])


def train_lexical(
    train_path: str | Path,
    dev_path: str | Path,
    out_path: str | Path,
    *,
    language: str = "en",
    vocabulary_size: int = 30000,
    folds: int = 5,
    trees: int = 300,
    leaves: int = 31,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> TrainingReport:
    """Train on ``train_path`` less the carved-out parts, tune, score, save to ``out_path``.

    The margin and keep bias are tuned on the tune part of ``train_path`` only; ``dev_path``
    and the held-out part are scored, never tuned on. Needs ``wordfreq`` and ``scikit-learn``
    (training only; the saved model runs on numpy).
    """
    started = time.perf_counter()
    say = progress or logger.info
    fit, tune, held = carve_train(read_lexnorm(train_path))
    dev = read_lexnorm(dev_path)
    if not fit or not tune or not held or not dev:
        raise RagkitError(f"too few sentences in training ({train_path}) or dev ({dev_path}) file")
    vocabulary = english_vocabulary(vocabulary_size, language)
    rows: list[list[float]] = []
    labels: list[int] = []
    for fold in range(folds):
        held_fold = [s for i, s in enumerate(fit) if i % folds == fold]
        rest = [s for i, s in enumerate(fit) if i % folds != fold]
        fold_rows, fold_labels, changed, reachable = _candidate_rows(
            held_fold, build_resources(rest, vocabulary)
        )
        rows.extend(fold_rows)
        labels.extend(fold_labels)
        say(
            f"fold {fold + 1}/{folds}: {len(fold_rows)} candidate rows, "
            f"gold reachable for {reachable}/{changed} changed tokens"
        )
    say(f"fitting {trees} trees of {leaves} leaves on {len(rows)} rows")
    ranker = fit_ensemble(np.array(rows), np.array(labels), n_trees=trees, leaves=leaves, seed=seed)
    normalizer = LexicalNormalizer(build_resources(fit, vocabulary), ranker, language=language)

    scored = tune_thresholds(normalizer, tune)
    margin, bias = max(scored, key=lambda key: (scored[key].err, -abs(key[0]), -key[1]))
    normalizer.margin, normalizer.keep_bias = float(margin), float(bias)
    say(f"margin {margin:g}, keep bias {bias:g}: tune ERR {scored[margin, bias].err:.4f}")
    mfr = most_frequent_replacement(fit)
    report = TrainingReport(
        language=language,
        train_sentences=len(fit),
        tune_sentences=len(tune),
        held_sentences=len(held),
        train_tokens=sum(len(s) for s in fit),
        dev_tokens=sum(len(s) for s in dev),
        vocabulary_words=len(vocabulary),
        candidate_rows=len(rows),
        trees=trees,
        margin=float(margin),
        keep_bias=float(bias),
        tune=scored[margin, bias],
        dev=evaluate_normalizer(normalizer, dev),
        held=evaluate_normalizer(normalizer, held),
        leave_as_is=score_predictions(dev, [[t.raw for t in sentence] for sentence in dev]),
        most_frequent=_mfr_score(mfr, dev),
        held_most_frequent=_mfr_score(mfr, held),
        dev_candidate_recall=_candidate_recall(normalizer, dev),
        model_path=str(out_path),
        model_bytes=0,
        seconds=0.0,
    )
    summary = report.to_dict()
    normalizer.report = {
        key: summary[key]
        for key in ("train_sentences", "train_tokens", "margin", "keep_bias", "dev", "held")
    }
    path = normalizer.save(out_path)
    seconds = time.perf_counter() - started
    say(
        f"dev ERR {report.dev.overall.err:.4f}, held-out ERR {report.held.overall.err:.4f} "
        f"(MFR {report.most_frequent.err:.4f} / {report.held_most_frequent.err:.4f}), {seconds:.0f}s"
    )
    return replace(report, model_bytes=path.stat().st_size, seconds=round(seconds, 1))
