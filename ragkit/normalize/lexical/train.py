"""Training of the lexical normalizer on MultiLexNorm data, tuned by cross-validation.

A tenth of the training file is held out first (:func:`carve_train`) and only scored. The rest
is cut into k folds: the lexicon and bigram counts a fold's tokens see are
built from the *other* folds, so the ranker learns how far to trust a lexicon entry on words it
has not seen, as they will be at run time; with many folds (20 by default) the other folds'
lexicon is nearly as large as the one the model keeps, so the features the ranker learns from
look like the ones it meets at run time. The replacement margin and the keep bias are chosen
on out-of-fold scores (a ranker fitted on the other folds scores each fold); the model's ranker
is then fitted on all folds and keeps the counts of all of them. A model of the training part is
scored on the dev split; the saved model is fitted the same way on the training part and the
dev split together (more annotated sentences: a larger lexicon) and scored on the held-out tenth.

Example:
    >>> from ragkit.normalize.lexical.format import LexToken
    >>> fit, held = carve_train([(LexToken(str(i), str(i)),) for i in range(20)])
    >>> len(fit), [s[0].raw for s in held]
    (18, ['9', '19'])
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ragkit.errors import RagkitError
from ragkit.normalize.lexical.candidates import Candidate, CandidateGenerator, Resources
from ragkit.normalize.lexical.evaluate import (
    ChangeScore,
    LexnormScore,
    err_interval,
    most_frequent_replacement,
    score_by_change,
    score_predictions,
)
from ragkit.normalize.lexical.format import Sentence, read_lexnorm
from ragkit.normalize.lexical.normalizer import LexicalNormalizer, TokenDecision, decode
from ragkit.normalize.lexical.ranker import candidate_rows, fit_ranker
from ragkit.normalize.lexical.sources import (
    american_spellings,
    corpus_bigrams,
    english_vocabulary,
    slang_expansions,
    web_words,
)
from ragkit.normalize.lexical.tuning import ThresholdScorer

logger = logging.getLogger(__name__)
MARGINS = tuple(round(x, 2) for x in np.arange(-2.0, 4.01, 0.25))
KEEP_BIASES = tuple(round(x, 2) for x in np.arange(0.0, 4.01, 0.5))
MULTIWORD_BIASES = tuple(round(x, 2) for x in np.arange(-1.0, 2.01, 0.25))


def build_resources(
    sentences: Sequence[Sentence],
    vocabulary: Mapping[str, float],
    corpus: Mapping[str, float] | None = None,
    web: Mapping[str, float] | None = None,
    slang: Mapping[str, str] | None = None,
    american: Mapping[str, str] | None = None,
) -> Resources:
    """Lexicon and normalized-side bigrams of ``sentences`` over ``vocabulary`` (and ``corpus``
    bigrams, see :func:`corpus_bigrams`, ``web`` words, see :func:`web_words`, and ``slang``,
    see :func:`slang_expansions`, and ``american`` spellings, see :func:`american_spellings`)."""
    return Resources.build(
        ((token.raw, token.norm) for sentence in sentences for token in sentence),
        vocabulary,
        ([token.norm for token in sentence if token.norm] for sentence in sentences),
        corpus,
        web,
        slang,
        american,
    )


class WordLists(NamedTuple):
    """The package word lists a model is built with (see :func:`build_resources`)."""

    vocabulary: Mapping[str, float]
    corpus: Mapping[str, float]
    web: Mapping[str, float]
    slang: Mapping[str, str]
    american: Mapping[str, str]


@dataclass
class _Fold:
    """Candidate rows of one fold's sentences, featurized with the other folds' counts.

    ``decisions[s][p]`` is token ``p`` of sentence ``s``: its candidates, the index of its first
    row in ``rows`` (−1 when it has no rival candidate or is merged) and whether it is a
    vocabulary word.
    """

    sentences: list[Sentence]
    rows: np.ndarray
    labels: np.ndarray
    decisions: list[list[tuple[tuple[Candidate, ...], int, bool]]]
    changed: int
    reachable: int

    @property
    def groups(self) -> list[int]:
        """The number of rows (candidates) of each token that has rows, in row order."""
        return [
            len(found) for sentence in self.decisions for found, start, _ in sentence if start >= 0
        ]


def _fold_rows(sentences: Sequence[Sentence], resources: Resources) -> _Fold:
    """Feature rows, labels and candidate lists of every token of ``sentences``."""
    generator = CandidateGenerator(resources)
    rows: list[list[float]] = []
    labels: list[int] = []
    decisions: list[list[tuple[tuple[Candidate, ...], int, bool]]] = []
    changed = reachable = 0
    for sentence in sentences:
        tokens = [token.raw for token in sentence]
        found: list[tuple[tuple[Candidate, ...], int, bool]] = []
        for position, token in enumerate(sentence):
            candidates = tuple(generator.generate(tokens, position))
            known = token.raw in resources.vocabulary
            if token.changed and not token.merged:
                changed += 1
                reachable += token.norm in {candidate.text for candidate in candidates}
            if len(candidates) == 1 or token.merged:
                found.append((candidates, -1, known))
                continue
            found.append((candidates, len(rows), known))
            rows.extend(candidate_rows(tokens, position, candidates, resources).tolist())
            merges = position + 1 < len(sentence) and sentence[position + 1].merged
            labels.extend(
                int(candidate.text == token.norm and candidate.merge == merges)
                for candidate in candidates
            )
        decisions.append(found)
    width = len(rows[0]) if rows else 0
    return _Fold(
        list(sentences),
        np.array(rows).reshape(len(rows), width),
        np.array(labels),
        decisions,
        changed,
        reachable,
    )


def _token_decisions(fold: _Fold, scores: np.ndarray) -> list[list[TokenDecision]]:
    """The fold's tokens as :class:`TokenDecision` with ``scores`` of its rows."""
    return [
        [
            TokenDecision(
                candidates,
                tuple(scores[start : start + len(candidates)].tolist())
                if start >= 0
                else (0.0,) * len(candidates),
                known,
            )
            for candidates, start, known in sentence
        ]
        for sentence in fold.decisions
    ]


