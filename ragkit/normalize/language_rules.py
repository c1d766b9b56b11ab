"""Letter and word evidence for the languages that share a script (Arabic, Ge'ez).

A statistical identifier needs a few dozen letters; a query has ten. Inside one script the
languages differ by letters only they write and by function words that occur in almost every
sentence, and both are visible in two words. :func:`arabic_script_evidence` scores ``ar``,
``fa``, ``ur`` and ``ckb``; :func:`ethiopic_evidence` scores ``am`` and ``ti``.

Keyboards blur the letters: Arabic typed on a Persian or Urdu keyboard comes out with ک ی ہ ۃ,
Persian typed on an Arabic keyboard with ك ي. So letters a keyboard produces (ک ی ي ك ہ) count
for nothing, function words are matched in each language's own spelling after folding those
letters, and the signs only one orthography has (ة ى tanwin and the ``ال`` prefix for Arabic;
پ چ ژ گ for Persian and Urdu; ٹ ڈ ڑ ں ے for Urdu; ڕ ڵ ۆ ێ ە for Sorani) carry the rest.

Example:
    >>> scores = arabic_script_evidence("قال في البیت الذی")
    >>> max(scores, key=scores.get)
    'ar'
    >>> arabic_script_evidence("این کتاب را از او گرفتم")["fa"]
    3.7
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ARABIC_SCRIPT_LANGUAGES = ("ar", "fa", "ur", "ckb")

_MARKS = re.compile("[\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_TOKEN = re.compile(r"[^\W\d_]+")
ZWNJ = "\u200c"

# Each language's function words are matched after folding keyboard variants to the letters
# that language writes: Arabic reads ک ی ہ ھ ۃ as ك ي ه ه ة; Persian and Urdu read ك ي ى as
# ک ی ی. Urdu keeps ہ and ه apart (Persian که "that" is not Urdu کہ).
_TO_ARABIC = str.maketrans(
    dict.fromkeys("کڪ", "ك")
    | dict.fromkeys("یى", "ي")
    | dict.fromkeys("ہھەۂۀ", "ه")
    | dict.fromkeys("أإآٱ", "ا")
    | {"ۃ": "ة"}
)
_TO_PERSIAN = str.maketrans("كيىۓ", "کییے")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ARABIC_WORDS = _words(
    "في علي الي عن ان انه انها التي الذي الذين اللذين هذا هذه ذلك تلك قال قالت كان كانت "
    "لا لم لن قد ثم هو هي اذا مع عند فيه فيها منه منها الا له لها لهم ليس هل بل كما عليهم "
    "حدثنا اخبرنا يقول"
)
PERSIAN_WORDS = _words(
    "است را این که با از می نمی آن برای هم نیز تا یک کرد شد بود شود ها های خود اند ای "
    "اما باید کند دارد بر وی چه همه شده کنند دیگر هر اگر نه"
)
URDU_WORDS = _words(
    "ہے ہیں کے کی کا میں اور سے نے کو یہ وہ تھا تھی تھے گیا کیا ہو پر بھی لیے جو کہ ایک "
    "اپنے نہیں کر ہوں گے والے"
)
# Sorani words that carry no Sorani letter are left out (و, تا are Persian and Arabic too).
SORANI_WORDS = _words("لە بە کە بۆ ئەم ئەو دە لەگەڵ یان")

_ARABIC_ONLY = {"\u0629": 0.5, "\u0649": 0.5, "\u064b": 0.25, "\u064c": 0.5, "\u064d": 0.5}
_PERSO_URDU = frozenset("پچژگ")  # letters Arabic lacks, written by fa, ur (and ckb)
_URDU_ONLY = frozenset("ٹڈڑںےۓ")
_SORANI_ONLY = frozenset("ڕڵۆێە")
_ARTICLE = re.compile("^(?:[وفبك]?ال|لل)..")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_MARKS.sub("", text).replace(ZWNJ, " "))


def arabic_script_evidence(text: str) -> dict[str, float]:
    """Evidence points for ``ar``, ``fa``, ``ur`` and ``ckb`` in Arabic-script ``text``.

    One point per function word of a language (Arabic words also behind a ``و``/``ف``
    prefix), half a point per Arabic ``ال`` word, and per letter only that orthography
    writes (see the module text for the letters and their weights).

    Example:
        >>> arabic_script_evidence("یہ کتاب ہے")
        {'ar': 0.0, 'fa': 0.2, 'ur': 3.2, 'ckb': 0.0}
    """
    words, letters = evidence_parts(text)
    return {code: words[code] + letters[code] for code in ARABIC_SCRIPT_LANGUAGES}


def evidence_parts(text: str) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`arabic_script_evidence` split into its word points and its letter points.

    Example:
        >>> words, letters = evidence_parts("گفت که")
        >>> words["fa"], letters["fa"]
        (1.0, 0.6)
    """
    words = dict.fromkeys(ARABIC_SCRIPT_LANGUAGES, 0.0)
    letters = dict.fromkeys(ARABIC_SCRIPT_LANGUAGES, 0.0)
    for token in _tokens(text):
        arabic = token.translate(_TO_ARABIC)
        if arabic in ARABIC_WORDS or (
            len(arabic) > 2 and arabic[0] in "وف" and arabic[1:] in ARABIC_WORDS
        ):
            words["ar"] += 1
        elif _ARTICLE.match(arabic):
            words["ar"] += 0.5
        persian = token.translate(_TO_PERSIAN)
        words["fa"] += persian in PERSIAN_WORDS
        words["ur"] += persian in URDU_WORDS
        words["ckb"] += persian in SORANI_WORDS
    for char in text:
        if char in _ARABIC_ONLY:
            letters["ar"] += _ARABIC_ONLY[char]
        elif char in _PERSO_URDU:
            letters["fa"] += 0.5
            letters["ur"] += 0.5
        elif char in _URDU_ONLY:
            letters["ur"] += 1
        elif char in _SORANI_ONLY:
            letters["ckb"] += 2
        elif char in "\u06c2\u06be":  # ۂ ھ: Urdu spellings
            letters["ur"] += 0.25
        elif char == "\u06c0":  # ۀ: the Persian ezafe heh
            letters["fa"] += 1
        elif char == ZWNJ:  # Persian orthography (می‌شود, کتاب‌ها); rare in Urdu
            letters["fa"] += 0.5
        elif char in "\u06a9\u06cc":  # ک ی: a Persian/Urdu keyboard, most often that language
            letters["fa"] += 0.1
            letters["ur"] += 0.1
    return words, letters


