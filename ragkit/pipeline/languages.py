"""Languages decided with the collection: which analyzers a query goes through.

A query's own evidence is a few words; the index knows which languages it holds for each
script (:meth:`ragkit.store.Store.languages`, characters of text per script and language).
A query is analyzed with the languages the index holds for the query's script — one when
the index holds one, all of them when the identifier cannot tell them apart on so little
text — and never with a language the index does not hold.

Example:
    >>> held = {("Latn", "en"): 90_000, ("Arab", "ar"): 40_000}
    >>> query_languages("zebra stripes", held), query_languages("الصلاة", held)
    (['en'], ['ar'])
    >>> query_languages("router prefix", {("Latn", "en"): 9, ("Latn", "fr"): 5})
    ['en', 'fr']
"""

from __future__ import annotations

from collections.abc import Mapping

from ragkit.normalize.detect import detect_language, detect_script

RELIABLE_LETTERS = 40
"""Letters from which the identifier's answer picks one of several held languages."""


def query_languages(query: str, held: Mapping[tuple[str, str], int]) -> list[str]:
    """Languages to analyze ``query`` with, given the ``(script, language)`` character counts
    the index holds (most first). An empty index routes by the query alone."""
    script = detect_script(query)
    known = {pair: chars for pair, chars in held.items() if pair[1] != "und"}
    same = [language for (s, language) in known if s == script]
    if len(same) > 1 and sum(c.isalpha() for c in query) >= RELIABLE_LETTERS:
        guess = detect_language(query, script)
        if guess in same:
            return [guess]
    if same:
        return same
    if known:
        return [next(iter(known))[1]]  # another script: the index's main language
    return [detect_language(query, script)]
