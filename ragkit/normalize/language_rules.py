"""Letter and word evidence for the languages that share a script (Arabic, Ge'ez).

A statistical identifier needs a few dozen letters; a query has ten. Inside one script the
languages differ by letters only they write and by function words that occur in almost every
sentence, and both are visible in two words. :func:`arabic_script_evidence` scores ``ar``,
``fa``, ``ur``, ``ckb``, ``ps``, ``sd`` and ``ug``; :func:`ethiopic_evidence` scores ``am`` and
``ti``.

Keyboards blur the letters: Arabic typed on a Persian or Urdu keyboard comes out with ک ی ہ ۃ,
Persian typed on an Arabic keyboard with ك ي. So letters a keyboard produces (ک ی ي ك ہ) count
for nothing, function words are matched in each language's own spelling after folding those
letters, and the signs only one orthography has carry the rest:

====  ===========================================================================
ar    ة, ى at the end of a word, tanwin, and the ``ال`` prefix
fa    پ چ ژ گ (shared with ur), ۀ (or ه + hamza above), ZWNJ; the digits ۰–۹ (shared
      with ur, ps and sd: once per text, as Arabic writes ٠–٩)
ur    ٹ ڈ ڑ ں ے ۓ
ckb   ڕ ڵ ێ; ە ۆ (shared with ug), and ی where ە or ۆ is written
ps    ټ ځ څ ډ ړ ږ ښ ګ ڼ ۍ; ې (shared with ug)
sd    ٻ ٺ ٽ ٿ ڀ ڃ ڄ ڇ ڊ ڌ ڍ ڏ ڙ ڦ ڱ ڳ ڻ ۽ ۾; ڪ (also left by old Arabic fonts)
ug    ۇ ۈ ۋ ڭ, ى inside a word (Arabic writes it only at the end), and ي where ە or ۆ
      is written
====  ===========================================================================

Example:
    >>> scores = arabic_script_evidence("قال في البیت الذی")
    >>> max(scores, key=scores.get)
    'ar'
    >>> arabic_script_evidence("این کتاب را از او گرفتم")["fa"]
    3.7
    >>> [max(arabic_script_evidence(t).items(), key=lambda kv: kv[1])[0]
    ...  for t in ("پښتو ژبه", "سنڌي ٻولي", "ئۇيغۇر تىلى")]
    ['ps', 'sd', 'ug']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ARABIC_SCRIPT_LANGUAGES = ("ar", "fa", "ur", "ckb", "ps", "sd", "ug")

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


def _own_spelling(text: str) -> frozenset[str]:
    """Words written with ي ى ك as their language writes them, folded as tokens are."""
    return _words(text.translate(_TO_PERSIAN))


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
# Pashto and Uyghur function words, only those rare (under once per million words, wordfreq's
# Zipf < 3) in Persian, Urdu and Arabic once ي ى ك are folded: Pashto په, ته, وي, دي, کوي fold
# into common Persian or Urdu words, and so do all of Sindhi's (جو, جي, آهي, سان, تي), so
# Sindhi is told by its letters alone. Pashto د "of" is left out too: a letter standing alone is
# as often an Arabic abbreviation.
PASHTO_WORDS = _own_spelling("چې کې یې دې هغه دغه لپاره")
UYGHUR_WORDS = _own_spelling("ۋە بىلەن بۇ ئۇ ئۈچۈن دەپ ھەم بولۇپ ئىدى يوق")

# Function words matched after folding ي ى ك to ی ک (Arabic's are matched on their own).
_FUNCTION_WORDS = {
    "fa": PERSIAN_WORDS,
    "ur": URDU_WORDS,
    "ckb": SORANI_WORDS,
    "ps": PASHTO_WORDS,
    "ug": UYGHUR_WORDS,
}


_SORANI_UYGHUR = "ەۆ"  # the letters Sorani and Uyghur share


def _points(letters: str, **points: float) -> dict[str, dict[str, float]]:
    return dict.fromkeys(letters, points)


# Points per letter that only some orthographies write (see the module text).
_LETTER_POINTS: dict[str, dict[str, float]] = {
    **_points("\u0629\u0649\u064c\u064d", ar=0.5),  # ة ى and two tanwin
    **_points("\u064b", ar=0.25),  # fathatan
    **_points("پچژگ", fa=0.5, ur=0.5),  # letters Arabic lacks, written by fa, ur (and others)
    **_points("ٹڈڑںےۓ", ur=1),
    **_points("\u06c2\u06be", ur=0.25),  # ۂ ھ: Urdu spellings
    **_points("\u06c0", fa=1),  # ۀ: the Persian ezafe heh
    **_points(ZWNJ, fa=0.5),  # Persian orthography (می‌شود, کتاب‌ها); rare in Urdu
    **_points("\u06a9\u06cc", fa=0.1, ur=0.1),  # ک ی: a Persian/Urdu keyboard, most often
    **_points("ڕڵێ", ckb=2),
    **_points(_SORANI_UYGHUR, ckb=1.5, ug=1.5),
    **_points("ټځڅډړږښګڼۍ", ps=2),
    **_points("\u06d0", ps=1, ug=1),  # ې
    **_points("ٻٺٽٿڀڃڄڇڊڌڍڏڙڦڱڳڻ۽۾", sd=2),
    **_points("\u06aa", sd=0.5),  # ڪ: the Sindhi kaf, also left in text by old Arabic fonts
    **_points("ۇۈۋڭ", ug=2),
}
_ALEF_MAKSURA = "\u0649"
_HAMZA_ABOVE = "\u0654"
_EXTENDED_DIGITS = frozenset("۰۱۲۳۴۵۶۷۸۹")  # U+06F0–U+06F9
_ARTICLE = re.compile("^(?:[وفبك]?ال|لل)..")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(_MARKS.sub("", text).replace(ZWNJ, " "))


def arabic_script_evidence(text: str) -> dict[str, float]:
    """Evidence points for each of :data:`ARABIC_SCRIPT_LANGUAGES` in Arabic-script ``text``.

    One point per function word of a language (Arabic words also behind a ``و``/``ف``
    prefix), half a point per Arabic ``ال`` word, and per letter only that orthography
    writes (see the module text for the letters and their weights).

    Example:
        >>> arabic_script_evidence("یہ کتاب ہے")
        {'ar': 0.0, 'fa': 0.2, 'ur': 3.2, 'ckb': 0.0, 'ps': 0.0, 'sd': 0.0, 'ug': 0.0}
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
        for code, function_words in _FUNCTION_WORDS.items():
            words[code] += persian in function_words
    for index, char in enumerate(text):
        if char == _ALEF_MAKSURA and text[index + 1 : index + 2].isalpha():
            letters["ug"] += 2  # Uyghur i; Arabic writes ى only at the end of a word
            continue
        if char == _HAMZA_ABOVE and text[index - 1 : index] == "ه":
            letters["fa"] += 1  # the Persian ezafe written as heh + hamza (دورهٔ), as ۀ
            continue
        for code, points in _LETTER_POINTS.get(char, {}).items():
            letters[code] += points
    if any(char in _EXTENDED_DIGITS for char in text):
        for code in ("fa", "ur", "ps", "sd"):  # ۰–۹: Arabic writes ٠–٩ (or 0–9)
            letters[code] += 0.5
    if any(char in _SORANI_UYGHUR for char in text):
        # Between the two languages that write ە ۆ, the yeh decides: Sorani writes ی, Uyghur ي.
        letters["ckb"] += 0.5 * text.count("\u06cc")
        letters["ug"] += 0.5 * text.count("\u064a")
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
