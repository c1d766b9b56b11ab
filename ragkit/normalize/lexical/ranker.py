"""Candidate features and the boosted-tree ranker that scores them (pure numpy at run time).

The ranker is a gradient-boosted ensemble of regression trees trained to rank each token's
candidates (LambdaRank: the gold normalization above its rivals). Trees are stored as flat
arrays, so the model saves to JSON and needs no pickle or LightGBM to run.

Example:
    >>> trees = TreeEnsemble(
    ...     base_score=-1.0, learning_rate=0.5, feature_names=("a",),
    ...     trees=[Tree(feature=[0, -1, -1], threshold=[0.5, 0, 0], left=[1, -1, -1],
    ...                 right=[2, -1, -1], value=[0.0, -2.0, 4.0])],
    ... )
    >>> trees.score(np.array([[0.0], [1.0]])).tolist()
    [-2.0, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragkit.normalize.lexical.candidates import Candidate, Resources, max_run, token_shape
from ragkit.normalize.lexical.context import corpus_context

FEATURE_NAMES: tuple[str, ...] = (
    "identity",
    "lexicon_probability",
    "lexicon_log_count",
    "raw_log_count",
    "raw_identity_probability",
    "from_lexicon",
    "from_elongation",
    "raw_max_run",
    "edit_distance",
    "from_split",
    "from_merge",
    "candidate_zipf",
    "raw_zipf",
    "candidate_in_vocabulary",
    "raw_length",
    "candidate_length",
    "candidate_words",
    "same_first_letter",
    "apostrophe_only",
    "raw_shape",
    "raw_has_digit",
    "left_bigram_log",
    "right_bigram_log",
    "left_bigram_gain",
    "right_bigram_gain",
    "candidate_count",
    "g_dropping",
    "from_american_spelling",
    "candidate_is_changed_target",
    "zipf_gain",
    "raw_pair_bigram_log",
    "left_corpus_log",
    "right_corpus_log",
    "left_corpus_gain",
    "right_corpus_gain",
    "split_corpus_log",
    "from_abbreviation",
    "from_g_rule",
    "raw_web_zipf",
    "candidate_web_zipf",
    "from_slang",
    # relative to the token's other candidates (added by candidate_rows)
    "zipf_rank",
    "zipf_gap",
    "lexicon_rank",
    "edit_zipf_best",
)
_RELATIVE = 4


def candidate_features(
    tokens: Sequence[str],
    position: int,
    candidate: Candidate,
    resources: Resources,
    candidate_count: int,
) -> list[float]:
    """The features of one candidate in context (:data:`FEATURE_NAMES` but the relative ones).

    Example:
        >>> res = Resources.build([("u", "you")], {"you": 7.0})
        >>> row = candidate_features(["u"], 0, Candidate("you", lexicon=True), res, 2)
        >>> row[FEATURE_NAMES.index("lexicon_probability")]
        1.0
    """
    raw = tokens[position]
    text = candidate.text
    counts = resources.lexicon.get(raw, {})
    total = sum(counts.values())
    left = tokens[position - 1] if position > 0 else "<s>"
    right_position = position + (2 if candidate.merge else 1)
    replaced = " ".join(tokens[position:right_position]) if candidate.merge else raw
    right = tokens[right_position] if right_position < len(tokens) else "</s>"
    words = text.split() or [""]
    left_count = resources.bigram(left, words[0])
    right_count = resources.bigram(words[-1], right)
    return [
        float(candidate.identity),
        counts.get(text, 0) / total if total else 0.0,
        math.log1p(counts.get(text, 0)),
        math.log1p(total),
        counts.get(raw, 0) / total if total else -1.0,
        float(candidate.lexicon),
        float(candidate.elongation),
        float(max_run(raw)),
        float(candidate.distance),
        float(candidate.split),
        float(candidate.merge),
        resources.zipf(text),
        resources.zipf(raw),
        float(all(word in resources.vocabulary for word in words)),
        float(len(raw)),
        float(len(text)),
        float(len(words)),
        float(bool(text) and text[0] == raw[0]),
        float(text.replace("'", "") == raw and text != raw),
        float(token_shape(raw)),
        float(any(char.isdigit() for char in raw)),
        math.log1p(left_count),
        math.log1p(right_count),
        math.log1p(left_count) - math.log1p(resources.bigram(left, raw)),
        math.log1p(right_count) - math.log1p(resources.bigram(raw, right)),
        float(candidate_count),
        float(raw.endswith("in") and text == raw + "g"),
        float(candidate.american),
        math.log1p(resources.targets.get(text, 0)),
        resources.zipf(text) - resources.zipf(replaced),
        math.log1p(resources.bigram(raw, tokens[position + 1])) if candidate.merge else -1.0,
        *corpus_context(left, replaced, words, right, resources),
        float(candidate.abbreviation),
        float(candidate.g_dropping),
        resources.web_zipf(raw),
        resources.web_zipf(text),
        float(candidate.slang),
    ]


def candidate_rows(
    tokens: Sequence[str], position: int, candidates: Sequence[Candidate], resources: Resources
) -> np.ndarray:
    """Feature matrix of all candidates of ``tokens[position]``, one row each.

    Adds the features that compare a candidate with the token's other candidates: rank and gap
    in word frequency, rank by lexicon count, and whether it is the most frequent of the closest
    edit-distance candidates.

    Example:
        >>> res = Resources.build([("u", "you")], {"you": 7.0, "yo": 5.0})
        >>> rows = candidate_rows(["u"], 0, [Candidate("u", identity=True),
        ...     Candidate("you", lexicon=True), Candidate("yo", distance=1)], res)
        >>> rows.shape == (3, len(FEATURE_NAMES)), float(rows[1, FEATURE_NAMES.index("zipf_rank")])
        (True, 0.0)
    """
    base = np.array(
        [
            candidate_features(tokens, position, candidate, resources, len(candidates))
            for candidate in candidates
        ]
    ).reshape(len(candidates), len(FEATURE_NAMES) - _RELATIVE)
    zipf = base[:, FEATURE_NAMES.index("candidate_zipf")]
    lexicon_count = base[:, FEATURE_NAMES.index("lexicon_log_count")]
    others = np.array([not c.identity for c in candidates])
    relative = np.zeros((len(candidates), _RELATIVE))
    for row, candidate in enumerate(candidates):
        rivals = others.copy()
        rivals[row] = False
        relative[row, 0] = float(np.sum(zipf[others] > zipf[row]))
        relative[row, 1] = zipf[row] - (zipf[rivals].max() if rivals.any() else 0.0)
        relative[row, 2] = float(np.sum(lexicon_count > lexicon_count[row]))
    edits = [i for i, c in enumerate(candidates) if c.distance > 0]
    if edits:
        closest = min(candidates[i].distance for i in edits)
        best = max((i for i in edits if candidates[i].distance == closest), key=lambda i: zipf[i])
        relative[best, 3] = 1.0
    return np.hstack([base, relative])


@dataclass
class Tree:
    """One regression tree as flat arrays; ``left[i] == -1`` marks a leaf."""

    feature: list[int]
    threshold: list[float]
    left: list[int]
    right: list[int]
    value: list[float]

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Leaf values for each row (``rows[:, feature] <= threshold`` goes left)."""
        feature = np.asarray(self.feature)
        threshold = np.asarray(self.threshold)
        left = np.asarray(self.left)
        right = np.asarray(self.right)
        node = np.zeros(len(rows), dtype=np.int64)
        active = left[node] != -1
        while active.any():
            index = np.nonzero(active)[0]
            current = node[index]
            goes_left = rows[index, feature[current]] <= threshold[current]
            node[index] = np.where(goes_left, left[current], right[current])
            active = left[node] != -1
        return np.asarray(self.value)[node]


