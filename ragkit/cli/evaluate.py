"""``ragkit eval``: retrieval quality on a BEIR-layout dataset.

Example:
    $ ragkit eval ../shared/data/beir/cranfield --mode all --keep-index /tmp/cranfield
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ragkit.cli.ingest import INGEST_STAGES
from ragkit.cli.output import fail, print_eval_reports, progress_bar, stage_progress
from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from ragkit.search.fusion import SearchMode


def eval_command(
    dataset: Path = typer.Argument(
        ..., help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv."
    ),
    model: str | None = typer.Option(None, "--model", help="Embedding model."),
    mode: list[str] = typer.Option(
        ["dense"], "--mode", help="dense | sparse | hybrid | all (repeatable)."
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
    fusion: str | None = typer.Option(
        None, "--fusion", help="weighted | rrf for hybrid (default: the index's setting)."
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Write the reports as JSON here."),
    feedback: str | None = typer.Option(
        None, "--feedback", help="off | sparse | dense | both | auto (default: the index's)."
    ),
    document_evidence: str | None = typer.Option(
        None, "--document-evidence", help="on | off | auto (default: the index's)."
    ),
    phrase_evidence: str | None = typer.Option(
        None, "--phrase-evidence", help="on | off | auto (default: the index's)."
    ),
) -> None:
    """Evaluate retrieval on a BEIR-layout dataset: nDCG@10, Recall@100, MRR@10 per mode."""
    from ragkit.config import DEFAULT_MODEL
    from ragkit.evaluate import evaluate

    try:
        if fusion not in (None, "rrf", "weighted"):
            raise RagkitError(f"--fusion {fusion!r}: use weighted or rrf")
        for option, value, choices in (
            ("--feedback", feedback, ("auto", "off", "sparse", "dense", "both")),
            ("--document-evidence", document_evidence, ("auto", "off", "on")),
            ("--phrase-evidence", phrase_evidence, ("auto", "off", "on")),
        ):
            if value is not None and value not in choices:
                raise RagkitError(f"{option} {value!r}: use one of {', '.join(choices)}")
        with progress_bar() as bar:
            reports = evaluate(
                dataset,
                model or DEFAULT_MODEL,
                keep_index,
                search_modes(mode),
                fusion,  # type: ignore[arg-type]
                stage_progress(bar, INGEST_STAGES),
                **({"chunker": chunker} if chunker else {}),
                **({"feedback": feedback} if feedback else {}),
                **({"document_evidence": document_evidence} if document_evidence else {}),
                **({"phrase_evidence": phrase_evidence} if phrase_evidence else {}),
            )
    except RagkitError as error:
        fail(error)
    print_eval_reports(reports)
    if json_out:
        json_out.write_text(json.dumps([r.as_dict() for r in reports], indent=2))


def search_modes(requested: list[str]) -> list[SearchMode]:
    """``--mode`` values checked; ``all`` means sparse, dense and hybrid."""
    from ragkit.search.fusion import SEARCH_MODES

    modes = list(SEARCH_MODES[::-1]) if "all" in requested else list(dict.fromkeys(requested))
    unknown = [m for m in modes if m not in SEARCH_MODES]
    if unknown:
        raise RagkitError(f"--mode {unknown[0]!r}: use dense, sparse, hybrid or all")
    return modes  # type: ignore[return-value]
