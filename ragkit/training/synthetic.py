"""Synthetic training groups from any corpus: pseudo-queries, hard negatives, teacher levels.

No relevance labels are needed. For each document one pseudo-query is made (seeded):

* ``title``: the document's title (≥ 3 words); every candidate of that group is then shown
  without its title, so the answer is not a verbatim copy;
* ``sentence``: one sentence of 6–30 words taken *out* of its passage (the positive is the
  passage without it);
* ``keywords``: the document's 3–6 words with the highest tf·idf, in text order.

Candidates are the pseudo-query's source plus its ``group_size − 1`` best other documents
from a hybrid first stage (backbone cosine + BM25 over :func:`ragkit.search.sparse.analyze` terms,
reciprocal-rank fused): hard negatives; their fused scores, min-max scaled over the fused list
(0 for a source it missed), are the groups' first-stage prior, and its top ``ANCHORS`` passages
their anchors (:mod:`ragkit.rerank.features`). Teacher levels (0–10):

* the source passage: 10;
* any other candidate: ``round(7 · (½ · p + ½ · a))`` where the pointwise signal
  ``p = clip((cos(candidate, source) − 0.35) / 0.45, 0, 1)`` is the backbone similarity to the
  known-relevant passage and the listwise signal ``a`` is first-stage agreement — the mean over
  the dense and BM25 lists of ``1 − (rank − 1) / depth`` (0 when absent). A near-duplicate
  ranked high by both retrievers earns up to 7; an unrelated hard negative 0–2.

Example:
    >>> doc = CorpusDocument("7", "flutter of swept wings", "Wings flutter. Tests ran at Mach 2 in the tunnel today.")
    >>> split_sentences(doc.body)
    ['Wings flutter.', 'Tests ran at Mach 2 in the tunnel today.']
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from ragkit.errors import RagkitError
from ragkit.rerank.backbone import StateBank
from ragkit.rerank.features import ANCHORS
from ragkit.search.fusion import minmax, reciprocal_rank_fusion
from ragkit.search.sparse import STOPWORDS, SparseIndex, analyze

QueryKind = Literal["title", "sentence", "keywords", "judged", "heading"]
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True)
class CorpusDocument:
    """One document of a training corpus."""

    doc_id: str
    title: str
    body: str

    def passage(self, with_title: bool = True) -> str:
        """The text a candidate shows: ``title\\n\\nbody`` as ragkit ingests BEIR records.

        Without the title, a copy of it opening the body goes too (Cranfield bodies repeat
        their title), so a title query never finds itself verbatim.
        """
        if with_title and self.title:
            return f"{self.title}\n\n{self.body}"
        if self.title and self.body.lower().startswith(self.title.lower()):
            return self.body[len(self.title) :].lstrip(" .\n") or self.body
        return self.body


@dataclass(frozen=True)
class TrainingGroup:
    """A pseudo-query and its candidates, as the reranker reads them, with teacher levels."""

    query: str
    kind: QueryKind
    source: str
    doc_ids: tuple[str, ...]
    passages: tuple[str, ...]
    labels: tuple[int, ...]
    prior: tuple[float, ...]  # first-stage score of each candidate, in [0, 1]
    anchors: tuple[str, ...]  # the first stage's best passages (ragkit.rerank.features)

    def as_dict(self) -> dict[str, object]:
        return {
            "query": self.query,
            "kind": self.kind,
            "source": self.source,
            "doc_ids": list(self.doc_ids),
            "labels": list(self.labels),
            "prior": [round(p, 4) for p in self.prior],
        }


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` split after ``. ! ?`` (empty pieces dropped)."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def read_beir_corpus(path: Path) -> list[CorpusDocument]:
    """Documents of a BEIR ``corpus.jsonl`` (a folder holding one is accepted too)."""
    file = path / "corpus.jsonl" if path.is_dir() else path
    if not file.exists():
        raise RagkitError(f"{file}: missing; a training corpus is a BEIR corpus.jsonl")
    documents = []
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                doc_id = str(record["_id"])
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise RagkitError(f"{file}:{number}: not a BEIR record ({error})") from error
            body = str(record.get("text") or "").strip()
            if body:
                documents.append(
                    CorpusDocument(doc_id, str(record.get("title") or "").strip(), body)
                )
    return documents


def keyword_query(
    body: str, idf: dict[str, float], rng: random.Random, language: str = "en"
) -> str | None:
    """3–6 of the body's non-stopwords with the highest tf·idf, in text order (None if too few)."""
    stop = STOPWORDS.get(language, ())
    words = [w for w in (w.lower() for w in _WORD.findall(body)) if w not in stop]
    counts = Counter(words)
    ranked = sorted(counts, key=lambda w: -counts[w] * idf.get(w, 0.0))
    chosen = set(ranked[: rng.randint(3, 6)])
    if len(chosen) < 3:
        return None
    ordered = list(dict.fromkeys(w for w in words if w in chosen))
    return " ".join(ordered)


