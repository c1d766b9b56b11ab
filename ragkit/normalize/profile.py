"""A collection's language profile, and per-document language decisions that lean on it.

A title of four words says little about its language; the collection it sits in says a lot.
:class:`LanguageProfile` accumulates, over many texts, the letters identified as each language
(weighted by the guess's confidence), per script. :func:`resolve_language` then decides a
document's language from its own evidence when that is strong, and from the profile's dominant
language for the document's script when it is weak (short or low-confidence).
:meth:`LanguageProfile.allowed` gives the languages to restrict queries to.

Example:
    >>> profile = LanguageProfile.from_texts([
    ...     "The boiling point of water at sea level is one hundred degrees Celsius.",
    ...     "Aerodynamic heating of a blunt body in hypersonic flow was measured.",
    ... ])
    >>> profile.dominant("Latn")
    'en'
    >>> resolve_language("zebra stripes", profile)
    LanguageGuess(language='en', script='Latn', confidence=0.077, method='profile')
    >>> LanguageProfile.from_dict(profile.to_dict()) == profile
    True
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ragkit.normalize.detect import LanguageGuess, identify

# A document's own guess stands when it is at least this confident and this long; otherwise
# the profile's dominant language for its script is taken (when the profile has one).
MIN_CONFIDENCE = 0.8
MIN_LETTERS = 40


@dataclass
class LanguageProfile:
    """Letters per (script, language), each text's letters weighted by its guess's confidence.

    ``weights[script][language]`` is the confidence-weighted letter count, ``texts`` the
    number of texts added. Serializes to a JSON-able dict (:meth:`to_dict`).
    """

    weights: dict[str, dict[str, float]] = field(default_factory=dict)
    texts: int = 0

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> LanguageProfile:
        """A profile of ``texts`` (each identified without restriction).

        Example:
            >>> LanguageProfile.from_texts(["یہ کتاب ہے"]).dominant("Arab")
            'ur'
        """
        profile = cls()
        for text in texts:
            profile.add(text)
        return profile

    def add(
        self, text: str, guess: LanguageGuess | None = None, letters: int | None = None
    ) -> LanguageGuess:
        """Count ``text`` (identified now unless ``guess`` is given); returns the guess.
        ``letters``: its letters when already counted (then ``text`` is not read)."""
        guess = guess or identify(text)
        letters = sum(char.isalpha() for char in text) if letters is None else letters
        if guess.language != "und" and letters:
            # Default guesses carry their (small) confidence, but never nothing: a collection
            # of short English titles still needs an English profile.
            weight = letters * max(guess.confidence, 0.05)
            by_language = self.weights.setdefault(guess.script, {})
            by_language[guess.language] = by_language.get(guess.language, 0.0) + weight
        self.texts += 1
        return guess

    def shares(self, script: str | None = None) -> dict[str, float]:
        """Each language's share of the weight, within ``script`` or over all scripts.

        Example:
            >>> LanguageProfile({"Latn": {"en": 3.0, "fr": 1.0}}, 2).shares()
            {'en': 0.75, 'fr': 0.25}
        """
        totals: dict[str, float] = {}
        for name, by_language in self.weights.items():
            if script is None or name == script:
                for language, weight in by_language.items():
                    totals[language] = totals.get(language, 0.0) + weight
        whole = sum(totals.values())
        ranked = sorted(totals.items(), key=lambda item: -item[1])
        return {language: weight / whole for language, weight in ranked} if whole else {}

    def dominant(self, script: str) -> str | None:
        """The language with the most weight in ``script``, or ``None`` if none was seen."""
        shares = self.shares(script)
        return next(iter(shares), None)

    def allowed(self, min_share: float = 0.01) -> list[str]:
        """Languages holding at least ``min_share`` of the collection, most frequent first.

        Example:
            >>> LanguageProfile({"Latn": {"en": 99.5, "it": 0.5}}, 9).allowed()
            ['en']
        """
        return [code for code, share in self.shares().items() if share >= min_share]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (see :meth:`from_dict`)."""
        return {
            "texts": self.texts,
            "weights": {
                script: {code: round(weight, 3) for code, weight in sorted(by_language.items())}
                for script, by_language in sorted(self.weights.items())
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LanguageProfile:
        """The profile :meth:`to_dict` wrote."""
        weights = {
            str(script): {str(code): float(weight) for code, weight in by_language.items()}
            for script, by_language in dict(data.get("weights", {})).items()
        }
        return cls(weights, int(data.get("texts", 0)))


def resolve_language(
    text: str,
    profile: LanguageProfile | None = None,
    allowed: Collection[str] | None = None,
    min_confidence: float = MIN_CONFIDENCE,
    min_letters: int = MIN_LETTERS,
    guess: LanguageGuess | None = None,
    letters: int | None = None,
) -> LanguageGuess:
    """A document's language decision: its own evidence, or the profile's when that is weak.

    Weak means below ``min_confidence`` or shorter than ``min_letters`` letters (rule-based
    guesses with a clear margin are kept however short). Then the profile's dominant language
    for the text's script is taken (method ``profile``), if it is allowed. ``guess``: the
    text's own decision when it was already made (identified now otherwise); ``letters``: the
    text's letters when already counted.

    Example:
        >>> profile = LanguageProfile({"Arab": {"ar": 500.0, "fa": 5.0}}, 40)
        >>> resolve_language("کتاب", profile).language
        'ar'
        >>> resolve_language("است را", profile).language
        'fa'
    """
    guess = guess or identify(text, allowed)
    if profile is None:
        return guess
    letters = sum(char.isalpha() for char in text) if letters is None else letters
    strong = guess.method == "given" or (
        guess.confidence >= min_confidence
        and (letters >= min_letters or guess.method in ("script", "letters", "words"))
    )
    if strong:
        return guess
    dominant = profile.dominant(guess.script)
    if dominant is None or dominant == guess.language:
        return replace(guess, method="profile") if dominant else guess
    if allowed is not None and dominant not in allowed:
        return guess
    return LanguageGuess(dominant, guess.script, guess.confidence, "profile")
