"""Per-query fusion: which fusion should each query get, decided from its first-pass evidence?
Fits the model ``ragkit/search/per_query_fusion.json`` on the tuning part of
``benchmarks/feedback.py`` only.

Run from the repository root, after ``benchmarks.feedback`` built its indexes (it reuses them
and its query sets)::

    nice -n 15 .venv/bin/python -m experiments.fusion.perquery.perquery capture   # lists, once
    nice -n 15 .venv/bin/python -m experiments.fusion.perquery.perquery fit

``capture`` takes every judged query's first pass once, as ``Index.search`` makes it (hybrid,
``fusion_depth`` 300 as ``benchmarks.feedback`` asks for k = 300): the dense and the sparse
list (each scoring the other's candidates), the chunks of the sparse head holding the query as
a phrase, and the query's evidence (:func:`ragkit.search.per_query.query_evidence`), and for
an Arabic query the lists of its feedback pass (the vector moved towards the top chunks of
balanced fusion); it keeps them under ``--lists``. ``fit`` replays every fusion option offline
on those lists — weighted fusion with dense weight 0–1, the phrase lift on or off, balanced
fusion after feedback, the listings among the fused head demoted and left out of the phrase
matches (:mod:`ragkit.search.listing`, read from the index), documents ranked by their best
chunk — and searches the decision lists of :data:`GRID` for the highest mean gain over the
tuning query sets (each weighing the same) among those losing no set more than :data:`WORST`
(nor do the lists one step away on a dense-gap cut-off, :data:`CUT_OFFS`).

Writes ``perquery.json`` (per tuning set: balanced fusion, the chosen lists' figures, the
oracle; the best decision lists tried) next to this file and the model into ``ragkit/search``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import pickle
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch loads)

# isort: split

import numpy as np

from benchmarks import common
from benchmarks import feedback as bench
from benchmarks.common import write_result
from ragkit import Index
from ragkit.evaluate import load_judgments
from ragkit.paths import cache_dir
from ragkit.query.analyze import analyze, route
from ragkit.query.passes import first_stage, listing_chunks, phrase_matches, second_pass_query
from ragkit.search.fusion import Ranking, weighted_fusion
from ragkit.search.listing import HEAD, demoted, is_listing
from ragkit.search.per_query import (
    FEATURES,
    MODEL_FILE,
    Condition,
    FusionModel,
    FusionOption,
    QueryEvidence,
    Rule,
    query_evidence,
)
from ragkit.search.phrase import MIN_TERMS, phrase_first, phrase_words

HERE = Path(__file__).parent
DEPTH = 3 * bench.DEPTH  # chunks per list, as benchmarks.feedback searches (k = 300)
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
Choice = tuple[float, bool, bool]  # an option: dense weight, phrase lift, feedback
BASE = (0.5, False, False)  # today's default: dense weight 0.5, no phrase lift, no feedback
FEEDBACK = (0.5, False, True)  # balanced fusion after dense feedback


@dataclasses.dataclass
class Query:
    """One judged query's first pass, as captured."""

    collection: str
    set_name: str
    query_id: str
    dense: Ranking
    sparse: Ranking
    phrase: frozenset[int]
    words: int
    evidence: dict[str, float]


def capture(name: str, sets: dict[str, Path], indexes: Path, lists: Path) -> None:
    """Every judged query's first pass in collection ``name`` into ``lists/name.pkl``."""
    target = lists / f"{name}.pkl"
    if target.exists():
        return
    index = Index.open(indexes / name)
    store, settings = index.store, index.settings
    queries: list[Query] = []
    owner: dict[int, str] = {}
    for set_name, folder in sets.items():
        judgments = load_judgments(folder)
        for query_id in judgments.judged:
            text = judgments.queries[query_id]
            languages = route(text, None, store)
            analyzed = analyze(text, languages, "hybrid", settings, lambda: index.encoder)
            found = first_stage(
                store, settings, "hybrid", "weighted", analyzed.vector, analyzed.terms,
                DEPTH, None, languages,
            )  # fmt: skip
            phrase = frozenset(phrase_matches(store, analyzed.terms, found.sparse))
            words = phrase_words(analyzed.terms)
            evidence = query_evidence(
                found.dense, found.sparse, words, phrase, languages[:1] == ["ar"]
            )
            queries.append(
                Query(name, set_name, query_id, found.dense, found.sparse, phrase, words,
                      dataclasses.asdict(evidence))
            )  # fmt: skip
            unknown = {i for i, _ in found.dense + found.sparse} - owner.keys()
            rows = store.chunks_by_id(unknown)
            owner.update({i: r.external_id or r.document_key for i, r in rows.items()})
    index.close()
    lists.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        pickle.dump({"queries": [dataclasses.asdict(q) for q in queries], "owner": owner}, out)


