"""The multilingual fallback tokenizer (``mul``) per language, on text it was never trained on.

``mul`` cuts the text of every language without a model of its own: it sets their chunk
budgets and, where no stemmer exists, their sparse terms. Its corpus is split as the build
splits it (:mod:`ragkit.tokenize.build`): training / held-out by document hash, the held-out
documents halved into a tuning half (which chose the vocabulary size) and a **report** half,
measured here per language the documents were read for. Each text is normalized as the
language it is written in, as in use.

Figures per language and tokenizer:

* **fertility**: tokens / whitespace words (meaningless for Chinese, Japanese and Thai, which
  write no spaces between words); ``LANG words`` rows measure the held-out documents of a
  Tesseract word list (a word a line: word types never trained on);
* **chars/token**: non-space characters per token;
* **UNK**: unknown-token share of all tokens (SentencePiece makes one unknown piece of a whole
  run of unknown characters, so a Chinese sentence can count as one token);
* **÷ XLM-R**: tokens per token of XLM-R (multilingual-e5-small, the default embedder, whose
  window the chunk budgets protect): near 1, a budget in ragkit tokens is a budget in the
  embedder's; far below 1, chunks overflow the embedder's window and lose their end.

Tokenizers: the shipped ``tokenizers/mul.model``, ``--before PATH`` (an older model file, e.g.
``git show HEAD~1:tokenizers/mul.model > /tmp/mul-old.model``) and XLM-R.

Run::

    HF_HUB_OFFLINE=1 .venv/bin/python -m experiments.tokenizers.fallback.fallback --before /tmp/mul-old.model

Writes ``experiments/tokenizers/fallback/fallback.json`` and prints a table.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import write_result
from ragkit.corpora import CorpusDocument
from ragkit.tokenize import MULTILINGUAL, tokenizers_dir
from ragkit.tokenize.build import (
    corpus_texts,
    genre_of,
    held_out_parts,
    model_counter,
    packaged_source,
    running_text,
)
from ragkit.tokenize.figures import TokenCounter, measure, peer_counters

RESULT = Path(__file__).resolve().parent / "fallback.json"
XLMR = "XLM-R (multilingual-e5-small)"


def language_of(document: CorpusDocument) -> str:
    """The language whose corpus ``document`` was read for (``other`` if none)."""
    found = packaged_source(document)
    return found[0] if found else "other"


def report_by_language() -> dict[str, list[str]]:
    """Texts of the ``mul`` report half, grouped by :func:`language_of`, and the held-out word
    lists (Amharic, Pashto, Sindhi, Uyghur), one word a line, as ``"LANG words"``: words the
    model never saw, and nothing was chosen on them (the tuning half is running text only)."""
    _, held = corpus_texts(MULTILINGUAL)
    _, report = held_out_parts(running_text(held))
    texts: dict[str, list[str]] = defaultdict(list)
    for document in report:
        texts[language_of(document)].append(document.text)
    for document in held:
        if genre_of(document) == "wordlist":
            texts[f"{language_of(document)} words"].append(document.text)
    return dict(sorted(texts.items()))


def counters(before: Path | None) -> dict[str, TokenCounter]:
    shipped = (tokenizers_dir() / f"{MULTILINGUAL}.model").read_bytes()
    found = {"mul": model_counter(shipped, MULTILINGUAL)}
    if before:
        found["mul before"] = model_counter(before.read_bytes(), MULTILINGUAL)
    found[XLMR] = peer_counters()[XLMR]
    return found


def measure_languages(before: Path | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    found = counters(before)
    for language, texts in report_by_language().items():
        figures = {name: measure(name, texts, counter) for name, counter in found.items()}
        for figure in figures.values():
            rows.append(
                {
                    "language": language,
                    "documents": len(texts),
                    **figure.as_dict(),
                    "per_xlmr_token": round(figure.tokens / figures[XLMR].tokens, 4),
                }
            )
    return rows


# (header, row key, format) of each table column.
COLUMNS = (
    ("lang", "language", "{}"),
    ("tokenizer", "tokenizer", "{}"),
    ("docs", "documents", "{}"),
    ("words", "words", "{}"),
    ("fertility", "fertility", "{:.3f}"),
    ("chars/token", "chars_per_token", "{:.2f}"),
    ("UNK rate", "unk_rate", "{:.4f}"),
    ("÷ XLM-R", "per_xlmr_token", "{:.2f}"),
)


def print_table(rows: list[dict[str, Any]]) -> None:
    table = Table(title="Fallback tokenizer per language (report half: never trained or tuned on)")
    for header, _, _ in COLUMNS:
        table.add_column(header)
    for row in rows:
        table.add_row(*(form.format(row[key]) for _, key, form in COLUMNS))
    Console(width=140).print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="an older mul.model to measure alongside")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    rows = measure_languages(args.before)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_result(args.out.stem, {"rows": rows}, args.out.parent, indent=1)
    print_table(rows)


if __name__ == "__main__":
    main()
