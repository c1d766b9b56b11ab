"""Benchmark: how ragkit's Amharic Ge'ez tables collapse real spelling variants.

Word list: the Amharic dictionary (word DAWG) shipped in Debian's ``tesseract-ocr-amh``. The
script downloads the package with ``apt-get download``, unpacks it with ``dpkg-deb -x`` and reads
the words with :func:`ragkit.corpora.formats.tesseract_words` (``combine_tessdata -u`` then
``dawg2wordlist``, both from Debian's ``tesseract-ocr``: ``apt-get install tesseract-ocr``), the
same extraction the Amharic tokenizer corpus uses.
Everything is cached under ``~/.cache/ragkit/bench/geez``.

Word forms are grouped by a *reference* key written independently of ragkit's tables: each
syllable is romanized from its Unicode name, the homophone consonants are merged
(h ḥ ḫ → h, s ś → s, ʔ ʕ → ʔ, ṣ ṡ → ṣ), ``ä`` after h/ʔ becomes ``a``, and labialized syllables
are equated with their spelled-out forms (Cʷa = Cəwa = Cuwa, Cʷä = Co, Cʷə = Cu). A group with
two or more spellings is a homophone-variant group; the study reports the share of those
groups each ragkit mode collapses to one key, and samples of what each rule merges.

Command (from the repository root)::

    .venv/bin/python -m experiments.normalize.geez.geez

Writes ``experiments/normalize/geez/geez.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import subprocess
import sys
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from ragkit.corpora.formats import tesseract_words
from ragkit.errors import RagkitError
from ragkit.normalize.geez import GEEZ_TABLE_VERSION, geez_table, homophone_key, syllable

PACKAGE = "tesseract-ocr-amh"
CACHE = Path.home() / ".cache" / "ragkit" / "bench" / "geez"
from benchmarks.common import write_result

HERE = Path(__file__).resolve().parent
RESULT = HERE / "geez.json"
SAMPLE = 12

# Reference romanization: Unicode consonant names → phoneme classes (homophones merged).
REFERENCE_CONSONANTS = {"H": "h", "HH": "h", "X": "h", "SZ": "s", "GLOTTAL": "ʔ"}
REFERENCE_CONSONANTS |= {"PHARYNGEAL": "ʔ", "TZ": "ts"}
VOWELS = (("AA", "a"), ("EE", "e"), ("A", "ä"), ("U", "u"), ("I", "i"), ("E", "ə"), ("O", "o"))


def wordlist(cache: Path) -> tuple[Path, dict[str, str]]:
    """The cached word list, building it on first use; also the provenance of the files."""
    cache.mkdir(parents=True, exist_ok=True)
    words = cache / "amh-words.txt"
    if not words.exists():
        for tool in ("apt-get", "dpkg-deb"):
            if shutil.which(tool) is None:
                raise RagkitError(
                    f"{tool} not found; on Debian run `apt-get install tesseract-ocr`"
                )
        if not list(cache.glob(f"{PACKAGE}_*.deb")):
            _run(["apt-get", "download", PACKAGE], cache)
        deb = max(cache.glob(f"{PACKAGE}_*.deb"))
        _run(["dpkg-deb", "-x", str(deb), "unpacked"], cache)
        traineddata = next((cache / "unpacked").rglob("amh.traineddata"))
        words.write_text("\n".join(tesseract_words(traineddata)) + "\n", encoding="utf-8")
    deb = max(cache.glob(f"{PACKAGE}_*.deb"))
    provenance = {"package": deb.name, "deb_sha256": _sha256(deb), "words_sha256": _sha256(words)}
    return words, provenance


def _run(command: list[str], cwd: Path) -> None:
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _reference_syllable(char: str) -> tuple[str, bool, str] | None:
    """``(consonant class, labialized, vowel)`` from the Unicode name, or None if not a syllable."""
    name = unicodedata.name(char, "")
    if not name.startswith("ETHIOPIC SYLLABLE ") or name.endswith(("OA", "GLOTTAL WA")):
        return None
    token = name.split()[-1]
    bare = token in ("A", "U", "I", "AA", "EE", "E", "O")  # GLOTTAL A, PHARYNGEAL U, ...
    consonant, vowel_code = (name.split()[-2], token) if bare else _split(token)
    labialized = consonant.endswith("W") and consonant != "W"
    consonant = consonant.removesuffix("W") if labialized else consonant
    vowel = dict(VOWELS)[vowel_code]
    if labialized and ord(char) % 8 == 7:  # eighth-cell forms are named "-WA" but read ʷa
        vowel = "a"
    return REFERENCE_CONSONANTS.get(consonant, consonant.lower()), labialized, vowel


def _split(token: str) -> tuple[str, str]:
    for code, _ in VOWELS:
        if token.endswith(code) and len(token) > len(code):
            return token[: -len(code)], code
    raise ValueError(token)


def reference_key(word: str, merge_kx: bool = False) -> str:
    """Phonemic key: homophones merged, labialized forms equated with their spelled-out forms."""
    units: list[tuple[str, bool, str] | str] = []
    for char in word:
        parsed = _reference_syllable(char)
        if parsed is None:
            units.append(char)
            continue
        consonant, labialized, vowel = parsed
        if merge_kx and consonant == "kx":
            consonant = "h"
        previous = units[-1] if units else None
        # Cəwa / Cuwa → Cʷa (also wi, we)
        spelled_out = consonant == "w" and not labialized and vowel in ("a", "i", "e")
        if (
            spelled_out
            and isinstance(previous, tuple)
            and previous[1:] in ((False, "ə"), (False, "u"))
        ):
            units[-1] = (previous[0], True, vowel)
            continue
        units.append((consonant, labialized, vowel))
    parts = []
    for unit in units:
        if isinstance(unit, str):
            parts.append(unit)
            continue
        consonant, labialized, vowel = unit
        if labialized and vowel in ("ä", "ə"):  # Cʷä = Co, Cʷə = Cu
            labialized, vowel = False, "o" if vowel == "ä" else "u"
        if consonant in ("h", "ʔ") and vowel == "ä":
            vowel = "a"
        parts.append(f"{consonant}{'ʷ' if labialized else ''}{vowel}.")
    return "".join(parts)


def clusters(words: Iterable[str], key: Callable[[str], str]) -> dict[str, set[str]]:
    grouped: dict[str, set[str]] = defaultdict(set)
    for word in words:
        grouped[key(word)].add(word)
    return grouped


def new_merges(
    words: list[str], baseline: Callable[[str], str], folded: Callable[[str], str]
) -> tuple[int, int, list[tuple[str, str]]]:
    """Keys of ``folded`` that join several ``baseline`` keys: count, word pairs, a sample."""
    joined = 0
    pairs = 0
    examples: list[tuple[str, str]] = []
    for members in clusters(words, folded).values():
        by_base = clusters(members, baseline)
        if len(by_base) < 2:
            continue
        joined += 1
        sizes = [len(group) for group in by_base.values()]
        pairs += (sum(sizes) ** 2 - sum(size * size for size in sizes)) // 2
        first, second = sorted(min(group) for group in by_base.values())[:2]
        examples.append((first, second))
    random.Random(0).shuffle(examples)
    return joined, pairs, examples[:SAMPLE]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--output", type=Path, default=RESULT)
    args = parser.parse_args()
    started = time.perf_counter()
    path, provenance = wordlist(args.cache)
    entries = [line for line in path.read_text(encoding="utf-8").splitlines() if line]
    words = sorted({w for w in entries if all(syllable(c) or c in "ሇቇኇኯዏዯጏፇኧ" for c in w)})

    groups = clusters(words, reference_key)
    variant_groups = [members for members in groups.values() if len(members) >= 2]
    modes: dict[str, dict[str, object]] = {}
    for mode in ("homophones", "homophones+labialized"):
        key = _key(mode)
        split = [sorted(m) for m in variant_groups if len({key(w) for w in m}) > 1]
        collapsed = len(variant_groups) - len(split)
        random.Random(0).shuffle(split)
        merged_pairs = total_pairs = 0
        for members in variant_groups:
            by_key = [len(g) for g in clusters(members, key).values()]
            total_pairs += len(members) * (len(members) - 1) // 2
            merged_pairs += sum(n * (n - 1) // 2 for n in by_key)
        over, _, over_sample = new_merges(words, reference_key, key)
        modes[mode] = {
            "distinct_keys": len(clusters(words, key)),
            "groups_collapsed": collapsed,
            "groups_collapsed_share": round(collapsed / len(variant_groups), 4),
            "variant_pairs_merged_share": round(merged_pairs / total_pairs, 4),
            "groups_not_collapsed_sample": split[:SAMPLE],
            "merges_outside_reference": over,
            "merges_outside_reference_sample": over_sample,
        }

    plain, labial = _key("homophones"), _key("homophones+labialized")
    no_a_fold = _without_a_fold()
    analyses = {
        "a_order_fold (ሃ→ሀ, ኣ→አ)": new_merges(words, no_a_fold, plain),
        "labialized spell-out": new_merges(words, plain, labial),
        "ኸ→ሀ (not in ragkit)": new_merges(
            words, reference_key, lambda w: reference_key(w, merge_kx=True)
        ),
    }
    result = {
        "study": "normalize/geez",
        "geez_table_version": GEEZ_TABLE_VERSION,
        "source": provenance | {"entries": len(entries)},
        "word_forms": len(words),
        "reference_keys": len(groups),
        "variant_groups": len(variant_groups),
        "word_forms_in_variant_groups": sum(len(members) for members in variant_groups),
        "modes": modes,
        "merge_analyses": {
            name: {"keys_joining_spellings": j, "word_pairs": p, "sample": s}
            for name, (j, p, s) in analyses.items()
        },
        "seconds": round(time.perf_counter() - started, 1),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_result(args.output.stem, result, args.output.parent)
    _report(result)


def _key(mode: str) -> Callable[[str], str]:
    return lambda word: homophone_key(word, "am", mode)


def _without_a_fold() -> Callable[[str], str]:
    """ragkit's ``am`` table with the a-order fold undone: every entry keeps its vowel order."""
    table = {}
    for char, out in geez_table("am").items():
        row, order = syllable(out)
        if syllable(char)[1] != order:
            out = chr(row + 3)
        if out != char:
            table[ord(char)] = out
    return lambda word: word.translate(table)


