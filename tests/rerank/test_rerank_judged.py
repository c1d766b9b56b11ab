"""Training groups from judged queries over a real first stage, and training on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.evaluate import load_judgments
from ragkit.rerank.config import RerankerConfig
from ragkit.training.grpo import GRPOConfig
from ragkit.training.judged import candidate_list, judged_groups, judged_level
from ragkit.training.train import TrainConfig, Trainer, train_reranker

TINY = RerankerConfig(
    hidden=32, heads=4, ffn=64, layers=1, group_size=4, doc_tokens=32, query_tokens=16
)
TOPICS = {
    "wings": [
        "Swept wings delay the drag rise at transonic speed.",
        "Wing flutter couples bending and torsion of the wing.",
        "Delta wings generate vortex lift at high angle of attack.",
    ],
    "heat": [
        "Heat transfer in a laminar boundary layer at high Mach number.",
        "Skin friction and heating of a flat plate in hypersonic flow.",
        "Radiative cooling of a re-entry heat shield.",
    ],
    "other": [
        "Cats sleep most of the day.",
        "Bread rises because yeast makes carbon dioxide.",
        "The harbour freezes in a cold winter.",
        "Violins are tuned in fifths.",
    ],
}


@pytest.fixture
def judged_set(tmp_path: Path) -> Path:
    """Ten documents, three judged queries with grades 1–3."""
    folder = tmp_path / "aero"
    (folder / "qrels").mkdir(parents=True)
    ids = {text: f"{topic}{i}" for topic, texts in TOPICS.items() for i, text in enumerate(texts)}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for t, d in ids.items())
    )
    queries = {"q1": "wing flutter and swept wings", "q2": "heating in hypersonic boundary layers"}
    queries["q3"] = "vortex lift of delta wings"
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items())
    )
    qrels = "q1\twings1\t3\nq1\twings0\t1\nq2\theat0\t2\nq2\theat1\t3\nq3\twings2\t3\n"
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return folder


def test_levels_rise_with_the_grade() -> None:
    assert [judged_level(g, 3) for g in range(4)] == [0, 7, 8, 10]


def test_groups_carry_levels_priors_and_anchors(judged_set: Path, tmp_path: Path) -> None:
    judgments = load_judgments(judged_set)
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    index.ingest([judgments.corpus])
    candidates = candidate_list(index, judgments.queries["q1"], 10)
    assert len(candidates) == 10 and len({d for d, _, _ in candidates}) == 10
    groups = judged_groups(index, judgments, ["q1"], group_size=4, depth=10, passes=2, seed=3)
    assert {g.source for g in groups} == {"aero/q1"} and {g.kind for g in groups} == {"judged"}
    assert all(len(g.doc_ids) == 4 for g in groups)
    first_pass = [d for g in groups[:3] for d in g.doc_ids]
    assert set(first_pass) == {d for d, _, _ in candidates}  # every candidate, in order
    assert first_pass[:3] == [d for d, _, _ in candidates[:3]]
    for group in groups:
        assert all(0.0 <= p <= 1.0 for p in group.prior)
        assert group.anchors == tuple(t for _, t, _ in candidates[:3])
        for doc, level in zip(group.doc_ids, group.labels, strict=True):
            assert level == {"wings1": 10, "wings0": 7}.get(doc, 0)
    assert groups[0].prior[0] == 1.0  # the first stage's best
    index.close()


def test_training_on_judgments_holds_out_whole_queries(judged_set: Path, tmp_path: Path) -> None:
    config = TrainConfig(
        judged=[judged_set],
        output=tmp_path / "model",
        index_root=tmp_path / "indexes",
        reranker=TINY,
        validation_share=0.34,
        batch_groups=2,
        grpo_steps=2,
        grpo=GRPOConfig(rollouts=4),
        judged_depth=8,
    )
    train, validation = Trainer(config).build_data()
    assert {g.source for g in train}.isdisjoint({g.source for g in validation})
    assert len({g.source for g in validation}) == 1
    result = train_reranker(config)
    assert len(result.rewards) == 2  # GRPO ran on the judged groups
    record = json.loads((tmp_path / "model" / "training.json").read_text())
    assert record["data"]["kinds"] == {"judged": result.groups}
    assert (tmp_path / "indexes" / "aero").is_dir()  # the first stage is kept for reuse


def test_training_without_data_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RagkitError, match="--corpus, --headings or --judged"):
        Trainer(TrainConfig(output=tmp_path)).build_data()