def listings(indexes: Path, name: str, ids: list[int]) -> frozenset[int]:
    """The listings (:mod:`ragkit.search.listing`) among the chunks ``ids`` of collection
    ``name`` (read from its index)."""
    index = Index.open(indexes / name)
    try:
        return frozenset(i for i, r in index.store.chunks_by_id(ids).items() if is_listing(r.text))
    finally:
        index.close()


def capture_feedback(name: str, sets: dict[str, Path], indexes: Path, lists: Path) -> None:
    """Every judged Arabic query's feedback lists in collection ``name`` into
    ``lists/name-feedback.pkl``: the query vector moved towards the top chunks of its balanced
    fusion (listings demoted), as ``Index.search`` moves it for a query given the feedback
    option, and the dense and sparse lists of that vector."""
    target = lists / f"{name}-feedback.pkl"
    if target.exists():
        return
    index = Index.open(indexes / name)
    store, settings = index.store, index.settings
    found: dict[tuple[str, str], tuple[Ranking, Ranking]] = {}
    owner: dict[int, str] = {}
    weight = BASE[0]
    for set_name, folder in sets.items():
        judgments = load_judgments(folder)
        for query_id in judgments.judged:
            text = judgments.queries[query_id]
            languages = route(text, None, store)
            if languages[:1] != ["ar"]:  # the feedback option is searched for Arabic only
                continue
            analyzed = analyze(text, languages, "hybrid", settings, lambda: index.encoder)
            first = first_stage(
                store, settings, "hybrid", "weighted", analyzed.vector, analyzed.terms,
                DEPTH, None, languages,
            )  # fmt: skip
            fused = weighted_fusion([first.dense, first.sparse], [weight, 1.0 - weight])
            head = [i for i, _ in fused[:HEAD]]
            fused = demoted(fused, listing_chunks(store, head))
            vector, _ = second_pass_query(store, fused, analyzed.vector, [], False, True)
            again = first_stage(
                store, settings, "hybrid", "weighted", vector, analyzed.terms, DEPTH, None,
                languages,
            )  # fmt: skip
            found[set_name, query_id] = (again.dense, again.sparse)
            unknown = {i for i, _ in again.dense + again.sparse} - owner.keys()
            rows = store.chunks_by_id(unknown)
            owner.update({i: r.external_id or r.document_key for i, r in rows.items()})
    index.close()
    with target.open("wb") as out:
        pickle.dump({"lists": found, "owner": owner}, out)


def load(lists: Path, name: str, indexes: Path) -> dict[str, Any]:
    """A collection's captured first passes (:func:`capture`), the listings among their
    chunks left out of the phrase matches as ``Index.search`` leaves them out."""
    with (lists / f"{name}.pkl").open("rb") as stream:
        data = pickle.load(stream)
    queries = [Query(**q) for q in data["queries"]]
    data["feedback"] = {}
    if (lists / f"{name}-feedback.pkl").exists():
        with (lists / f"{name}-feedback.pkl").open("rb") as stream:
            again = pickle.load(stream)
        data["feedback"] = again["lists"]
        data["owner"] = {**again["owner"], **data["owner"]}
    listed = listings(indexes, name, list(data["owner"]))
    for query in queries:  # the evidence as today's query_evidence finds it in the lists
        query.phrase = query.phrase - listed
        query.evidence = dataclasses.asdict(
            query_evidence(query.dense, query.sparse, query.words, query.phrase,
                           bool(query.evidence["arabic"]))
        )  # fmt: skip
    return {
        "queries": queries, "owner": data["owner"], "listings": listed,
        "feedback": data["feedback"],
    }  # fmt: skip


def replay(
    query: Query, owner: dict[int, str], listed: frozenset[int], weight: float, phrase: bool
) -> list[str]:
    """The query's documents under one fusion option (as ``Index.search`` ranks them: the
    ``listed`` chunks among the fused head keep :data:`~ragkit.search.listing.WEIGHT`)."""
    scored = weighted_fusion([query.dense, query.sparse], [weight, 1.0 - weight])
    scored = demoted(scored, listed & {i for i, _ in scored[:HEAD]})
    if phrase and query.words >= MIN_TERMS:
        scored = phrase_first(scored, query.phrase)
    ranked: dict[str, None] = {}
    for chunk, _ in scored:
        ranked.setdefault(owner[chunk], None)
        if len(ranked) == bench.DEPTH:
            break
    return list(ranked)


