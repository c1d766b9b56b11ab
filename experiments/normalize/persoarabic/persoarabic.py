"""Perso-Arabic orthography: learned corrector vs script table vs leaving words as they are.

Run (fetches klpt 0.1.7 and hazm 0.10.0 wheels from PyPI once, into ~/.cache/ragkit/bench):

    .venv/bin/python -m experiments.normalize.persoarabic.persoarabic

Evaluation sets are real (observed → correct) word pairs found in the packages; the corrector
never sees them: their observed forms are removed from its lexicon and its channel is trained
on synthetic keyboard noise only.

* ckb / klpt-tests: the Sorani word pairs in klpt's own normalizer and standardizer test cases
  (``data/test_cases.json``), aligned token by token.
* ckb / klpt-dict-variants: spellings in klpt's Hunspell dictionary that are one
  Persian-keyboard fallback (``ە→ه ڕ→ر ڵ→ل ۆ→و ێ→ی``, or medial ``ه→ھ``) away from a curated
  lexicon word, labelled with the curated form. Some pairs are two real words (``ژیر`` wise /
  ``ژێر`` under), so the ceiling is below 1.
* fa / hazm-arabic-letters: hazm words spelled with Arabic ``ي ك ى`` (count 0) whose Persian
  spelling is a counted word.
* fa / hazm-teh-marbuta: hazm words with ``ة`` (count 0) whose ``ه`` or ``ت`` spelling is a
  counted word; the label is the more frequent of the two.
* clean: correctly spelled words (curated Sorani entries; Persian words counted ≥ 1,000) that
  must come out unchanged — the over-correction check. Only words the rule-based pipeline
  leaves as they are (no diacritics), so the column measures the corrector alone.
* ur / kaeshur-<translator>: word types the Urdu table changes in one of three Urdu Quran
  translations in ``kaeshur-quran`` 1.0.0 (MIT), e.g. ``گناه`` with Arabic heh; "correct"
  when the other two translations spell the word the table's way (``گناہ``). No corrector
  (no Urdu word list with counts ships in a package).
* synthetic: lexicon words drawn by frequency (as in running text) and corrupted with the
  training noise (a fresh seed).

Columns: ``as-is`` (no change), ``table`` (:class:`PersoArabicScript` alone), ``pipeline``
(ragkit's whole rule-based normalizer for the language: hygiene, table, tatweel, marks) and
``corrector`` (the pipeline, then the learned corrector).

Writes experiments/normalize/persoarabic/persoarabic.json (``rows``) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.common import write_result
from ragkit.normalize import normalizer_for
from ragkit.normalize.lexicons import (
    PACKAGES,
    PackageSource,
    package_dir,
    persian_words,
    sorani_variant_pairs,
    sorani_words,
)
from ragkit.normalize.orthography import KEYBOARD_NOISE, OrthographyCorrector, corrupt
from ragkit.normalize.perso_arabic import PersoArabicScript, perso_arabic_table
from ragkit.paths import cache_dir

HERE = Path(__file__).resolve().parent
CLEAN_SAMPLE = 2000
SYNTHETIC_SAMPLE = 2000

Pairs = list[tuple[str, str]]


def klpt_test_pairs(root: Path) -> Pairs:
    """Word pairs from klpt's Sorani (Arabic script) normalizer/standardizer test sentences."""
    cases = json.loads((root / "data" / "test_cases.json").read_text(encoding="utf-8"))
    found: dict[str, dict[str, str]] = {}
    for task in ("normalizer", "standardizer"):
        found[task] = {}
        for observed, expected in cases[task]["Sorani"]["Arabic"].items():
            left, right = observed.split(), expected.split()
            if len(left) != len(right):
                continue
            for a, b in zip(left, right, strict=True):
                # HTML entities (&zwnj;) are the loader's business, digits the table's.
                if a != b and "&" not in a and not any(char.isdigit() for char in a + b):
                    found[task][a] = b
    # A normalizer target may still need standardizing (رەزبەر → ڕەزبەر): label = both.
    standard = found["standardizer"]
    pairs = {a: standard.get(b, b) for a, b in found["normalizer"].items()} | standard
    return sorted(pairs.items())


