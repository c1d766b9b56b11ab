"""A learned corrector for words typed in a neighbouring language's orthography.

Sorani typed on a Persian keyboard loses the letters that keyboard lacks: ``ە ڕ ڵ ۆ ێ``
become ``ه ر ل و ی``. A character table cannot undo that (``ر`` and ``ڕ`` are both Sorani
letters), but a word list can: ``بەلام`` is not a word, ``بەڵام`` is. The corrector is a noisy
channel — it picks the word ``w`` maximising ``P(w) · P(observed | w)``:

* ``P(w)``: a unigram model over a lexicon (add-one smoothed counts);
* ``P(observed | w)``: per-character substitution probabilities, **learned from synthetic
  noise** — lexicon words are corrupted with a keyboard's fallbacks (:data:`KEYBOARD_NOISE`),
  each noisy copy is aligned with its source and the aligned pairs are counted.

Candidates are every spelling reachable from the observed word through the learned
substitutions (a bounded beam), plus the word itself; a word the lexicon does not hold is
kept as it is, apart from the language's firm spelling rules (:data:`OOV_RULES`). Before all
of this the language's script table (:mod:`ragkit.normalize.perso_arabic`) runs, so Arabic
``ي``/``ك`` never reach the model.

Example:
    >>> corrector = OrthographyCorrector.train(
    ...     {"بەڵام": 5, "کوڕ": 3, "ماڵ": 4, "مال": 3}, KEYBOARD_NOISE["ckb"], language="ckb")
    >>> [corrector.correct_word(word) for word in ("بەلام", "كور", "مال")]
    ['بەڵام', 'کوڕ', 'مال']
    >>> OrthographyCorrection(corrector)("ئەو كور").text
    'ئەو کوڕ'
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from ragkit.errors import RagkitError
from ragkit.normalize.base import Normalized, RegexSub, Step
from ragkit.normalize.perso_arabic import LANGUAGES, PersoArabicScript
from ragkit.normalize.pipeline import Pipeline
from ragkit.paths import cache_dir

FORMAT = "ragkit-orthography/1"
MAX_PIECE = 2  # longest observed string one intended character may turn into
MAX_WORD = 40  # longer "words" (URLs, runs of letters) only go through the script table

# How a typist without the target keyboard writes each letter: intended → {typed: probability}.
# The remaining probability is the letter typed correctly. These drive the synthetic noise
# only; the model's probabilities are what counting the aligned noisy pairs gives.
KEYBOARD_NOISE: dict[str, dict[str, dict[str, float]]] = {
    # Sorani on a Persian keyboard: the five Kurdish letters fall back to their bare forms
    # (ە is the most often lost: it is the commonest letter).
    "ckb": {
        "ە": {"ه": 0.6},
        "ڕ": {"ر": 0.5},
        "ڵ": {"ل": 0.5},
        "ۆ": {"و": 0.4},
        "ێ": {"ی": 0.4},
    },
    # Persian on an Arabic keyboard (after the table has fixed ي and ك): Arabic loans keep
    # teh marbuta where Persian writes ه or ت, and the four Persian-only letters fall back to
    # their Arabic neighbours (گ→ک, پ→ب, چ→ج, ژ→ز), rarely, since most typists have them.
    "fa": {
        "ه": {"ة": 0.15},
        "ت": {"ة": 0.05},
        "گ": {"ک": 0.05},
        "پ": {"ب": 0.05},
        "چ": {"ج": 0.05},
        "ژ": {"ز": 0.05},
    },
}

_WORD = re.compile(r"[^\W\d_]+(?:\u200c[^\W\d_]+)*")

# Spelling rules for words the lexicon does not hold (inflected forms, mostly). Sorani has no
# word-initial flap: a word never starts with ر, always with the trill ڕ (klpt's standardizer
# applies the same rule).
OOV_RULES: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "ckb": ((re.compile("^ر"), "ڕ"),),
}


def corrupt(word: str, noise: Mapping[str, Mapping[str, float]], rng: random.Random) -> str:
    """One noisy copy of ``word``: each character independently follows ``noise``.

    Example:
        >>> corrupt("ڕەش", {"ڕ": {"ر": 1.0}}, random.Random(0))
        'رەش'
    """
    out: list[str] = []
    for char in word:
        draw = rng.random()
        for typed, probability in noise.get(char, {}).items():
            if draw < probability:
                out.append(typed)
                break
            draw -= probability
        else:
            out.append(char)
    return "".join(out)


def align(intended: str, observed: str) -> list[tuple[str, str]]:
    """Cheapest alignment of each intended character with an observed string (0–2 chars).

    Example:
        >>> align("وڵات", "وولات")
        [('و', 'وو'), ('ڵ', 'ل'), ('ا', 'ا'), ('ت', 'ت')]
    """
    n, m = len(intended), len(observed)
    if n == m:
        return list(zip(intended, observed, strict=True))
    inf = float("inf")
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    back = [[0] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(n):
        for j in range(m + 1):
            if cost[i][j] == inf:
                continue
            for k in range(min(MAX_PIECE, m - j) + 1):
                piece = observed[j : j + k]
                step = 0.0 if piece == intended[i] else 1.0 if k == 1 else 2.0 if k == 2 else 1.5
                if k == 2 and piece.startswith(intended[i]):
                    step = 0.5  # a doubled or extended letter: cheaper than any other edit
                if cost[i][j] + step < cost[i + 1][j + k]:
                    cost[i + 1][j + k] = cost[i][j] + step
                    back[i + 1][j + k] = k
    if cost[n][m] == inf:
        return []
    pairs: list[tuple[str, str]] = []
    j = m
    for i in range(n, 0, -1):
        k = back[i][j]
        pairs.append((intended[i - 1], observed[j - k : j]))
        j -= k
    return pairs[::-1]


class OrthographyCorrector:
    """Noisy-channel word corrector: unigram lexicon × learned character channel.

    ``channel[intended][observed]`` is ``P(observed | intended)`` for the characters that were
    seen corrupted; every other character is copied with probability 1.
    """

    def __init__(
        self,
        lexicon: Mapping[str, int],
        channel: Mapping[str, Mapping[str, float]],
        language: str | None = None,
        beam: int = 64,
        oov_count: float = 0.5,
    ) -> None:
        if language is not None and language not in LANGUAGES:
            raise RagkitError(
                f"orthography corrector: unknown language {language!r}; "
                f"choose one of {', '.join(LANGUAGES)} or None"
            )
        self.lexicon = dict(lexicon)
        self.channel = {c: dict(row) for c, row in channel.items()}
        self.language = language
        self.beam = beam
        self.oov_count = oov_count
        self._script = PersoArabicScript(language) if language else None
        total = sum(self.lexicon.values()) + len(self.lexicon)
        self._log_total = math.log(max(total, 1))
        # observed string → [(intended character, log P(observed | intended))]
        self._sources: dict[str, list[tuple[str, float]]] = {}
        for intended, row in self.channel.items():
            for observed, probability in row.items():
                if probability > 0:
                    self._sources.setdefault(observed, []).append((intended, math.log(probability)))
        self._cache: dict[str, str] = {}

    @classmethod
    def train(
        cls,
        lexicon: Mapping[str, int] | Iterable[str],
        noise: Mapping[str, Mapping[str, float]],
        language: str | None = None,
        copies: int = 4,
        max_words: int = 20_000,
        min_probability: float = 1e-3,
        seed: int = 0,
    ) -> OrthographyCorrector:
        """Learn the channel from ``copies`` noisy versions of (up to ``max_words``) words.

        ``lexicon`` is ``{word: count}`` or plain words (count 1). With ``language`` set the
        words first pass through that language's script table, like every input does later.
        """
        counts = dict(lexicon) if isinstance(lexicon, Mapping) else Counter(lexicon)
        if language is not None:
            script = PersoArabicScript(language)
            merged: Counter[str] = Counter()
            for word, count in counts.items():
                merged[script.apply(word).text] += count
            counts = dict(merged)
        rng = random.Random(seed)
        words = sorted(counts)
        sample = rng.sample(words, max_words) if len(words) > max_words else words
        pairs: Counter[tuple[str, str]] = Counter()
        for word in sample:
            for _ in range(copies):
                pairs.update(align(word, corrupt(word, noise, rng)))
        seen: Counter[str] = Counter()
        for (intended, _), count in pairs.items():
            seen[intended] += count
        channel: dict[str, dict[str, float]] = {}
        for (intended, observed), count in sorted(pairs.items()):
            probability = count / seen[intended]
            if intended in noise and probability >= min_probability:
                channel.setdefault(intended, {})[observed] = round(probability, 6)
        return cls(counts, channel, language=language)

    def log_prior(self, word: str) -> float:
        """Add-one smoothed unigram log probability; a word outside the lexicon counts
        ``oov_count`` (lower corrects unknown words more eagerly)."""
        count = self.lexicon.get(word)
        return math.log(count + 1 if count is not None else self.oov_count) - self._log_total

    def candidates(self, word: str) -> dict[str, float]:
        """Spellings that could have been typed as ``word``: ``{candidate: log P(word | it)}``."""
        beams: dict[int, dict[str, float]] = {0: {"": 0.0}}
        for position in range(len(word)):
            current = beams.pop(position, None)
            if not current:
                continue
            if len(current) > self.beam:
                kept = sorted(current.items(), key=lambda item: -item[1])[: self.beam]
                current = dict(kept)
            for size in range(1, MAX_PIECE + 1):
                piece = word[position : position + size]
                if len(piece) < size:
                    break
                options = list(self._sources.get(piece, []))
                if size == 1:
                    stay = self.channel.get(piece, {})
                    keep = 1.0 - sum(p for o, p in stay.items() if o != piece)
                    options.append((piece, math.log(max(keep, 1e-9))))
                target = beams.setdefault(position + size, {})
                for prefix, score in current.items():
                    for intended, log_p in options:
                        new = prefix + intended
                        if score + log_p > target.get(new, -math.inf):
                            target[new] = score + log_p
        return beams.get(len(word), {"": 0.0}) if word else {"": 0.0}

    def correct_word(self, word: str) -> str:
        """The most probable intended spelling of one word (the word itself when unsure).

        Example:
            >>> OrthographyCorrector({"ڕەش": 1}, {"ڕ": {"ر": 0.5}}).correct_word("رەش")
            'ڕەش'
        """
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        typed = self._script.apply(word).text if self._script else word
        best, best_score = typed, -math.inf
        options = self.candidates(typed) if len(typed) <= MAX_WORD else {}
        for candidate, log_channel in options.items():
            if candidate not in self.lexicon and candidate != typed:
                continue
            score = log_channel + self.log_prior(candidate)
            if score > best_score:
                best, best_score = candidate, score
        if best == typed and typed not in self.lexicon:
            for pattern, replacement in OOV_RULES.get(self.language or "", ()):
                best = pattern.sub(replacement, best)
        if len(self._cache) < 200_000:
            self._cache[word] = best
        return best

    def to_dict(self) -> dict[str, object]:
        return {
            "format": FORMAT,
            "language": self.language,
            "beam": self.beam,
            "oov_count": self.oov_count,
            "channel": self.channel,
            "lexicon": self.lexicon,
        }

    def save(self, path: str | Path) -> Path:
        """Write the model as JSON (gzip-compressed when the name ends in ``.gz``)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True).encode("utf-8")
        path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
        return path

    @classmethod
    def load(cls, path: str | Path) -> OrthographyCorrector:
        """Read a model written by :meth:`save`."""
        path = Path(path)
        try:
            raw = path.read_bytes()
            data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        except (OSError, ValueError) as error:
            raise RagkitError(f"orthography model {path}: cannot read ({error})") from error
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RagkitError(f"orthography model {path}: not a {FORMAT} file; retrain it")
        return cls(
            data["lexicon"],
            data["channel"],
            data.get("language"),
            beam=data.get("beam", 64),
            oov_count=data.get("oov_count", 0.5),
        )

    @classmethod
    def for_language(cls, language: str, download: bool = True) -> OrthographyCorrector:
        """The corrector for ``language``, built once from its package's word list and cached.

        The model lives in ``cache_dir()/orthography/<language>.json.gz``; building it needs
        the source package (installed, cached, or fetched with pip; see
        :mod:`ragkit.normalize.lexicons`) and takes a few seconds.
        """
        from ragkit.normalize.lexicons import PACKAGES, training_lexicon

        if language not in KEYBOARD_NOISE or language not in PACKAGES:
            raise RagkitError(
                f"no orthography corrector for {language!r}; available: "
                f"{', '.join(sorted(set(KEYBOARD_NOISE) & set(PACKAGES)))}"
            )
        source = PACKAGES[language]
        name = f"{language}-{source.name}-{source.version}-{FORMAT.rsplit('/', 1)[1]}.json.gz"
        path = cache_dir() / "orthography" / name
        if path.exists():
            return cls.load(path)
        lexicon = training_lexicon(language, download=download)
        corrector = cls.train(lexicon, KEYBOARD_NOISE[language], language=language)
        corrector.save(path)
        return corrector


class OrthographyCorrection(Step):
    """Correct every word of a text, keeping offsets; the script table runs first.

    A word replaced by one of the same length maps character by character; otherwise the
    replacement's characters point into the original word as :class:`RegexSub` does.
    """

    def __init__(self, corrector: OrthographyCorrector) -> None:
        self.corrector = corrector
        self.name = f"orthography-{corrector.language or 'any'}"
        words = RegexSub(_WORD, lambda match: corrector.correct_word(match.group()), self.name)
        steps: list[Step] = [PersoArabicScript(corrector.language)] if corrector.language else []
        self._pipeline = Pipeline([*steps, words], name=self.name)

    def apply(self, text: str) -> Normalized:
        return self._pipeline.apply(text)