def option_scores(
    captured: dict[str, Any], judgments: dict[tuple[str, str], Any], lists: Path
) -> tuple[list[Query], np.ndarray, list[Choice]]:
    """Every query, and its nDCG@10 under every option (queries × options; each
    collection's kept beside its lists once computed)."""
    options = [(w, p, False) for p in (False, True) for w in WEIGHTS] + [FEEDBACK]
    queries: list[Query] = []
    rows: list[list[float]] = []
    for name, data in captured.items():
        kept = lists / f"{name}-ndcg-listing.npy"
        if not kept.exists():
            found = [
                [ndcg(query, replay(query, data["owner"], data["listings"], w, p), judgments[
                    name, query.set_name]) for w, p, _ in options[:-1]]
                for query in data["queries"]
            ]  # fmt: skip
            np.save(kept, np.array(found))
        kept_feedback = lists / f"{name}-ndcg-feedback.npy"
        if not kept_feedback.exists():
            column = []
            for query in data["queries"]:
                moved = data["feedback"].get((query.set_name, query.query_id))
                if moved is None:  # not captured: the option is not searched for it
                    column.append(np.nan)
                    continue
                again = dataclasses.replace(query, dense=moved[0], sparse=moved[1])
                run = replay(again, data["owner"], data["listings"], FEEDBACK[0], False)
                column.append(ndcg(query, run, judgments[name, query.set_name]))
            np.save(kept_feedback, np.array(column))
        queries += data["queries"]
        rows += np.column_stack([np.load(kept), np.load(kept_feedback)]).tolist()
    return queries, np.array(rows), options


def ndcg(query: Query, run: list[str], judged: Any) -> float:
    """The query's nDCG@10 for ``run``."""
    return float(
        common.per_query({query.query_id: run}, judged.qrels, [query.query_id])["ndcg_at_10"][0]
    )


# The decision lists searched (:class:`Grid`): a query of at least ``words`` words that a
# chunk of the sparse head holds as a phrase gets the phrase lift when the dense list ranks
# that chunk below ``missed`` (0: wherever it ranks it) or the query has at least ``long``
# words; else a query, not Arabic, whose phrase chunk the dense list ranks ``phrase_lean``th or
# lower (a phrase too short for the lift, or one the dense list ranks below the top few) leans
# ``phrase_weight`` towards the sparse list; else a query whose dense list is peaked — its top score at least ``confident`` above
# its 10th (``arabic_confident`` for Arabic: the multilingual encoder's cosines lie closer
# together) — leans ``peaked`` (``arabic_peaked``) towards the dense list; else an Arabic
# query whose dense list is flat (a gap of at most ``arabic_flat``: a topic many passages
# share) gets balanced fusion after dense feedback (Arabic only: a cut-off on the dense gap
# for other languages would fall on one encoder's scale, MiniLM's or e5's, and misjudge the
# other's lists); else a query of at most ``short`` words,
# not Arabic, leans ``dense``; else today's fusion. A parameter of 0 leaves its rule out.
GRID: dict[str, tuple[float, ...]] = {
    "words": (3, 4, 5, 6, 7),
    "missed": (0, 10, 20),
    "long": (6, 7, 8, 100),  # 100: no length alone
    "short": (0, 3),
    "dense": (0.6, 0.7),
    "confident": (0.0, 0.12, 0.16, 0.2, 0.25),
    "peaked": (0.6, 0.7),
    "arabic_confident": (0.0, 0.015, 0.02, 0.03, 0.04),
    "arabic_peaked": (0.6, 0.7),
    "arabic_flat": (0.0, 0.01, 0.015, 0.02, 0.03, math.inf),
    "phrase_lean": (0, 2, 3, 5, 11, 21),
    "phrase_weight": (0.3, 0.4),
}
# Cut-offs (the dense list's gap, whose scale is the encoder's; the dense rank of a phrase): one
# is taken only where the cut-offs either side of it lose no tuning set either (a plateau, not
# a cliff's edge).
CUT_OFFS = ("confident", "arabic_confident", "arabic_flat", "phrase_lean")
WORST = -0.001  # no tuning set may lose more than this (mean nDCG@10)
KEPT = 200  # the best points kept in perquery.json with their gains
LOOKUP = FusionOption("phrase first", 0.5, True)