def carve_train(
    sentences: Sequence[Sentence], every: int = 10
) -> tuple[list[Sentence], list[Sentence]]:
    """Split training sentences into (fit, held-out): every ``every``-th is held out."""
    fit = [s for i, s in enumerate(sentences) if i % every != every - 1]
    held = [s for i, s in enumerate(sentences) if i % every == every - 1]
    return fit, held


@dataclass(frozen=True)
class Evaluation:
    """Scores of one model on one gold set: overall and by change type."""

    overall: LexnormScore
    by_change: dict[str, ChangeScore]
    interval: tuple[float, float] | None = None  # 95 % bootstrap interval of ERR (scored sets)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            **self.overall.to_dict(),
            "err_interval": list(self.interval) if self.interval else None,
            "by_change": {name: score.to_dict() for name, score in self.by_change.items()},
        }


def _evaluate(
    gold: Sequence[Sentence],
    decisions: Sequence[Sequence[TokenDecision]],
    margin: float,
    keep_bias: float,
    multiword_bias: float = 0.0,
) -> Evaluation:
    """Score decoded ``decisions`` against ``gold``."""
    predictions = [
        decode([token.raw for token in sentence], found, margin, False, keep_bias, multiword_bias)
        for sentence, found in zip(gold, decisions, strict=True)
    ]
    return Evaluation(score_predictions(gold, predictions), score_by_change(gold, predictions))


def evaluate_normalizer(normalizer: LexicalNormalizer, gold: Sequence[Sentence]) -> Evaluation:
    """Score ``normalizer`` (its margin and keep bias) on ``gold`` sentences, with the 95 %
    bootstrap interval of its ERR over the sentences (:func:`err_interval`)."""
    predictions = [normalizer.normalize_tokens([t.raw for t in sentence]) for sentence in gold]
    return Evaluation(
        score_predictions(gold, predictions),
        score_by_change(gold, predictions),
        err_interval(gold, predictions),
    )


def tune_thresholds(
    gold: Sequence[Sentence], decisions: Sequence[Sequence[TokenDecision]]
) -> tuple[tuple[float, float, float], float]:
    """The (margin, keep bias, multiword bias) with the best ERR on ``gold``, and that ERR.

    Margin and keep bias are searched together over :data:`MARGINS` × :data:`KEEP_BIASES`, then
    the multiword bias over :data:`MULTIWORD_BIASES`, then margin and keep bias again; ties go to
    the smallest change from 0. Each setting's ERR is the one decoding would give
    (:class:`~ragkit.normalize.lexical.tuning.ThresholdScorer`), without decoding each.
    """
    err = ThresholdScorer(gold, decisions).err

    def pairs(multiword: float) -> tuple[float, float]:
        scored = {(m, b): err(m, b, multiword) for m in MARGINS for b in KEEP_BIASES}
        return max(scored, key=lambda key: (scored[key], -abs(key[0]), -key[1]))

    margin, bias = pairs(0.0)
    multiwords = {w: err(margin, bias, w) for w in MULTIWORD_BIASES}
    multiword = max(multiwords, key=lambda w: (multiwords[w], -abs(w)))
    margin, bias = pairs(multiword)
    return (float(margin), float(bias), float(multiword)), err(margin, bias, multiword)


