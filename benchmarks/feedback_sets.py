"""The query sets of ``benchmarks/feedback.py`` written as BEIR folders: literal spans of a
collection's documents (known-item) and the heading corpora's sections under their headings.

Example:
    >>> json_line("d1", "ماء").rstrip()
    '{"_id": "d1", "text": "ماء"}'
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ragkit.corpora.heading_sources import heading_corpora
from ragkit.paths import cache_dir


def json_line(record_id: str, text: str) -> str:
    """One BEIR ``corpus.jsonl`` / ``queries.jsonl`` line."""
    return json.dumps({"_id": record_id, "text": text}, ensure_ascii=False) + "\n"


def write_beir(
    target: Path, corpus: str, queries: dict[str, str], relevant: list[tuple[str, str]]
) -> None:
    """A BEIR folder at ``target``: ``corpus`` (JSON lines as written), ``queries`` by id and
    the (query id, document id) pairs judged relevant."""
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    (target / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (target / "queries.jsonl").write_text(
        "".join(json_line(q, t) for q, t in queries.items()), encoding="utf-8"
    )
    (target / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in relevant),
        encoding="utf-8",
    )


def literal_span(text: str, rng: random.Random) -> str:
    """A literal 6–10-word span of ``text`` (at least 10 words), cut where ``rng`` says."""
    words = text.split()
    length = rng.randint(6, 10)
    start = rng.randint(0, len(words) - length)
    return " ".join(words[start : start + length])


def known_item_set(dataset: Path, out: Path, count: int = 150, seed: int = 13) -> Path:
    """A BEIR folder beside ``dataset``'s corpus: ``count`` literal 6–10-word spans, each
    judging the one document it was cut from."""
    target = out / f"{dataset.name}-known-item"
    if (target / "qrels" / "test.tsv").exists():
        return target
    records = [json.loads(line) for line in (dataset / "corpus.jsonl").open(encoding="utf-8")]
    rng = random.Random(f"{seed}-{dataset.name}")
    usable = [r for r in records if len(r.get("text", "").split()) >= 20]
    rows = []
    for record in rng.sample(usable, min(count, len(usable))):
        rows.append((f"k{record['_id']}", literal_span(record["text"], rng), record["_id"]))
    corpus = (dataset / "corpus.jsonl").read_text(encoding="utf-8")
    write_beir(target, corpus, {q: t for q, t, _ in rows}, [(q, d) for q, _, d in rows])
    return target


def heading_set(name: str, wanted: str, language: str, out: Path) -> Path:
    """A BEIR folder ``name``-headings of the heading corpus ``wanted`` in ``language``: every
    section a document, every heading a query judging the section filed under it."""
    target = out / f"{name}-headings"
    if (target / "qrels" / "test.tsv").exists():
        return target
    (corpus,) = [c for c in heading_corpora(language) if c.name == wanted]
    pairs = corpus.read(cache_dir() / "corpora")
    passages = {p.passage_id: p.passage for p in pairs}
    headings = {p.heading_id: p.heading for p in pairs}
    write_beir(
        target,
        "".join(json_line(i, t) for i, t in passages.items()),
        headings,
        [(p.heading_id, p.passage_id) for p in pairs],
    )
    return target