@dataclasses.dataclass(frozen=True)
class Grid:
    """One point of :data:`GRID`: the parameters of one decision list."""

    words: float
    missed: float
    long: float
    short: float
    dense: float
    confident: float
    peaked: float
    arabic_confident: float
    arabic_peaked: float
    arabic_flat: float
    phrase_lean: float
    phrase_weight: float

    def model(self) -> FusionModel:
        """The decision list (see :data:`GRID`)."""
        phrase = Condition("phrase", at_least=1)
        arabic, not_arabic = Condition("arabic", at_least=1), Condition("arabic", at_most=0)
        found = [Rule(LOOKUP, (phrase, Condition("words", at_least=self.words)))]
        if self.missed:
            found = [
                Rule(LOOKUP, (phrase, Condition("words", at_least=max(self.words, self.long)))),
                Rule(LOOKUP, (phrase, Condition("words", at_least=self.words),
                              Condition("phrase_dense_rank", at_least=self.missed + 1))),
            ]  # fmt: skip
        if self.phrase_lean:
            lean = FusionOption(name_of(self.phrase_weight, False), self.phrase_weight, False)
            found.append(
                Rule(lean, (Condition("phrase_dense_rank", at_least=self.phrase_lean), not_arabic))
            )
        for gap, weight, language in (
            (self.confident, self.peaked, not_arabic),
            (self.arabic_confident, self.arabic_peaked, arabic),
        ):
            if gap:
                lean = FusionOption(name_of(weight, False), weight, False)
                found.append(Rule(lean, (Condition("dense_gap", at_least=gap), language)))
        if self.arabic_flat:
            moved = FusionOption(name_of(*FEEDBACK), *FEEDBACK)
            found.append(Rule(moved, (Condition("dense_gap", at_most=self.arabic_flat), arabic)))
        if self.short:
            lean = FusionOption(name_of(self.dense, False), self.dense, False)
            found.append(Rule(lean, (Condition("words", at_most=self.short), not_arabic)))
        return FusionModel(tuple(found), FusionOption(name_of(*BASE), *BASE))

    def neighbours(self) -> list[Grid]:
        """The points one step away along one of the dense-gap cut-offs (:data:`CUT_OFFS`)."""
        found = []
        for name in CUT_OFFS:
            values = GRID[name]
            at = values.index(getattr(self, name))
            found += [
                dataclasses.replace(self, **{name: values[i]})
                for i in (at - 1, at + 1)
                if 0 <= i < len(values)
            ]
        return found


def name_of(weight: float, phrase: bool, feedback: bool = False) -> str:
    lean = "balanced" if weight == 0.5 else "dense-leaning" if weight > 0.5 else "sparse-leaning"
    return (
        f"{lean} {weight:.1f}"
        + (" + phrase" if phrase else "")
        + (" + feedback" if feedback else "")
    )


def astuple(option: FusionOption) -> Choice:
    """The option as :func:`option_scores` lists it."""
    return option.dense_weight, option.phrase, option.feedback


def picks(model: FusionModel, features: dict[str, np.ndarray], options: list[Choice]) -> np.ndarray:
    """Each query's option under ``model`` (an index into ``options``), over the queries'
    evidence as columns (``features``), all at once: :meth:`FusionModel.choose`'s rule, checked
    against it for the model written (:func:`main`)."""
    count = len(next(iter(features.values())))
    chosen = np.full(count, options.index(astuple(model.otherwise)))
    open_ = np.ones(count, dtype=bool)
    for rule in model.rules:
        meets = open_.copy()
        for c in rule.conditions:
            meets &= (features[c.feature] >= c.at_least) & (features[c.feature] <= c.at_most)
        chosen[meets] = options.index(astuple(rule.option))
        open_ &= ~meets
    return chosen