def sorani_sets(root: Path, rng: random.Random) -> tuple[dict[str, int], dict[str, Pairs]]:
    words, curated = sorani_words(root)
    variants = sorted(sorani_variant_pairs(words, curated).items())
    tests = klpt_test_pairs(root)
    held_out = {observed for observed, _ in variants + tests}
    lexicon = {word: count for word, count in words.items() if word not in held_out}
    pipeline = normalizer_for("ckb")
    clean = rng.sample(sorted(w for w in curated - held_out if pipeline(w).text == w), CLEAN_SAMPLE)
    return lexicon, {
        "klpt-tests": tests,
        "klpt-dict-variants": variants,
        "clean": [(word, word) for word in clean],
    }


def persian_sets(root: Path, rng: random.Random) -> tuple[dict[str, int], dict[str, Pairs]]:
    words = persian_words(root)
    table = perso_arabic_table("fa")
    letters: Pairs = []
    marbuta: Pairs = []
    for word, count in words.items():
        if count:
            continue
        fixed = "".join(table.get(char, char) for char in word)
        if fixed != word and words.get(fixed, 0) > 0 and "ة" not in fixed:
            letters.append((word, fixed))
        if "ة" in word and fixed == word:
            options = [word.replace("ة", r) for r in "هت"]
            best = max(options, key=lambda option: words.get(option, 0))
            if words.get(best, 0) > 0:
                marbuta.append((word, best))
    held_out = {observed for observed, _ in letters + marbuta}
    lexicon = {word: count for word, count in words.items() if word not in held_out}
    pipeline = normalizer_for("fa")
    common = sorted(w for w, c in lexicon.items() if c >= 1000 and pipeline(w).text == w)
    clean = rng.sample(common, CLEAN_SAMPLE)
    return lexicon, {
        "hazm-arabic-letters": sorted(letters),
        "hazm-teh-marbuta": sorted(marbuta),
        "clean": [(word, word) for word in clean],
    }


def synthetic(lexicon: dict[str, int], language: str, rng: random.Random) -> Pairs:
    script = PersoArabicScript(language)
    words = sorted(w for w in lexicon if script.apply(w).text == w)
    weights = [lexicon[w] + 1 for w in words]
    pairs: Pairs = []
    for word in rng.choices(words, weights, k=SYNTHETIC_SAMPLE * 10):
        noisy = corrupt(word, KEYBOARD_NOISE[language], rng)
        if noisy != word:
            pairs.append((noisy, word))
        if len(pairs) == SYNTHETIC_SAMPLE:
            break
    return pairs


URDU = PackageSource("kaeshur-quran", "1.0.0", "MIT")
URDU_TRANSLATIONS = ("234", "54", "97")  # Jalandhari, Junagarhi, Maududi


def urdu_rows(root: Path) -> list[dict[str, object]]:
    """Urdu: word types the ``ur`` table changes in one translation, checked against the others.

    No word list with counts exists for Urdu in a package, so there is no corrector; instead
    each changed type counts as fixed when the other two translations spell it the table's
    way (and as already right, for ``as-is``, when they spell it the original way).
    """
    step = PersoArabicScript("ur")
    types: dict[str, set[str]] = {}
    for translator in URDU_TRANSLATIONS:
        words: set[str] = set()
        for path in sorted((root / "translations" / translator).glob("*.json")):
            for verse in json.loads(path.read_text(encoding="utf-8")):
                words.update(re.findall(r"[^\W\d_]+", verse["translation"]))
        types[translator] = words
    rows: list[dict[str, object]] = []
    for translator, words in types.items():
        others = set().union(*(types[o] for o in types if o != translator))
        changed = sorted(w for w in words if step.apply(w).text != w)
        if not changed:
            continue
        fixed = [w for w in changed if step.apply(w).text in others]
        rows.append(
            {
                "language": "ur",
                "set": f"kaeshur-{translator}",
                "pairs": len(changed),
                "as-is": round(sum(w in others for w in changed) / len(changed), 4),
                "table": round(len(fixed) / len(changed), 4),
                "examples": [[w, step.apply(w).text] for w in fixed[:5]],
            }
        )
    return rows


