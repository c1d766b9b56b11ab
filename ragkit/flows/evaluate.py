"""Prefect flow: evaluate retrieval on a BEIR-layout folder.

``load`` reads the queries and judgments, the ingest flow (:mod:`flows.ingest`, as a subflow)
builds the index from ``corpus.jsonl``, one ``score`` task per search mode runs the queries
(:func:`ragkit.evaluate.score`, the code ``ragkit eval`` runs), and a markdown artifact
(``ragkit-evaluate``) holds the metrics table.

Run::

    ragkit flows run evaluate ../shared/data/beir/cranfield --model all-minilm-l6-v2 --mode all

Example:
    >>> evaluate_flow.name
    'ragkit-evaluate'
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from ragkit.config import DEFAULT_MODEL
from ragkit.evaluate import EvalReport, Judgments, load_judgments, score
from ragkit.flows.ingest import ingest_flow
from ragkit.index import Index
from ragkit.search.fusion import SearchMode


@task(name="load-judgments", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE)
def load(dataset: str) -> Judgments:
    return load_judgments(Path(dataset))


@task(name="score", cache_policy=NO_CACHE)
def score_mode(
    index: str, judgments: Judgments, mode: SearchMode, seconds: dict[str, float]
) -> EvalReport:
    opened = Index.open(index)
    try:
        return score(opened, judgments, mode, seconds)
    finally:
        opened.close()


def metrics_markdown(reports: list[EvalReport]) -> str:
    """The artifact: one row per mode.

    Example:
        >>> report = EvalReport("cranfield", "m", "dense", 225, 0.3641, 0.77, 0.52)
        >>> metrics_markdown([report]).splitlines()[-1]
        '| cranfield | m | dense | 225 | 0.364 | 0.770 | 0.520 |'
    """
    lines = [
        "| dataset | model | mode | queries | nDCG@10 | Recall@100 | MRR@10 |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.dataset} | {r.model} | {r.mode} | {r.queries} | {r.ndcg_at_10:.3f} | "
        f"{r.recall_at_100:.3f} | {r.mrr_at_10:.3f} |"
        for r in reports
    ]
    return "\n".join(lines)


@flow(name="ragkit-evaluate")
def evaluate_flow(
    dataset: str,
    model: str | None = None,
    modes: list[SearchMode] | None = None,
    index: str | None = None,
) -> list[EvalReport]:
    """nDCG@10, Recall@100 and MRR@10 per mode (default ``dense``); the index is kept in
    ``index`` when given (a later run then embeds nothing), else in a temporary folder."""
    chosen = model or DEFAULT_MODEL
    judgments = load(dataset)
    with tempfile.TemporaryDirectory(prefix="ragkit-eval-") as scratch:
        folder = index or str(Path(scratch) / "index")
        ingest = ingest_flow(paths=[str(judgments.corpus)], index=folder, model=chosen)
        seconds = {f"ingest_{k}": v for k, v in ingest.seconds.items()}
        futures = [
            score_mode.submit(folder, judgments, mode, seconds) for mode in modes or ["dense"]
        ]
        reports = [future.result() for future in futures]
    create_markdown_artifact(
        key="ragkit-evaluate",
        markdown=metrics_markdown(reports),
        description=f"ragkit evaluation on {judgments.dataset}",
    )
    return reports
