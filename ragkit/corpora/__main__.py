"""``python -m ragkit.corpora [LANG ...]``: build the corpora and print their size per source."""

from __future__ import annotations

import argparse
import logging
import time
from collections import defaultdict

from rich.console import Console
from rich.table import Table

from ragkit.corpora.base import CorpusDocument, corpus_stats
from ragkit.corpora.sources import SOURCES, load_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("languages", nargs="*", default=sorted(SOURCES))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    table = Table(title="ragkit corpora")
    for column in ("language", "source", "licence", "documents", "MB", "words", "seconds"):
        table.add_column(column)
    for language in args.languages:
        start = time.perf_counter()
        docs = load_corpus(language)
        seconds = time.perf_counter() - start
        by_source: dict[str, list[CorpusDocument]] = defaultdict(list)
        for doc in docs:
            by_source[doc.source.split("==", 1)[0]].append(doc)
        pins = {s.name: s for s in SOURCES[language]}
        rows = [*by_source.items(), ("all", docs)]
        for name, group in rows:
            stats = corpus_stats(group)
            source = pins.get(name)
            table.add_row(
                language,
                source.pin if source else name,
                source.licence if source else "",
                str(stats["documents"]),
                f"{stats['bytes'] / 1e6:.1f}",
                str(stats["words"]),
                f"{seconds:.0f}" if source is None else "",
            )
    Console().print(table)


if __name__ == "__main__":
    main()
