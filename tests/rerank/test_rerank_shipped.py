"""The shipped groupwise reranker loads offline and ranks an obvious answer first."""

from __future__ import annotations

from ragkit.rerank.reranker import DEFAULT_RERANKER, WEIGHTS_DIR, Reranker


def test_shipped_model_has_a_card_and_safetensors_only() -> None:
    folder = WEIGHTS_DIR / DEFAULT_RERANKER
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["MODEL_CARD.md", "config.json", "model.safetensors"]
    assert (folder / "model.safetensors").stat().st_size < 5_000_000


def test_shipped_model_ranks_the_answer_first() -> None:
    reranker = Reranker.load()
    documents = [
        "the effect of wing sweep on the lift and drag of delta wings at supersonic speeds .",
        (
            "heat transfer to a flat plate in hypersonic laminar boundary layer flow with "
            "large pressure gradients, measured in a shock tunnel ."
        ),
        "library catalogues and the indexing of scientific periodicals by subject headings .",
        "buckling of thin cylindrical shells under axial compression and external pressure .",
    ]
    ranked = reranker.rank("heat transfer in hypersonic laminar boundary layers", documents)
    assert ranked[0].index == 1
    assert ranked[-1].index == 2 or ranked[-1].score < ranked[0].score