@dataclass(frozen=True)
class TrainingReport:
    """What :func:`train_lexical` did and how the models scored on dev and the held-out part.

    ``dev`` scores the model fitted on the training part alone (``dev_cross_validation`` is its
    out-of-fold score); ``held`` scores the saved model, fitted on ``model_sentences`` (the
    training part, plus the dev split when ``dev_in_model``), and ``cross_validation`` is its
    out-of-fold score at the chosen margin and biases. ``most_frequent`` is the MFR baseline
    built from the training part, ``held_most_frequent`` from the saved model's sentences.
    """

    language: str
    train_sentences: int
    held_sentences: int
    model_sentences: int
    dev_in_model: bool
    folds: int
    train_tokens: int
    model_tokens: int
    dev_tokens: int
    vocabulary_words: int
    corpus_bigrams: int
    web_words: int
    slang_entries: int
    american_spellings: int
    candidate_rows: int
    trees: int
    margin: float
    keep_bias: float
    multiword_bias: float
    cross_validation: Evaluation
    dev_cross_validation: Evaluation
    dev: Evaluation
    held: Evaluation
    leave_as_is: LexnormScore
    most_frequent: LexnormScore
    held_most_frequent: LexnormScore
    train_candidate_recall: float
    dev_candidate_recall: float
    held_candidate_recall: float
    model_path: str
    model_bytes: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        data = asdict(self)
        for key in (
            "cross_validation",
            "dev_cross_validation",
            "dev",
            "held",
            "leave_as_is",
            "most_frequent",
            "held_most_frequent",
        ):
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


@dataclass(frozen=True)
class _Fitted:
    """One model fitted by :func:`_fit_model`, with its out-of-fold evaluation."""

    normalizer: LexicalNormalizer
    cross_validation: Evaluation
    candidate_rows: int
    candidate_recall: float


def _fit_model(
    sentences: Sequence[Sentence],
    word_lists: WordLists,
    *,
    language: str,
    folds: int,
    trees: int,
    leaves: int,
    seed: int,
    say: Callable[[str], None],
) -> _Fitted:
    """Cross-validate on ``sentences`` (thresholds chosen there), then fit the model on all."""
    parts: list[_Fold] = []
    for fold in range(folds):
        rest = [s for i, s in enumerate(sentences) if i % folds != fold]
        part = _fold_rows(
            [s for i, s in enumerate(sentences) if i % folds == fold],
            build_resources(rest, *word_lists),
        )
        parts.append(part)
        say(
            f"fold {fold + 1}/{folds}: {len(part.rows)} candidate rows, "
            f"gold reachable for {part.reachable}/{part.changed} changed tokens"
        )
    gold: list[Sentence] = []
    decisions: list[list[TokenDecision]] = []
    for fold, part in enumerate(parts):
        others = [p for i, p in enumerate(parts) if i != fold]
        ranker = fit_ranker(
            np.vstack([p.rows for p in others]),
            np.concatenate([p.labels for p in others]),
            [size for p in others for size in p.groups],
            n_trees=trees,
            leaves=leaves,
            seed=seed,
        )
        gold.extend(part.sentences)
        decisions.extend(_token_decisions(part, ranker.score(part.rows)))
        say(f"cross-validation ranker {fold + 1}/{folds} scored its fold")
    (margin, bias, multiword), best = tune_thresholds(gold, decisions)
    say(
        f"margin {margin:g}, keep bias {bias:g}, multiword bias {multiword:g}: "
        f"cross-validated ERR {best:.4f}"
    )
    rows = np.vstack([p.rows for p in parts])
    say(f"fitting {trees} trees of {leaves} leaves on {len(rows)} rows")
    ranker = fit_ranker(
        rows,
        np.concatenate([p.labels for p in parts]),
        [size for p in parts for size in p.groups],
        n_trees=trees,
        leaves=leaves,
        seed=seed,
    )
    normalizer = LexicalNormalizer(
        build_resources(sentences, *word_lists),
        ranker,
        language=language,
        margin=margin,
        keep_bias=bias,
        multiword_bias=multiword,
    )
    return _Fitted(
        normalizer,
        _evaluate(gold, decisions, margin, bias, multiword),
        len(rows),
        sum(p.reachable for p in parts) / max(1, sum(p.changed for p in parts)),
    )


