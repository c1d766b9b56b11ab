"""``ragkit flows``: run ragkit's Prefect flows once, or serve the ingest flow on a schedule.

The flows live in
the top-level ``flows`` package, imported only when a command runs (Prefect is slow to load).

Example:
    $ ragkit flows run ingest docs/ --index my-index
    $ ragkit flows run ingest docs/ --index my-index --runner dask --dask-address tcp://10.0.0.5:8786
    $ ragkit flows run evaluate ../shared/data/beir/cranfield --model all-minilm-l6-v2 --mode all
    $ PREFECT_API_URL=http://127.0.0.1:4200/api ragkit flows serve --index my-index --watch docs/
"""

from __future__ import annotations

from pathlib import Path

import typer

from ragkit.cli.help import ReadableGroup
from ragkit.cli.ingest import (
    CHUNK_TOKENS,
    CHUNK_WEIGHTS,
    CHUNKER,
    EXCLUDE,
    INCLUDE,
    NORMALIZATION,
    STRICT,
    TEXT_FIELD,
    new_index_settings,
)
from ragkit.cli.options import NEW_INDEX
from ragkit.cli.output import fail, print_eval_reports, print_ingest_report
from ragkit.errors import RagkitError

flows_app = typer.Typer(
    cls=ReadableGroup, help="Prefect flows: run once, or serve on a cron schedule."
)
run_app = typer.Typer(
    cls=ReadableGroup, help="Run a flow once (on the temporary server, or PREFECT_API_URL)."
)
flows_app.add_typer(run_app, name="run")

RUNNER_HELP = "local (threads in this process) | dask (prefect-dask DaskTaskRunner)."
ADDRESS_HELP = "Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a new LocalCluster)."


@run_app.command("ingest")
def run_ingest(
    paths: list[Path] = typer.Argument(..., help="Files or folders to ingest (recursively)."),
    index: str = NEW_INDEX,
    model: str | None = typer.Option(None, "--model", help="Embedding model for a new index."),
    prune: bool = typer.Option(False, "--prune", help="Remove documents whose files are gone."),
    runner: str = typer.Option("local", "--runner", help=RUNNER_HELP),
    dask_address: str | None = typer.Option(None, "--dask-address", help=ADDRESS_HELP),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Threads (local) or LocalCluster workers (dask, 2)."
    ),
    normalization: str | None = NORMALIZATION,
    chunker: str | None = CHUNKER,
    chunk_tokens: int | None = CHUNK_TOKENS,
    chunk_weights: str | None = CHUNK_WEIGHTS,
    include: list[str] = INCLUDE,
    exclude: list[str] = EXCLUDE,
    text_field: str = TEXT_FIELD,
    strict: bool = STRICT,
) -> None:
    """Run the ingest flow once; prints what `ragkit ingest` prints, with the same exit codes."""
    try:
        from ragkit.flows.ingest import run_ingest as run

        report = run(
            [str(p) for p in paths],
            str(index),
            runner=runner,
            address=dask_address,
            workers=workers,
            prune=prune,
            model=model,
            settings=new_index_settings(normalization, chunker, chunk_tokens, chunk_weights),
            include=include,
            exclude=exclude,
            text_field=text_field,
        )
    except RagkitError as error:
        fail(error)
    print_ingest_report(report, strict)


@run_app.command("evaluate")
def run_evaluate(
    dataset: Path = typer.Argument(..., help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/."),
    model: str | None = typer.Option(None, "--model", help="Embedding model."),
    mode: list[str] = typer.Option(["dense"], "--mode", help="dense | sparse | hybrid | all."),
    keep_index: str | None = typer.Option(
        None, "--keep-index", metavar="INDEX", help="Keep the index here (folder or Milvus)."
    ),
) -> None:
    """Run the evaluation flow once: ingest (as a subflow), score each mode, publish a table."""
    from ragkit.cli.evaluate import search_modes

    try:
        from ragkit.flows.evaluate import evaluate_flow

        reports = evaluate_flow(
            dataset=str(dataset),
            model=model,
            modes=search_modes(mode),
            index=keep_index,
        )
    except RagkitError as error:
        fail(error)
    print_eval_reports(reports)


@flows_app.command("serve")
def serve(
    index: str = NEW_INDEX,
    watch: list[Path] = typer.Option(..., "--watch", help="Folder(s) to re-ingest (repeatable)."),
    cron: str = typer.Option("0 2 * * *", "--cron", help="When to run (cron, server time zone)."),
    name: str | None = typer.Option(None, "--name", help="Deployment name (default: index name)."),
    model: str | None = typer.Option(None, "--model", help="Embedding model for a new index."),
    prune: bool = typer.Option(True, "--prune/--no-prune", help="Drop documents of gone files."),
    normalization: str | None = NORMALIZATION,
    chunker: str | None = CHUNKER,
    chunk_tokens: int | None = CHUNK_TOKENS,
    chunk_weights: str | None = CHUNK_WEIGHTS,
    include: list[str] = INCLUDE,
    exclude: list[str] = EXCLUDE,
    text_field: str = TEXT_FIELD,
) -> None:
    """Register a deployment that re-ingests the watched folders incrementally on a cron
    schedule, and serve it (blocks; stop with Ctrl-C). Needs `prefect server start` and
    PREFECT_API_URL pointing at it."""
    try:
        from ragkit.flows.ingest import serve_ingest

        files = {
            "include": include,
            "exclude": exclude,
            "text_field": text_field,
            "settings": new_index_settings(normalization, chunker, chunk_tokens, chunk_weights),
        }
        serve_ingest(index, watch, cron, name, model, prune, files)
    except RagkitError as error:
        fail(error)