def _report(result: dict) -> None:
    console = Console(width=120)
    summary = Table(
        title=f"Ge'ez homophones on {result['source']['package']} (table v"
        f"{result['geez_table_version']})"
    )
    for column in ("mode", "distinct keys", "groups collapsed", "pairs merged", "outside ref."):
        summary.add_column(column, justify="right")
    summary.add_row("(word forms)", str(result["word_forms"]), "", "", "")
    for mode, figures in result["modes"].items():
        summary.add_row(
            mode,
            str(figures["distinct_keys"]),
            f"{figures['groups_collapsed']} / {result['variant_groups']}"
            f" ({figures['groups_collapsed_share']:.1%})",
            f"{figures['variant_pairs_merged_share']:.1%}",
            str(figures["merges_outside_reference"]),
        )
    console.print(summary)
    merges = Table(title="What each rule merges (sample)")
    for column in ("rule", "keys", "pairs", "sample"):
        merges.add_column(column)
    for name, figures in result["merge_analyses"].items():
        sample = ", ".join(f"{a}/{b}" for a, b in figures["sample"][:6])
        merges.add_row(
            name, str(figures["keys_joining_spellings"]), str(figures["word_pairs"]), sample
        )
    console.print(merges)
    console.print(
        f"{result['source']['entries']} list entries, {result['variant_groups']} "
        f"variant groups, {result['seconds']} s"
    )


if __name__ == "__main__":
    try:
        main()
    except RagkitError as error:
        sys.exit(f"error: {error}")
