"""``ragkit rerank``: train a groupwise reranker and rank candidates with one.

Example:
    $ ragkit rerank train --corpus ../shared/data/beir/cranfield --max-documents 700 --out my-reranker
    $ ragkit rerank train --corpus my-beir-set --judged my-beir-set --out my-reranker
    $ ragkit rerank train --headings ar --backbone multilingual-e5-small --tune-layers 2 \
        --language ar --out arabic-reranker
    $ ragkit rerank score "wing flutter" notes/*.txt --model my-reranker
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ragkit.cli.help import ReadableGroup
from ragkit.cli.output import console, fail, progress_bar, read_text_file, stage_progress
from ragkit.errors import RagkitError

rerank_app = typer.Typer(cls=ReadableGroup, help="Train and use ragkit's groupwise reranker.")


@rerank_app.command("train")
def train(
    corpus: list[Path] = typer.Option(
        [], "--corpus", help="BEIR corpus.jsonl (or a folder) for synthetic groups; repeatable."
    ),
    judged: list[Path] = typer.Option(
        [],
        "--judged",
        help="BEIR folder with queries.jsonl + qrels/test.tsv: groups from its judged queries "
        "over a hybrid index of its corpus (built once under OUT/first-stage); repeatable.",
    ),
    headings: list[str] = typer.Option(
        [],
        "--headings",
        metavar="LANG",
        help="Heading→passage groups of this language (documentation sections, hadith books; "
        "whole corpora held out for validation). Built once per backbone and cached; the first "
        "build reads the corpora's packages and takes minutes to tens of minutes. Repeatable.",
    ),
    out: Path = typer.Option(..., "--out", help="Folder for model.safetensors + config.json."),
    objective: str = typer.Option("groupwise", help="groupwise (SFT + GRPO) | pointwise (BCE)."),
    max_documents: int | None = typer.Option(
        None, "--max-documents", min=2, help="Seeded sample of documents per corpus."
    ),
    max_groups: int | None = typer.Option(None, "--max-groups", min=1, help="Cap on groups."),
    grpo_steps: int = typer.Option(100, "--grpo-steps", min=0, help="GRPO steps after SFT."),
    backbone: str = typer.Option(
        "all-minilm-l6-v2",
        "--backbone",
        help="Encoder whose token states the reranker reads: all-minilm-l6-v2 (English) or "
        "multilingual-e5-small.",
    ),
    tune_layers: int = typer.Option(
        0,
        "--tune-layers",
        min=0,
        help="Train the backbone's top N layers too (their states below are cached once).",
    ),
    language: str = typer.Option("en", "--language", help="Language of the training text."),
    seed: int = typer.Option(13, "--seed", help="Seed for data, initialisation and sampling."),
) -> None:
    """Synthetic, heading and judged groups → SFT warm start → GRPO; prints validation nDCG@10.

    GRPO's rewards come from the judged groups when ``--judged`` is given.
    """
    from ragkit.rerank.config import RerankerConfig
    from ragkit.training.train import TrainConfig, train_reranker

    try:
        config = TrainConfig(
            corpora=corpus,
            judged=judged,
            headings=headings,
            output=out,
            objective=objective,
            max_documents=max_documents,
            max_groups=max_groups,
            grpo_steps=grpo_steps,
            reranker=RerankerConfig(backbone=backbone, tuned_layers=tune_layers),
            language=language,
            seed=seed,
        )
    except ValueError as error:
        fail(RagkitError(str(error)))
    with progress_bar() as bar:
        try:
            result = train_reranker(config, stage_progress(bar))
        except RagkitError as error:
            fail(error)
    table = Table("stage", "step", "validation nDCG@10 (held-out groups)")
    for stage, step, value in result.validation:
        table.add_row(stage, str(step), f"{value:.4f}")
    console.print(table)
    seconds = ", ".join(f"{k} {v:.0f} s" for k, v in result.seconds.items())
    console.print(f"{result.groups} training groups · {seconds} · saved to {result.output}")


@rerank_app.command("score")
def score(
    query: str = typer.Argument(..., help="The query."),
    files: list[Path] = typer.Argument(..., help="Candidate text files."),
    model: str | None = typer.Option(None, "--model", help="Shipped model name or folder."),
) -> None:
    """Rank text files for a query with the groupwise reranker (best first)."""
    from ragkit.rerank.reranker import Reranker

    try:
        texts = [read_text_file(file) for file in files]
        ranked = Reranker.load(model).rank(query, texts)
    except RagkitError as error:
        fail(error)
    table = Table("rank", "score", "file")
    for position, candidate in enumerate(ranked, start=1):
        table.add_row(str(position), f"{candidate.score:.4f}", str(files[candidate.index]))
    console.print(table)
