"""End-to-end reranker training on a small real corpus (tiny model, real backbone)."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from ragkit.cli import app
from ragkit.corpora.heading_sources import HeadingCorpus
from ragkit.corpora.headings import HeadingPair
from ragkit.paths import shared_data_dir
from ragkit.rerank.backbone import Backbone
from ragkit.rerank.config import RerankerConfig
from ragkit.rerank.model import FEATURES, GroupwiseReranker
from ragkit.rerank.reranker import Reranker, load_model
from ragkit.training import headings
from ragkit.training.grpo import GRPOConfig
from ragkit.training.train import TrainConfig, train_reranker

CRANFIELD = shared_data_dir() / "beir" / "cranfield"
pytestmark = pytest.mark.skipif(
    not CRANFIELD.exists(),
    reason=f"shared data not found under {shared_data_dir()} (set RAGKIT_SHARED_DATA)",
)
TINY = RerankerConfig(
    hidden=32, heads=4, ffn=64, layers=1, group_size=4, doc_tokens=32, query_tokens=16
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    with (CRANFIELD / "corpus.jsonl").open(encoding="utf-8") as handle:
        (folder / "corpus.jsonl").write_text("".join(islice(handle, 30)), encoding="utf-8")
    return folder


def _config(corpus: Path, out: Path, **changes: object) -> TrainConfig:
    settings: dict[str, object] = {
        "reranker": TINY,
        "batch_groups": 4,
        "grpo_steps": 3,
        "evaluate_every": 3,
        "grpo": GRPOConfig(rollouts=4),
    }
    return TrainConfig(corpora=[corpus], output=out, **(settings | changes))


def test_groupwise_training_saves_a_loadable_model_with_curves(
    corpus: Path, tmp_path: Path
) -> None:
    stages: set[str] = set()
    result = train_reranker(
        _config(corpus, tmp_path / "m"), progress=lambda stage, done, total: stages.add(stage)
    )
    assert stages == {"sft", "grpo"}
    assert result.groups + result.validation_groups >= 25
    assert len(result.sft_loss) == -(-result.groups // 4)
    assert len(result.rewards) == 3
    assert [stage for stage, _, _ in result.validation] == ["init", "sft", "grpo"]
    record = json.loads((tmp_path / "m" / "training.json").read_text())
    assert record["config"]["grpo"]["rollouts"] == 4
    assert sum(record["data"]["kinds"].values()) == result.groups
    samples = json.loads((tmp_path / "m" / "samples.json").read_text())
    assert all(10 in sample["labels"] for sample in samples)
    scores = Reranker(load_model(tmp_path / "m")).score("boundary layer", ["a", "b", "c"])
    assert scores.shape == (3,)


def test_pointwise_objective_trains_groups_of_one(corpus: Path, tmp_path: Path) -> None:
    result = train_reranker(_config(corpus, tmp_path / "p", objective="pointwise"))
    assert result.rewards == []  # no GRPO for the pointwise peer
    assert [stage for stage, _, _ in result.validation] == ["init", "sft"]
    assert load_model(tmp_path / "p").config.group_size == 4


def test_same_seed_same_model(corpus: Path, tmp_path: Path) -> None:
    first = train_reranker(_config(corpus, tmp_path / "a", grpo_steps=0))
    second = train_reranker(_config(corpus, tmp_path / "b", grpo_steps=0))
    assert first.sft_loss == second.sft_loss
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (
        tmp_path / "b" / "model.safetensors"
    ).read_bytes()


def test_tuned_layers_train_and_ship_only_their_copy(corpus: Path, tmp_path: Path) -> None:
    tuned = TINY.model_copy(update={"tuned_layers": 1})
    result = train_reranker(_config(corpus, tmp_path / "t", reranker=tuned, grpo_steps=2))
    assert len(result.rewards) == 2
    weights = load_file(str(tmp_path / "t" / "model.safetensors"))
    upper = {k: v for k, v in weights.items() if k.startswith("upper.")}
    assert upper and all(v.dtype == torch.float16 for v in upper.values())
    # the copy moved away from the backbone's own top layer: it was trained
    backbone = Backbone(tuned.backbone)
    original = backbone.transformer.encoder.layer[-1].state_dict()
    moved = [
        (upper[f"upper.layers.0.{k}"].float() - v).abs().max().item() for k, v in original.items()
    ]
    assert max(moved) > 1e-4
    reranker = Reranker.load(tmp_path / "t")
    assert reranker.config.tuned_layers == 1
    scores = reranker.score("boundary layer", ["boundary layer flow", "tax law", "c"])
    assert scores.shape == (3,) and np.isfinite(scores).all()


def test_upper_layers_over_lower_states_equal_the_backbone() -> None:
    backbone = Backbone("all-minilm-l6-v2")
    texts = ["flutter", "boundary layer transition at high Mach numbers"]
    states = backbone.encode(texts, 24, "passage", tuned=2)
    assert states.lower is not None
    with torch.no_grad():
        again = backbone.upper_layers(2).eval()(states.lower, states.mask)
    assert torch.allclose(again[states.mask], states.hidden[states.mask], atol=1e-4)
    with pytest.raises(ValueError, match="tuned layers"):
        backbone.upper_layers(7)


def test_tuned_inference_lifts_each_candidate_once_with_the_forward_scores() -> None:
    backbone = Backbone("all-minilm-l6-v2")
    tuned = TINY.model_copy(update={"tuned_layers": 1})
    torch.manual_seed(0)
    model = GroupwiseReranker(tuned, backbone.upper_layers(1)).eval()
    texts = ["swept wings", "wing flutter at transonic speed", "tax law", "boundary layer"]
    query = backbone.encode(["wing flutter"], 16, "query", tuned=1)
    docs = backbone.encode(texts, 32, "passage", tuned=1)
    features = torch.randn(1, 4, FEATURES)
    with torch.no_grad():
        through = model(query.lower, query.mask, docs.lower[None], docs.mask[None], features)
        lifted = model.interact(
            model.upper(query.lower, query.mask),
            query.mask,
            model.upper(docs.lower, docs.mask)[None],
            docs.mask[None],
            features,
        )
    assert torch.allclose(through, lifted, atol=1e-5)


@pytest.mark.slow
def test_heading_groups_train_a_tuned_reranker_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "model"
    unknown = CliRunner().invoke(app, ["rerank", "train", "--headings", "xx", "--out", str(out)])
    assert unknown.exit_code == 2 and "no heading corpus for language 'xx'" in unknown.output
    topics = {
        "Boiling water": "Water boils at one hundred degrees at sea level and lower on mountains.",
        "Swept wings": "Swept wings delay the shock wave and reduce drag near the speed of sound.",
        "Cat food": "Cats need meat; a diet of fish and poultry keeps a cat healthy and lean.",
        "Tea leaves": "Green tea leaves are steamed, black tea leaves are oxidised before drying.",
        "Solar panels": "Solar panels turn sunlight into current through silicon cells.",
        "Bread dough": "Yeast makes bread dough rise as it ferments sugars into carbon dioxide.",
        "Sea tides": "Tides follow the moon, whose pull raises the ocean twice every day.",
        "Bike gears": "Low bicycle gears make hills easier by trading speed for force.",
        "Bee colonies": "A bee colony has one queen, thousands of workers and a few drones.",
        "Rain clouds": "Rain falls when droplets in clouds merge and grow too heavy to float.",
        "Chess openings": "Chess openings develop knights and bishops and fight for the centre.",
        "River deltas": "Rivers drop sediment where they meet the sea and build a delta.",
        "Violin strings": "A violin has four strings tuned in fifths and played with a bow.",
        "Glass making": "Glass is made by melting sand with soda and lime in a furnace.",
        "Moon phases": "The moon waxes from new to full and wanes back over a month.",
        "Paper folding": "Origami folds a single square of paper into birds and boxes.",
        "Coffee roasting": "Roasting turns green coffee beans brown and releases their aroma.",
        "Snow crystals": "Snowflakes grow six arms as water vapour freezes onto ice.",
    }
    pairs = [
        HeadingPair(h, body, "demo", "en", "demo.txt", f"demo.txt#{n}", f"demo.txt#{n}")
        for n, (h, body) in enumerate(topics.items())
    ]
    corpora = [
        HeadingCorpus("docs", "en", "train", lambda cache: pairs),
        HeadingCorpus("docs-held-out", "en", "validation", lambda cache: pairs[1:]),
    ]
    monkeypatch.setattr(headings, "heading_corpora", lambda language: corpora)
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "cache"))
    arguments = ["rerank", "train", "--headings", "en", "--tune-layers", "1", "--out", str(out)]
    result = CliRunner().invoke(app, [*arguments, "--grpo-steps", "1"])
    assert result.exit_code == 0, result.output
    record = json.loads((out / "training.json").read_text())
    assert record["data"]["kinds"] == {"heading": 18}  # one group per heading, 8 candidates
    assert record["validation_groups"] == 2  # from the held-out corpus, a tenth as many
    assert record["config"]["reranker"]["tuned_layers"] == 1
    assert json.loads((out / "config.json").read_text())["group_size"] == 8
    assert len(list((tmp_path / "cache" / "training" / "headings").glob("*/docs.jsonl.gz"))) == 1
    corpora[0] = HeadingCorpus("docs", "en", "train", lambda cache: pairs[:5])
    monkeypatch.setenv("RAGKIT_CACHE", str(tmp_path / "other-cache"))
    few = CliRunner().invoke(app, ["rerank", "train", "--headings", "en", "--out", str(out)])
    assert few.exit_code == 2 and "no training groups could be built" in few.output