def pseudo_query(
    doc: CorpusDocument, idf: dict[str, float], rng: random.Random, language: str = "en"
) -> tuple[str, QueryKind, str] | None:
    """``(query, kind, source passage)`` for ``doc``, or None when no kind applies."""
    kinds: list[QueryKind] = ["title", "sentence", "sentence", "keywords"]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind == "title" and len(doc.title.split()) >= 3:
            return doc.title, kind, doc.passage(with_title=False)
        if kind == "sentence":
            sentences = split_sentences(doc.body)
            usable = [
                i
                for i, s in enumerate(sentences)
                if 6 <= len(s.split()) <= 30
                and s.lower().rstrip(" .") not in doc.title.lower()
                and sum(s.lower() in t.lower() for t in sentences) == 1
            ]
            if len(sentences) >= 2 and usable:
                taken = rng.choice(usable)
                rest = " ".join(s for i, s in enumerate(sentences) if i != taken)
                remaining = CorpusDocument(doc.doc_id, doc.title, rest)
                return sentences[taken], kind, remaining.passage()
        if kind == "keywords":
            query = keyword_query(doc.body, idf, rng, language)
            if query:
                return query, kind, doc.passage()
    return None


def teacher_level(
    similarity: float, dense_rank: int | None, sparse_rank: int | None, depth: int
) -> int:
    """Level 0–7 of a non-source candidate (see the module docstring).

    Example:
        >>> teacher_level(0.9, 1, 1, 30), teacher_level(0.2, None, None, 30)
        (7, 0)
    """
    pointwise = min(max((similarity - 0.35) / 0.45, 0.0), 1.0)
    agreement = (
        sum(0.0 if rank is None else 1.0 - (rank - 1) / depth for rank in (dense_rank, sparse_rank))
        / 2
    )
    return round(7 * (0.5 * pointwise + 0.5 * agreement))


def build_groups(
    documents: Sequence[CorpusDocument],
    passages: StateBank,
    queries: StateBank,
    group_size: int = 16,
    depth: int = 30,
    seed: int = 0,
    language: str = "en",
) -> list[TrainingGroup]:
    """One training group per document that yields a pseudo-query (see the module docstring)."""
    if len(documents) < group_size:
        raise RagkitError(
            f"synthetic groups need at least group_size={group_size} documents, got {len(documents)}"
        )
    rng = random.Random(seed)
    full = [d.passage() for d in documents]
    vectors = passages.get(full).pooled().numpy()
    doc_terms = [analyze(p, language) for p in full]
    sparse = SparseIndex.build([(i, " ".join(t)) for i, t in enumerate(doc_terms)])
    frequency = Counter(w for d in documents for w in set(_WORD.findall(d.body.lower())))
    idf = {w: math.log(len(documents) / c) for w, c in frequency.items()}
    made = [(d, q) for d in documents if (q := pseudo_query(d, idf, rng, language)) is not None]
    query_vectors = queries.get([q for _, (q, _, _) in made]).pooled().numpy()
    position = {d.doc_id: i for i, d in enumerate(documents)}
    groups = []
    for (doc, (query, kind, source_passage)), query_vector in zip(made, query_vectors, strict=True):
        source = position[doc.doc_id]
        dense_scores = vectors @ query_vector
        dense = [(int(i), float(dense_scores[i])) for i in np.argsort(-dense_scores)[:depth]]
        lexical = sparse.search(analyze(query, language), depth)
        fused_scores = dict(reciprocal_rank_fusion([dense, lexical]))
        fused = [i for i in fused_scores if i != source]
        chosen = [source, *fused[: group_size - 1]]
        scaled = dict(zip(fused_scores, minmax(list(fused_scores.values())), strict=True))
        prior = [float(scaled.get(i, 0.0)) for i in chosen]
        texts = {
            i: source_passage if i == source else documents[i].passage(kind != "title")
            for i in {*chosen, *list(fused_scores)[:ANCHORS]}
        }
        dense_rank = {i: r for r, (i, _) in enumerate(dense, start=1)}
        sparse_rank = {i: r for r, (i, _) in enumerate(lexical, start=1)}
        labels = [
            10
            if i == source
            else teacher_level(
                float(vectors[i] @ vectors[source]), dense_rank.get(i), sparse_rank.get(i), depth
            )
            for i in chosen
        ]
        shown = [texts[i] for i in chosen]
        order = list(range(len(chosen)))
        rng.shuffle(order)
        groups.append(
            TrainingGroup(
                query=query,
                kind=kind,
                source=doc.doc_id,
                doc_ids=tuple(documents[chosen[k]].doc_id for k in order),
                passages=tuple(shown[k] for k in order),
                labels=tuple(labels[k] for k in order),
                prior=tuple(prior[k] for k in order),
                anchors=tuple(texts[i] for i in list(fused_scores)[:ANCHORS]),
            )
        )
    return groups