def train_lexical(
    train_path: str | Path,
    dev_path: str | Path,
    out_path: str | Path,
    *,
    language: str = "en",
    vocabulary_size: int = 30000,
    folds: int = 20,
    trees: int = 300,
    leaves: int = 31,
    seed: int = 0,
    dev_in_model: bool = True,
    progress: Callable[[str], None] | None = None,
) -> TrainingReport:
    """Train on ``train_path`` less its held-out tenth, tune by cross-validation, score, save.

    A model fitted on the training part alone is scored on ``dev_path``. With ``dev_in_model``
    (the default) the saved model is then fitted again on the training part *and* the dev
    split, so it learns from every annotated sentence but the held-out tenth, which scores it;
    otherwise the first model is saved and scored on the held-out tenth. Margins and biases
    are always chosen on out-of-fold scores of the model's own sentences; the dev split and
    the held-out part are scored, never tuned on. Needs ``wordfreq``, ``symspellpy`` (its
    bigram list), ``ekphrasis`` (its slang dictionary), ``breame`` (its British spellings) and
    ``lightgbm`` for training only; the saved model runs on numpy.
    """
    started = time.perf_counter()
    say = progress or logger.info
    fit, held = carve_train(read_lexnorm(train_path))
    dev = read_lexnorm(dev_path)
    if len(fit) < folds or not held or not dev:
        raise RagkitError(f"too few sentences in training ({train_path}) or dev ({dev_path}) file")
    vocabulary = english_vocabulary(vocabulary_size, language)
    corpus = corpus_bigrams(vocabulary)
    word_lists = WordLists(
        vocabulary,
        corpus,
        web_words(vocabulary, language=language),
        slang_expansions(),
        american_spellings(),
    )
    fit_model = functools.partial(
        _fit_model,
        word_lists=word_lists,
        language=language,
        folds=folds,
        trees=trees,
        leaves=leaves,
        seed=seed,
        say=say,
    )
    say(f"model for the dev split: {len(fit)} training sentences")
    scored = fit_model(fit)
    dev_score = evaluate_normalizer(scored.normalizer, dev)
    model_sentences = fit + dev if dev_in_model else fit
    if dev_in_model:
        say(f"saved model: {len(model_sentences)} training and dev sentences")
        shipped = fit_model(model_sentences)
    else:
        shipped = scored
    normalizer = shipped.normalizer
    report = TrainingReport(
        language=language,
        train_sentences=len(fit),
        held_sentences=len(held),
        model_sentences=len(model_sentences),
        dev_in_model=dev_in_model,
        folds=folds,
        train_tokens=sum(len(s) for s in fit),
        model_tokens=sum(len(s) for s in model_sentences),
        dev_tokens=sum(len(s) for s in dev),
        vocabulary_words=len(vocabulary),
        corpus_bigrams=len(corpus),
        web_words=len(word_lists.web),
        slang_entries=len(word_lists.slang),
        american_spellings=len(word_lists.american),
        candidate_rows=shipped.candidate_rows,
        trees=trees,
        margin=normalizer.margin,
        keep_bias=normalizer.keep_bias,
        multiword_bias=normalizer.multiword_bias,
        cross_validation=shipped.cross_validation,
        dev_cross_validation=scored.cross_validation,
        dev=dev_score,
        held=evaluate_normalizer(normalizer, held),
        leave_as_is=score_predictions(dev, [[t.raw for t in sentence] for sentence in dev]),
        most_frequent=_mfr_score(most_frequent_replacement(fit), dev),
        held_most_frequent=_mfr_score(most_frequent_replacement(model_sentences), held),
        train_candidate_recall=shipped.candidate_recall,
        dev_candidate_recall=_candidate_recall(scored.normalizer, dev),
        held_candidate_recall=_candidate_recall(normalizer, held),
        model_path=str(out_path),
        model_bytes=0,
        seconds=0.0,
    )
    summary = report.to_dict()
    normalizer.report = {
        key: summary[key]
        for key in (
            "train_sentences",
            "model_sentences",
            "dev_in_model",
            "margin",
            "keep_bias",
            "multiword_bias",
            "dev",
            "held",
        )
    }
    path = normalizer.save(out_path)
    seconds = time.perf_counter() - started
    say(
        f"dev ERR {report.dev.overall.err:.4f}, held-out ERR {report.held.overall.err:.4f} "
        f"(MFR {report.most_frequent.err:.4f} / {report.held_most_frequent.err:.4f}), {seconds:.0f}s"
    )
    return replace(report, model_bytes=path.stat().st_size, seconds=round(seconds, 1))
