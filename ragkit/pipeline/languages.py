"""Languages decided with the collection: a document's when its own text says too little,
and which analyzers a query goes through.

A title of four words cannot tell English from Italian; the collection it belongs to can.
:func:`resolve_documents` gives each document whose own evidence is weak the dominant language
of its script in the collection (what the index holds plus the documents being ingested,
:func:`collection_profile`), recording method ``profile``.

A query's own evidence is a few words; the index knows which languages it holds for each
script (:meth:`ragkit.store.FolderStore.languages`, characters of text per script and language).
A query is analyzed with the languages the index holds for the query's script — one when
the index holds one, all of them when the identifier cannot tell them apart on so little
text (:func:`ragkit.normalize.detect.identify` restricted to them) — and never with a
language the index does not hold.

Example:
    >>> held = {("Latn", "en"): 90_000, ("Arab", "ar"): 40_000}
    >>> query_languages("zebra stripes", held), query_languages("الصلاة", held)
    (['en'], ['ar'])
    >>> query_languages("router prefix", {("Latn", "en"): 9, ("Latn", "fr"): 5})
    ['en', 'fr']
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from ragkit.documents import Document
from ragkit.normalize.detect import (
    SCRIPT_LANGUAGES,
    detect_script,
    identify,
    script_candidates,
)
from ragkit.normalize.profile import MIN_CONFIDENCE, LanguageProfile, resolve_language


def query_languages(query: str, held: Mapping[tuple[str, str], int]) -> list[str]:
    """Languages to analyze ``query`` with, given the ``(script, language)`` character counts
    the index holds (most first). An empty index routes by the query alone."""
    script = detect_script(query)
    known = {pair: chars for pair, chars in held.items() if pair[1] != "und"}
    same = [language for (s, language) in known if s == script]
    if len(same) > 1:
        guess = identify(query, allowed=same)
        if guess.method in ("letters", "words", "statistical") and guess.confidence >= (
            MIN_CONFIDENCE
        ):
            return [guess.language]
    if same:
        return same
    if known:
        return [next(iter(known))[1]]  # another script: the index's main language
    return [identify(query).language]


@functools.cache
def language_script(language: str) -> str:
    """The script ``language`` is written in (ISO 15924), ``""`` when ragkit does not know.

    Example:
        >>> language_script("ur"), language_script("ckb"), language_script("am")
        ('Arab', 'Arab', 'Ethi')
    """
    return next((s for s in SCRIPT_LANGUAGES if language in script_candidates(s)), "")


def collection_profile(
    held: Mapping[tuple[str, str], int], documents: Sequence[Document]
) -> LanguageProfile:
    """The languages of the index (characters per ``(script, language)`` it holds) and of
    ``documents`` (their letters, weighted by each decision's confidence).

    Example:
        >>> doc = Document("t", "t", "Bisection Routine (Algorithm 4)", "h", [])
        >>> collection_profile({("Latn", "en"): 5_000}, [doc]).dominant("Latn")
        'en'
    """
    profile = LanguageProfile()
    for (script, language), chars in held.items():
        if language != "und":
            profile.weights.setdefault(script, {})[language] = float(chars)
    for document in documents:
        profile.add(document.text, document.language_guess)
    return profile


def resolve_documents(documents: Sequence[Document], profile: LanguageProfile) -> int:
    """Give each document with weak evidence of its own the collection's language for its
    script (:func:`ragkit.normalize.profile.resolve_language`); returns how many changed.

    Example:
        >>> docs = [Document(str(i), "c", f"Routine {i} (Algorithm {i})", "h", []) for i in range(3)]
        >>> profile = collection_profile({("Latn", "fr"): 9_000}, docs)
        >>> resolve_documents(docs, profile), docs[0].language, docs[0].language_method
        (3, 'fr', 'profile')
    """
    changed = 0
    for document in documents:
        decided = resolve_language(document.text, profile, guess=document.language_guess)
        changed += decided.language != document.language
        document.decide_language(decided)
    return changed