@dataclass
class TreeEnsemble:
    """Boosted trees: ``score = base_score + learning_rate · Σ tree(x)`` (log-odds)."""

    base_score: float
    learning_rate: float
    feature_names: tuple[str, ...]
    trees: list[Tree]

    def score(self, rows: np.ndarray) -> np.ndarray:
        """Log-odds that each candidate row is the right normalization.

        All trees are walked together, one level per step, over padded node arrays.
        """
        rows = np.asarray(rows, dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != len(self.feature_names):
            raise ValueError(f"expected rows of {len(self.feature_names)} features")
        total = np.full(len(rows), self.base_score)
        if not self.trees or not len(rows):
            return total
        feature, threshold, left, right, value = self._arrays()
        tree_index = np.arange(len(self.trees))[None, :]
        node = np.zeros((len(rows), len(self.trees)), dtype=np.int64)
        row_index = np.arange(len(rows))[:, None]
        while True:
            inner = left[tree_index, node] >= 0
            if not inner.any():
                break
            split = np.maximum(feature[tree_index, node], 0)
            goes_left = rows[row_index, split] <= threshold[tree_index, node]
            step = np.where(goes_left, left[tree_index, node], right[tree_index, node])
            node = np.where(inner, step, node)
        return total + self.learning_rate * value[tree_index, node].sum(axis=1)

    def _arrays(self) -> tuple[np.ndarray, ...]:
        """Node arrays of all trees padded to one width: feature, threshold, left, right, value."""
        cached = self.__dict__.get("_padded")
        if cached is None:
            width = max(len(tree.feature) for tree in self.trees)
            shape = (len(self.trees), width)
            feature = np.full(shape, -1, dtype=np.int64)
            threshold = np.zeros(shape)
            left = np.full(shape, -1, dtype=np.int64)
            right = np.full(shape, -1, dtype=np.int64)
            value = np.zeros(shape)
            for number, tree in enumerate(self.trees):
                size = len(tree.feature)
                feature[number, :size] = tree.feature
                threshold[number, :size] = tree.threshold
                left[number, :size] = tree.left
                right[number, :size] = tree.right
                value[number, :size] = tree.value
            cached = (feature, threshold, left, right, value)
            self.__dict__["_padded"] = cached
        return cached

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, at full precision: a rounded threshold can fall between two feature
        values that differ only by float noise and send both down one side, changing decisions."""
        return {
            "base_score": self.base_score,
            "learning_rate": self.learning_rate,
            "feature_names": list(self.feature_names),
            "trees": [
                {
                    "feature": tree.feature,
                    "threshold": [float(x) for x in tree.threshold],
                    "left": tree.left,
                    "right": tree.right,
                    "value": [float(x) for x in tree.value],
                }
                for tree in self.trees
            ],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TreeEnsemble:
        """Inverse of :meth:`to_dict`."""
        return cls(
            base_score=float(data["base_score"]),
            learning_rate=float(data["learning_rate"]),
            feature_names=tuple(data["feature_names"]),
            trees=[Tree(**tree) for tree in data["trees"]],
        )


def fit_ranker(
    rows: np.ndarray,
    labels: np.ndarray,
    groups: Sequence[int],
    n_trees: int = 300,
    leaves: int = 31,
    learning_rate: float = 0.05,
    l2: float = 1.0,
    seed: int = 0,
) -> TreeEnsemble:
    """Fit LightGBM LambdaRank trees over the candidates of each token and export them as a
    :class:`TreeEnsemble`.

    ``groups`` gives the number of consecutive rows (candidates) of each token: the trees learn
    to put a token's gold candidate above its rivals, which is the decision the normalizer
    makes, rather than to score each candidate alone (a binary classifier: 0.710 → 0.725
    ERR by 10-fold cross-validation on the training part). LightGBM is needed for training
    only; the export is checked against LightGBM's own raw scores before it is returned.
    """
    try:
        import lightgbm
    except ImportError as error:  # pragma: no cover - depends on the environment
        from ragkit.errors import RagkitError

        raise RagkitError(
            "training the lexical normalizer needs LightGBM: pip install 'lightgbm>=4.3,<5'"
        ) from error
    if sum(groups) != len(rows):
        raise ValueError(f"groups cover {sum(groups)} rows, not {len(rows)}")
    model = lightgbm.LGBMRanker(
        n_estimators=n_trees,
        num_leaves=leaves,
        learning_rate=learning_rate,
        reg_lambda=l2,
        random_state=seed,
        deterministic=True,
        force_row_wise=True,
        n_jobs=2,
        verbose=-1,
    )
    model.fit(rows, labels, group=list(groups))
    booster = model.booster_
    trees = [_lightgbm_tree(info["tree_structure"]) for info in booster.dump_model()["tree_info"]]
    ensemble = TreeEnsemble(
        base_score=0.0, learning_rate=1.0, feature_names=FEATURE_NAMES, trees=trees
    )
    sample = rows[: min(len(rows), 5000)]
    if not np.allclose(ensemble.score(sample), booster.predict(sample, raw_score=True), atol=1e-6):
        raise RuntimeError("exported trees disagree with LightGBM's raw scores")
    return ensemble


def _lightgbm_tree(root: dict[str, Any]) -> Tree:
    """One tree of LightGBM's ``dump_model()`` as flat arrays (numeric ``<=`` splits only)."""
    tree = Tree(feature=[], threshold=[], left=[], right=[], value=[])
    pending = [(root, -1, False)]
    while pending:
        node, parent, is_right = pending.pop()
        index = len(tree.feature)
        if parent >= 0:
            (tree.right if is_right else tree.left)[parent] = index
        if "leaf_value" in node:
            tree.feature.append(-1)
            tree.threshold.append(0.0)
            tree.left.append(-1)
            tree.right.append(-1)
            tree.value.append(float(node["leaf_value"]))
            continue
        if node["decision_type"] != "<=":
            raise ValueError(f"unsupported LightGBM split {node['decision_type']!r}")
        tree.feature.append(int(node["split_feature"]))
        tree.threshold.append(float(node["threshold"]))
        tree.left.append(-2)  # filled in when the child is visited
        tree.right.append(-2)
        tree.value.append(0.0)
        pending.append((node["right_child"], index, True))
        pending.append((node["left_child"], index, False))
    return tree
