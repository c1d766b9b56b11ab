"""Tokenizer fertility per domain on text no setting was chosen on, and unknown pieces.

For each Arabic-script language the corpus of :mod:`ragkit.corpora` is split as the build
splits it (:mod:`ragkit.tokenize.build`: training / held-out by document hash, the held-out
documents halved into a tuning half, on which the vocabulary size and genre weights were
chosen, and a **report** half). On the report half, per genre of source (``prose``: hadith for
Arabic, Quran translations and commentary for Persian/Urdu; ``ui``: Firefox/LibreOffice strings;
``docs``: the Debian Administrator's Handbook; ``poetry``: Hafez; ``web``: wordfreq's web, news,
Wikipedia and subtitle word frequencies, as held-out word types repeated by frequency, so a
model trained on the other types is measured on words it never saw), it measures:

* **fertility**: tokens / whitespace words of the raw text (markup, paths, Latin words
  included);
* **script words**: tokens / word over the words written in Arabic script only (each encoded
  alone);
* **UNK**: unknown-token share of all tokens;
* **script UNK**: letters and punctuation of the script (``؟ ، ؛ ۔ ی ۃ ھ ہ ک``…, the build's
  ``REQUIRED_CHARS``) that add an unknown piece when written alone, after a title, inside a
  2-word query or in a sentence.

Tokenizers: the shipped ``tokenizers/<lang>.model``, any ``--model LANG:NAME=PATH`` (an older
model file, e.g. ``git show HEAD~1:tokenizers/ar.model > /tmp/ar-old.model``) and XLM-R
(multilingual-e5-small's tokenizer, ragkit's converted copy; ``--no-peers`` leaves it out).

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python -m experiments.tokenizers.domains.domains \\
        --model ar:before=/tmp/ar-old.model --model fa:before=/tmp/fa-old.model

Writes ``experiments/tokenizers/domains/domains.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import write_result
from ragkit.tokenize import load, tokenizers_dir
from ragkit.tokenize.build import (
    REQUIRED_CHARS,
    by_genre,
    corpus_texts,
    held_out_parts,
    running_text,
)
from ragkit.tokenize.figures import (
    TokenCounter,
    measure,
    peer_counters,
    sentencepiece_counter,
)

RESULT = Path(__file__).resolve().parent / "domains.json"
LANGUAGES = ("ar", "fa", "ur")
XLMR = "XLM-R (multilingual-e5-small)"
_SCRIPT_WORD = re.compile(r"^[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff]+$")
# Short texts each required character is tried in: alone, in a title, a query, a sentence.
_CONTEXTS = ("{c}", "دليل المستخدم{c}", "كلمة {c}سر", "هل تريد حفظ التغييرات{c} نعم")


def script_word_fertility(texts: list[str], counter: TokenCounter) -> tuple[float, int]:
    """Tokens per word over the words written in Arabic script only, and how many words."""
    words = [word for text in texts for word in text.split() if _SCRIPT_WORD.match(word)]
    tokens = sum(counter(word)[0] for word in words)
    return (tokens / len(words) if words else 0.0), len(words)


def unknown_characters(language: str, counter: TokenCounter) -> list[str]:
    """Required characters that add an unknown piece to any of the short texts."""
    return [
        char
        for char in REQUIRED_CHARS[language]
        if any(
            counter(context.format(c=char))[1] > counter(context.format(c=""))[1]
            for context in _CONTEXTS
        )
    ]


def counters(language: str, extra: dict[str, Path], peers: bool) -> dict[str, TokenCounter]:
    shipped = tokenizers_dir() / f"{language}.model"
    found: dict[str, TokenCounter] = {"shipped": sentencepiece_counter(load(shipped, language))}
    for name, path in extra.items():
        found[name] = sentencepiece_counter(load(path, language))
    if peers:
        found[XLMR] = peer_counters()[XLMR]
    return found


def measure_language(language: str, extra: dict[str, Path], peers: bool) -> list[dict[str, Any]]:
    _, held = corpus_texts(language)
    _, report = held_out_parts(running_text(held))
    genres = by_genre(report)
    genres["all"] = [d.text for d in report]
    rows: list[dict[str, Any]] = []
    for name, counter in counters(language, extra, peers).items():
        missing = unknown_characters(language, counter)
        for genre, texts in genres.items():
            figures = measure(name, texts, counter)
            script_fertility, script_words = script_word_fertility(texts, counter)
            rows.append(
                {
                    "language": language,
                    "genre": genre,
                    "documents": len(texts),
                    **figures.as_dict(),
                    "script_words": script_words,
                    "script_word_fertility": round(script_fertility, 4),
                    "unknown_script_chars": "".join(missing),
                }
            )
    return rows


def parse_models(values: list[str]) -> dict[str, dict[str, Path]]:
    """``LANG:NAME=PATH`` options → {language: {name: path}}."""
    models: dict[str, dict[str, Path]] = {}
    for value in values:
        language, _, rest = value.partition(":")
        name, _, path = rest.partition("=")
        if not (language and name and path):
            raise SystemExit(f"--model {value!r}: expected LANG:NAME=PATH")
        models.setdefault(language, {})[name] = Path(path)
    return models


def print_table(rows: list[dict[str, Any]], console: Callable[[Table], None]) -> None:
    table = Table(title="Tokenizer fertility per genre (report half: never trained or tuned on)")
    for column in ("lang", "genre", "tokenizer", "docs", "words", "fertility", "script words",
                   "UNK rate", "script UNK"):  # fmt: skip
        table.add_column(column)
    for row in rows:
        table.add_row(
            row["language"],
            row["genre"],
            row["tokenizer"],
            str(row["documents"]),
            str(row["words"]),
            f"{row['fertility']:.3f}",
            f"{row['script_word_fertility']:.3f}",
            f"{row['unk_rate']:.4f}",
            row["unknown_script_chars"] or "0",
        )
    console(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", action="append", choices=LANGUAGES)
    parser.add_argument("--model", action="append", default=[], help="LANG:NAME=PATH")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    extra = parse_models(args.model)
    rows: list[dict[str, Any]] = []
    for language in args.lang or LANGUAGES:
        rows += measure_language(language, extra.get(language, {}), not args.no_peers)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_result(args.out.stem, {"rows": rows}, args.out.parent, indent=1)
    print_table(rows, Console(width=140).print)


if __name__ == "__main__":
    main()
