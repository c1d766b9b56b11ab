"""``ragkit eval``: retrieval quality on a BEIR-layout dataset.

Example:
    $ ragkit eval ../shared/data/beir/cranfield --mode all --keep-index /tmp/cranfield
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ragkit.cli.ingest import INGEST_STAGES, PRECISION
from ragkit.cli.output import (
    fail,
    option_error,
    print_eval_reports,
    progress_bar,
    stage_progress,
)
from ragkit.cli.search_options import with_search_options
from ragkit.errors import RagkitError
from ragkit.query import SearchOptions
from ragkit.query.options import choices

if TYPE_CHECKING:
    from ragkit.search.fusion import SearchMode


@with_search_options(only=("fusion", "feedback", "document_evidence", "phrase_evidence"))
def eval_command(
    dataset: Path = typer.Argument(
        ..., help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv."
    ),
    model: str | None = typer.Option(None, "--model", help="Embedding model."),
    mode: list[str] = typer.Option(
        ["dense"], "--mode", help=f"{' | '.join(choices('mode'))} | all (repeatable)."
    ),
    keep_index: str | None = typer.Option(
        None,
        "--keep-index",
        metavar="INDEX",
        help="Build (or reuse) the index here: a folder, milvus://… or milvus-lite://….",
    ),
    chunker: str | None = typer.Option(
        None, "--chunker", help="Build the index with one chunker instead of adaptive."
    ),
    precision: str | None = PRECISION,
    json_out: Path | None = typer.Option(None, "--json", help="Write the reports as JSON here."),
    *,
    options: SearchOptions,
) -> None:
    """Evaluate retrieval on a BEIR-layout dataset: nDCG@10, Recall@100, MRR@10 per mode."""
    from pydantic import ValidationError

    from ragkit.config import DEFAULT_MODEL
    from ragkit.evaluate import evaluate

    try:
        query_settings = options.model_dump(
            include={"feedback", "document_evidence", "phrase_evidence"}, exclude_none=True
        )
        with progress_bar() as bar:
            reports = evaluate(
                dataset,
                model or DEFAULT_MODEL,
                keep_index,
                search_modes(mode),
                options.fusion,
                stage_progress(bar, INGEST_STAGES),
                **({"chunker": chunker} if chunker else {}),
                **({"embedding_precision": precision} if precision else {}),
                **query_settings,
            )
    except ValidationError as error:
        fail(option_error(error, {"embedding_precision": "--precision"}))
    except RagkitError as error:
        fail(error)
    print_eval_reports(reports)
    if json_out:
        json_out.write_text(json.dumps([r.as_dict() for r in reports], indent=2))


def search_modes(requested: list[str]) -> list[SearchMode]:
    """``--mode`` values checked; ``all`` means sparse, dense and hybrid."""
    known = choices("mode")
    modes = list(known[::-1]) if "all" in requested else list(dict.fromkeys(requested))
    unknown = [m for m in modes if m not in known]
    if unknown:
        raise RagkitError(f"--mode {unknown[0]!r}: use {', '.join(known)} or all")
    return modes  # type: ignore[return-value]
