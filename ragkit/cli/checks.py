"""Checks of command-line values that are not settings: language codes and query text.

Example:
    >>> check_language("ar")
    >>> check_language("xx")
    Traceback (most recent call last):
    ...
    ragkit.errors.RagkitError: --lang 'xx': not a language ragkit knows; use an ISO 639 code such as en, ar, fa, ur, ckb, am, ti
"""

from __future__ import annotations

import functools

from ragkit.errors import RagkitError
from ragkit.normalize.detect import SCRIPT_LANGUAGES

# Languages ragkit treats on their own besides what py3langid identifies.
_OWN_LANGUAGES = frozenset({"ar", "fa", "ur", "ckb", "am", "ti", "en"})


@functools.cache
def known_languages() -> frozenset[str]:
    """ISO 639 codes ragkit can analyze: its own languages, every script's candidates and
    every language py3langid identifies."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identified = LanguageIdentifier.from_model_file(MODEL_FILE).nb_classes
    candidates = {code for codes in SCRIPT_LANGUAGES.values() for code in codes}
    return _OWN_LANGUAGES | candidates | frozenset(identified)


def check_language(code: str, option: str = "--lang") -> None:
    """Refuse a language code ragkit does not know (:func:`known_languages`)."""
    if code not in known_languages():
        raise RagkitError(
            f"{option} {code!r}: not a language ragkit knows; use an ISO 639 code such as "
            "en, ar, fa, ur, ckb, am, ti"
        )
