"""The sparse index: BM25 (bm25s) over SentencePiece terms of each chunk's normalized text.

Terms (:func:`analyze`): the matching key's words, minus the language's stopwords (bm25s's
lists) and reduced to their Snowball stems (PyStemmer) where a stemmer exists for the
language; then, by the index's ``sparse_terms`` setting, either kept as words or cut into the
language's SentencePiece pieces. ``auto`` (the default) keeps stems where a stemmer exists
and uses pieces elsewhere (Amharic, Tigrinya, Urdu, Sorani…): measured on Cranfield and CISI,
pieces of stems lose 0.005–0.02 nDCG@10 against the stems themselves, while for languages
without a stemmer the pieces are what splits clitics and compounds a word index would miss.
With ``exact_terms`` each stem comes with the word as written, so an exact match counts
twice (by default in :data:`EXACT_TERM_LANGUAGES`).

SQLite holds every chunk's terms (``chunks.terms``, space-joined pieces); the BM25 matrix is a
derived structure rebuilt from them and saved as ``bm25-<G>/`` next to the FAISS file of the
same generation ``G``. Scores come from bm25s (Lucene BM25, k1 = 1.5, b = 0.75).

Example:
    >>> index = SparseIndex.build([(7, "▁boil ing ▁water"), (9, "▁cold ▁water")])
    >>> [chunk for chunk, _ in index.search(["▁boil", "ing"], k=2)]
    [7]
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

import bm25s
import numpy as np
import Stemmer
from bm25s import stopwords

from ragkit.errors import IndexDamagedError

log = logging.getLogger(__name__)
# bm25s logs "Building index from IDs" at DEBUG on every index build (each ingest and delete)
# into any application that configures logging; its warnings and errors still come through.
logging.getLogger("bm25s").setLevel(logging.WARNING)
_IDS_FILE = "chunk_ids.npy"
_WORD = re.compile(r"\w+")

# ISO 639-1 → Snowball algorithm (PyStemmer) and bm25s stopword list.
STEMMERS = {
    "en": "english", "ar": "arabic", "fa": "persian", "fr": "french", "de": "german",
    "es": "spanish", "it": "italian", "pt": "portuguese", "nl": "dutch", "ru": "russian",
    "tr": "turkish", "id": "indonesian", "hi": "hindi", "el": "greek", "sv": "swedish",
}  # fmt: skip
STOPWORDS = {
    "en": stopwords.STOPWORDS_EN, "fr": stopwords.STOPWORDS_FRENCH,
    "de": stopwords.STOPWORDS_GERMAN, "es": stopwords.STOPWORDS_SPANISH,
    "it": stopwords.STOPWORDS_ITALIAN, "pt": stopwords.STOPWORDS_PORTUGUESE,
    "nl": stopwords.STOPWORDS_DUTCH, "ru": stopwords.STOPWORDS_RUSSIAN,
    "tr": stopwords.STOPWORDS_TURKISH, "sv": stopwords.STOPWORDS_SWEDISH,
}  # fmt: skip
PieceEncoder = Callable[[str], list[str]]
EXACT = "="  # marks a word kept as written next to its stem; no word character, so no clash
# Languages whose stems come with their exact words by default (``exact_terms = "auto"``),
# chosen on the tuning collections (nDCG@10, stems → stems + words): Arabic's stemmer strips
# clitics and affixes, and words help there (Bukhari / Muslim hadiths re-typed by users 0.873 →
# 0.908 / 0.791 → 0.811, chapter headings 0.113 → 0.127 / 0.192 → 0.214); Snowball's English
# stems lose a little with them (Cranfield 0.358 → 0.357, CISI 0.385 → 0.382).
EXACT_TERM_LANGUAGES = frozenset({"ar"})


@functools.cache
def _stemmer(language: str) -> Stemmer.Stemmer | None:
    algorithm = STEMMERS.get(language)
    return Stemmer.Stemmer(algorithm) if algorithm else None


@functools.cache
def _stopwords(language: str) -> frozenset[str]:
    return frozenset(STOPWORDS.get(language, ()))


def has_stemmer(language: str) -> bool:
    return language in STEMMERS


def uses_pieces(language: str, sparse_terms: str) -> bool:
    """Whether ``language``'s sparse terms are tokenizer pieces under the ``sparse_terms``
    setting (``auto``: where no stemmer exists).

    Example:
        >>> uses_pieces("ur", "auto"), uses_pieces("en", "auto"), uses_pieces("en", "pieces")
        (True, False, True)
    """
    return sparse_terms == "pieces" or (sparse_terms == "auto" and not has_stemmer(language))


def analyze(
    key: str, language: str, pieces: PieceEncoder | None = None, exact: bool = False
) -> list[str]:
    """Sparse terms of a matching key: words → stopwords out → stems → pieces.

    ``pieces`` encodes text into SentencePiece pieces (the language's tokenizer); without it
    the stems themselves are the terms. ``exact`` adds each word as written, marked
    :data:`EXACT` (where the terms are stems), so a query word matched exactly scores above one
    that only shares its stem.

    Example:
        >>> analyze("The wings of the aircraft", "en")
        ['wing', 'aircraft']
        >>> analyze("The wings", "en", exact=True)
        ['wing', '=wings']
    """
    stop = _stopwords(language)
    words = [word for word in _WORD.findall(key.lower()) if word not in stop]
    stemmer = _stemmer(language)
    if stemmer is None:
        terms = words
    else:
        terms = [
            term
            for word, stem in zip(words, stemmer.stemWords(words), strict=True)
            for term in ((stem, EXACT + word) if exact and pieces is None else (stem,))
        ]
    if pieces is None:
        return terms
    return [piece for piece in pieces(" ".join(terms)) if piece != "▁"]


class SparseIndex:
    """BM25 over chunk terms; positions in the bm25s matrix map to chunk ids."""

    def __init__(self, retriever: bm25s.BM25 | None, chunk_ids: np.ndarray) -> None:
        self.retriever = retriever
        self.chunk_ids = chunk_ids.astype(np.int64)

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @classmethod
    def build(cls, rows: Iterable[tuple[int, str]]) -> SparseIndex:
        """Index ``(chunk id, space-joined terms)`` rows, read one at a time: each chunk's terms
        become an array of vocabulary ids (4 bytes a term, where a list of strings costs ~60),
        so building BM25 over an index's every chunk takes a fraction of the memory.

        Example:
            >>> index = SparseIndex.build([(7, "water boil"), (9, "ice melt water")])
            >>> [chunk_id for chunk_id, _ in index.search(["melt"], 2)]
            [9]
        """
        ids: list[int] = []
        vocabulary: dict[str, int] = {}
        corpus: list[np.ndarray] = []
        for chunk_id, terms in rows:
            ids.append(chunk_id)
            numbered = (vocabulary.setdefault(term, len(vocabulary)) for term in terms.split())
            corpus.append(np.fromiter(numbered, dtype=np.int32))
        if not ids:
            return cls(None, np.zeros(0, dtype=np.int64))
        retriever = bm25s.BM25()
        retriever.index((corpus, vocabulary), show_progress=False)
        return cls(retriever, np.asarray(ids, dtype=np.int64))

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / _IDS_FILE, self.chunk_ids, allow_pickle=False)
        if self.retriever is not None:
            self.retriever.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path) -> SparseIndex:
        """Load a saved index (memory-mapped); a damaged folder is a :class:`RagkitError`."""
        try:
            ids = np.load(folder / _IDS_FILE, allow_pickle=False)
            if not len(ids):
                return cls(None, ids)
            retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
            if retriever.scores.get("num_docs") != len(ids):
                raise ValueError(f"params.index.json does not count the {len(ids)} chunks")
        except (OSError, ValueError, TypeError, KeyError) as error:  # missing, cut, garbled
            raise IndexDamagedError(
                f"{folder}: BM25 index unreadable ({type(error).__name__}: {error}); "
                f"`ragkit doctor --repair --index {folder.parent}` rebuilds it"
            ) from error
        return cls(retriever, ids)

    def idf(self, terms: list[str]) -> list[float]:
        """The IDF bm25s weighs each of ``terms`` with (Lucene: ``ln(1 + (N - df + 0.5) /
        (df + 0.5))``, df the chunks holding the term); a term no chunk holds gets the
        largest, that of df 0.

        Example:
            >>> index = SparseIndex.build([(7, "water boil"), (9, "ice water")])
            >>> [round(w, 3) for w in index.idf(["water", "ice", "zzz"])]
            [0.182, 0.693, 1.792]
        """
        chunks = len(self.chunk_ids)
        if self.retriever is None:
            return [math.log(1.0 + (chunks + 0.5) / 0.5)] * len(terms)
        vocabulary, bounds = self.retriever.vocab_dict, self.retriever.scores["indptr"]
        found = [vocabulary.get(term) for term in terms]
        df = [0 if at is None else int(bounds[at + 1] - bounds[at]) for at in found]
        return [math.log(1.0 + (chunks - d + 0.5) / (d + 0.5)) for d in df]

    def search(
        self,
        terms: list[str],
        k: int,
        allowed: np.ndarray | None = None,
        include: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        """Best ``k`` (chunk id, BM25 score) pairs with a positive score, best first.

        ``allowed``: chunk ids a metadata filter kept (others are never returned).
        ``include``: chunk ids scored as well, even at 0 (another list's candidates, so that
        fusion compares real scores), ranked among the rest by their score.
        """
        if self.retriever is None or not terms:
            return []
        scores = self.retriever.get_scores(terms)
        if allowed is not None:
            scores = np.where(np.isin(self.chunk_ids, allowed), scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > k:
            candidates = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
        if include:
            extra = np.isin(self.chunk_ids, np.fromiter(include, dtype=np.int64))
            if allowed is not None:
                extra &= np.isin(self.chunk_ids, allowed)
            candidates = np.union1d(candidates, np.flatnonzero(extra))
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        return [(int(self.chunk_ids[i]), float(scores[i])) for i in order]