@dataclass(frozen=True)
class Evidence:
    """The best-scoring language, its score and the runner-up's, and whether words decided."""

    language: str
    score: float
    runner_up: float
    words: bool

    @property
    def margin(self) -> float:
        """How far ahead the best language is."""
        return self.score - self.runner_up


def best_of(scores: dict[str, float], candidates: tuple[str, ...], words: bool) -> Evidence:
    """The best of ``candidates`` by ``scores`` (ties go to the earlier candidate).

    Example:
        >>> best_of({"ar": 2.0, "fa": 0.5}, ("fa", "ar"), words=True)
        Evidence(language='ar', score=2.0, runner_up=0.5, words=True)
    """
    ranked = sorted(candidates, key=lambda code: -scores.get(code, 0.0))
    runner_up = scores.get(ranked[1], 0.0) if len(ranked) > 1 else 0.0
    return Evidence(ranked[0], scores.get(ranked[0], 0.0), runner_up, words)


TIGRINYA_A = "\u12a3"
AMHARIC_A = "\u12a0"


def ethiopic_evidence(text: str) -> dict[str, float]:
    """Evidence for ``ti`` and ``am``: Tigrinya writes ኣ where Amharic writes አ, and the ቐ row.

    Example:
        >>> ethiopic_evidence("ኣብ ትግራይ ዝርከብ")
        {'am': 0.0, 'ti': 1.0}
    """
    tigrinya = text.count(TIGRINYA_A) + sum("\u1250" <= char <= "\u125d" for char in text)
    return {"am": float(text.count(AMHARIC_A)), "ti": float(tigrinya)}