def search(
    features: dict[str, np.ndarray], ndcg: np.ndarray, options: list[Choice], groups: list[str]
) -> tuple[FusionModel, dict[str, Any]]:
    """The decision list of highest mean gain over the tuning sets (each set weighs the same)
    among those that lose no set more than :data:`WORST`, nor do their neighbours along
    :data:`CUT_OFFS`, and the best candidates' gains."""
    base = options.index(BASE)
    names = sorted(set(groups))
    members = [np.array([i for i, g in enumerate(groups) if g == n]) for n in names]
    rows = np.arange(len(groups))
    points = [Grid(*values) for values in itertools.product(*GRID.values())]
    gains = np.empty((len(points), len(names)))
    for at, point in enumerate(points):
        lift = ndcg[rows, picks(point.model(), features, options)] - ndcg[:, base]
        gains[at] = [lift[m].mean() for m in members]
    means, safe = gains.mean(axis=1), gains.min(axis=1) >= WORST
    row_of = {point: at for at, point in enumerate(points)}
    admissible = [
        at for at in np.flatnonzero(safe) if all(safe[row_of[n]] for n in points[at].neighbours())
    ]
    if not admissible:
        raise SystemExit("no decision list loses no tuning set")
    best = max(admissible, key=lambda at: (means[at], str(points[at])))
    on_plateau = set(admissible)
    tried = {
        "grid": GRID,
        "points": len(points),
        "on_plateau": len(on_plateau),
        "best": [
            {**dataclasses.asdict(points[at]), "mean_gain": float(means[at]),
             "plateau": at in on_plateau, "gains": dict(zip(names, gains[at].tolist()))}
            for at in np.argsort(-means, kind="stable")[:KEPT]
        ],
    }  # fmt: skip
    return points[best].model(), tried


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("step", choices=("capture", "fit"))
    parser.add_argument("--only", action="append", default=[], help="collection name(s)")
    parser.add_argument("--indexes", type=Path, default=Path("/tmp/ragkit-feedback"))
    parser.add_argument("--sets", type=Path, default=cache_dir() / "bench" / "feedback")
    parser.add_argument("--lists", type=Path, default=Path("/tmp/ragkit-feedback/lists"))
    args = parser.parse_args()
    found = bench.collections(args.sets, args.only or list(bench.TUNE))
    if args.step == "capture":
        for name, sets in found.items():
            capture(name, sets, args.indexes, args.lists)
            capture_feedback(name, sets, args.indexes, args.lists)
            print(name, "captured", flush=True)
        return
    captured = {}
    judgments = {}
    for name, sets in found.items():
        if name not in bench.TUNE:
            raise SystemExit(f"{name} is held out: the model is fitted on the tuning part only")
        captured[name] = load(args.lists, name, args.indexes)
        for set_name, folder in sets.items():
            judgments[name, set_name] = load_judgments(folder)
    queries, ndcg, options = option_scores(captured, judgments, args.lists)
    base = options.index(BASE)
    groups = [f"{q.collection}/{q.set_name}" for q in queries]
    features = {f: np.array([q.evidence[f] for q in queries], dtype=float) for f in FEATURES}
    model, tried = search(features, ndcg, options, groups)
    chosen = picks(model, features, options)
    ruled = [model.choose(QueryEvidence(**q.evidence)) for q in queries]
    if [options[o] for o in chosen] != [(c.dense_weight, c.phrase, c.feedback) for c in ruled]:
        raise SystemExit("the replay's rule evaluation disagrees with FusionModel.choose")
    report: dict[str, Any] = {"model": dataclasses.asdict(model), "tried": tried, "sets": {}}
    for name in sorted(set(groups)):
        rows = [i for i, g in enumerate(groups) if g == name]
        today = [ndcg[i, base] for i in rows]
        fitted = [ndcg[i, chosen[i]] for i in rows]
        block = ndcg[rows]
        complete = ~np.isnan(block).any(axis=0)  # an option replayed for every query of the set
        means = np.where(complete, np.nan_to_num(block).mean(axis=0), -np.inf)
        report["sets"][name] = {
            "queries": len(rows),
            "today": float(np.mean(today)),
            "per_query": float(np.mean(fitted)),
            "p": common.paired_p(fitted, today),
            "oracle": float(np.mean(np.nanmax(ndcg[rows], axis=1))),
            "best_single": {name_of(*options[int(np.argmax(means))]): float(means.max())},
            "chosen": {
                name_of(*options[o]): int(sum(chosen[i] == o for i in rows))
                for o in sorted({chosen[i] for i in rows})
            },
        }
        row = report["sets"][name]
        print(
            f"{name:36s} today {row['today']:.3f} per-query {row['per_query']:.3f} "
            f"(p {row['p']:.3f}) oracle {row['oracle']:.3f} {row['chosen']}"
        )
    write_result("perquery", report, HERE, indent=1)
    model.write(MODEL_FILE, {"fitted_by": "experiments/fusion/perquery/perquery.py",
                             "tuning_sets": sorted(set(groups))})  # fmt: skip


if __name__ == "__main__":
    main()