def accuracy(pairs: Pairs, method: Callable[[str], str]) -> float:
    return sum(method(observed) == expected for observed, expected in pairs) / max(len(pairs), 1)


def main() -> None:
    argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0]).parse_args()
    console = Console(width=120)
    bench = cache_dir() / "bench"
    rng = random.Random(20261202)
    rows: list[dict[str, object]] = []
    for language, build in (("ckb", sorani_sets), ("fa", persian_sets)):
        root = package_dir(PACKAGES[language], cache=bench / "packages")
        lexicon, sets = build(root, rng)
        start = time.perf_counter()
        corrector = OrthographyCorrector.train(lexicon, KEYBOARD_NOISE[language], language=language)
        train_s = time.perf_counter() - start
        model = corrector.save(bench / f"orthography-{language}.json.gz")
        sets["synthetic"] = synthetic(corrector.lexicon, language, rng)
        script = PersoArabicScript(language)
        pipeline = normalizer_for(language)
        methods: dict[str, Callable[[str], str]] = {
            "as-is": lambda word: word,
            "table": lambda word, script=script: script.apply(word).text,
            "pipeline": lambda word, pipeline=pipeline: pipeline(word).text,
            "corrector": lambda word, pipeline=pipeline, corrector=corrector: (
                corrector.correct_word(pipeline(word).text)
            ),
        }
        for name, pairs in sets.items():
            row: dict[str, object] = {"language": language, "set": name, "pairs": len(pairs)}
            for method, function in methods.items():
                start = time.perf_counter()
                row[method] = round(accuracy(pairs, function), 4)
                if method == "corrector" and pairs:
                    row["corrector_words_per_s"] = round(len(pairs) / (time.perf_counter() - start))
            row["examples"] = [
                [o, e, corrector.correct_word(o)] for o, e in pairs[:: max(len(pairs) // 5, 1)][:5]
            ]
            rows.append(row)
        rows.append(
            {
                "language": language,
                "set": "model",
                "lexicon_words": len(corrector.lexicon),
                "train_seconds": round(train_s, 2),
                "model_bytes_gz": model.stat().st_size,
                "channel": corrector.channel,
                "source": f"{PACKAGES[language].name}=={PACKAGES[language].version}"
                f" ({PACKAGES[language].licence})",
            }
        )
    rows += urdu_rows(package_dir(URDU, cache=bench / "packages"))
    written = write_result("persoarabic", {"rows": rows}, HERE, indent=1)
    table = Table(title="Perso-Arabic orthography: word accuracy")
    for column in (
        "language",
        "set",
        "pairs",
        "as-is",
        "table",
        "pipeline",
        "corrector",
        "words/s",
    ):
        table.add_column(column, justify="left" if column in ("language", "set") else "right")
    for row in rows:
        if row["set"] == "model":
            continue
        table.add_row(
            str(row["language"]),
            str(row["set"]),
            str(row["pairs"]),
            *(
                f"{row[m]:.3f}" if m in row else "–"
                for m in ("as-is", "table", "pipeline", "corrector")
            ),
            str(row.get("corrector_words_per_s", "")),
        )
    console.print(table)
    for row in rows:
        if row["set"] == "model":
            console.print(
                f"{row['language']}: {row['lexicon_words']} lexicon words from {row['source']},"
                f" trained in {row['train_seconds']} s, model {row['model_bytes_gz']} bytes gz"
            )
    console.print(f"wrote {written}")


if __name__ == "__main__":
    main()
