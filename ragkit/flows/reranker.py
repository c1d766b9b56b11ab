"""Prefect flow: train the groupwise reranker (synthetic + judged groups → SFT → GRPO).

One task runs :func:`ragkit.training.train.train_reranker` (the library does the work; this
module only schedules it and reports); a markdown artifact records the validation curve and
the time per stage.

Run (each BEIR folder gives synthetic groups from its corpus and, when it has
``qrels/test.tsv``, judged groups from its queries)::

    .venv/bin/python -m flows.reranker ../shared/data/beir/cranfield ../shared/data/beir/cisi

Example:
    >>> train_reranker_flow.name
    'ragkit-reranker'
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact

from ragkit.training.train import TrainConfig, TrainResult, train_reranker


@task(name="train-reranker")
def train(config: TrainConfig) -> TrainResult:
    logger = get_run_logger()

    def progress(stage: str, done: int, total: int) -> None:
        if done == total or done % 50 == 0:
            logger.info("%s %d/%d", stage, done, total)

    return train_reranker(config, progress)


def summary(result: TrainResult) -> str:
    """Markdown: validation nDCG@10 per stage and seconds per stage."""
    rows = "\n".join(f"| {s} | {n} | {v:.4f} |" for s, n, v in result.validation)
    seconds = ", ".join(f"{k} {v:.0f} s" for k, v in result.seconds.items())
    return (
        f"## Reranker training → `{result.output}`\n\n{result.groups} training groups, "
        f"{result.validation_groups} held out; {seconds}\n\n"
        f"| stage | step | held-out validation nDCG@10 |\n|---|---|---|\n{rows}\n"
    )


@flow(name="ragkit-reranker", log_prints=True)
def train_reranker_flow(
    corpora: list[Path],
    judged: list[Path] | None = None,
    output: Path = Path("reranker"),
    max_documents: int | None = 700,
    grpo_steps: int = 100,
    seed: int = 13,
) -> str:
    """Train, save into ``output`` and publish a summary artifact; returns the folder."""
    config = TrainConfig(
        corpora=corpora,
        judged=judged or [],
        output=output,
        max_documents=max_documents,
        grpo_steps=grpo_steps,
        seed=seed,
    )
    result = train(config)
    create_markdown_artifact(summary(result), key="ragkit-reranker-training")
    return str(result.output)


def main(arguments: list[str]) -> None:
    """``python -m flows.reranker BEIR_DIR…``: train on each folder's corpus (synthetic
    groups) and on its judged queries where it has qrels; print the result."""
    folders = [Path(p) for p in arguments]
    judged = [f for f in folders if (f / "qrels" / "test.tsv").exists()]
    print(train_reranker_flow(folders, judged=judged))
