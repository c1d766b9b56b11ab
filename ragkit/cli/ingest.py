"""``ragkit ingest``: load, chunk, embed and commit files into an index.

Example:
    $ ragkit ingest docs/ --index my-index
    $ ragkit ingest docs/ --index my-index --prune --no-wait
    $ ragkit ingest /mnt/share --index my-index --prune --max-delete 10%
    $ ragkit ingest docs/ --index my-index --include '*.md' --exclude 'drafts/*'
    $ ragkit ingest faq.csv --index my-index --text-field answer
    $ psql -At -c "select json_build_object('id', id, 'text', body) from pages" \\
        | ragkit ingest - --index my-index --source '<pages>' --prune
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from ragkit.cli.options import NEW_INDEX
from ragkit.cli.output import errors, fail, option_error, print_ingest_report
from ragkit.cli.progress import ingest_progress, progress_seconds
from ragkit.errors import RagkitError

# Which files are read and how; shared with `ragkit flows run ingest` and `flows serve`.
INCLUDE = typer.Option(
    [], "--include", help="Only files matching this glob, e.g. '*.md' (repeatable)."
)
EXCLUDE = typer.Option(
    [], "--exclude", help="Leave out files and folders matching this glob (repeatable)."
)
TEXT_FIELD = typer.Option(
    "text", "--text-field", help="Field (.json) or column (.csv, .tsv) holding the text."
)
CONFIG = typer.Option(
    None,
    "--config",
    help="Settings file (TOML) to use instead of the index folder's ragkit.toml; options "
    "given here win over it.",
)
# What ingest's progress phases show (ragkit.pipeline.ProgressCallback): read, chunk, embed,
# commit.
INGEST_STAGES = {
    "files": "files read",
    "chunk": "documents chunked",
    "embed": "chunks embedded",
    "documents": "documents committed",
}
SOURCE = typer.Option(
    None,
    "--source",
    help="With '-': the records' source, written <name> (default <records>); --prune then "
    "removes the stored records of that source missing from standard input.",
)
MAX_DELETE = typer.Option(
    None,
    "--max-delete",
    help="With --prune: remove nothing (exit 2) when more than N documents, or P% of those "
    "stored, would go, e.g. 50 or 10%.",
)
PRUNE_EMPTY = typer.Option(
    False,
    "--prune-empty",
    help="With --prune: also remove the documents of a path that yields no file now (without "
    "it an unmounted share or an emptied folder removes nothing).",
)
QUIET = typer.Option(
    False,
    "--quiet",
    "-q",
    help="No progress: neither the bars on a terminal nor, outside one, the line printed every "
    "30 s (RAGKIT_PROGRESS_SECONDS) with files read, documents chunked, chunks embedded, "
    "documents committed, rates, ETA.",
)
STRICT = typer.Option(
    False, "--strict", help="Exit 1 for unsupported file types too, not only failed ones."
)
NORMALIZATION = typer.Option(
    None,
    "--normalization",
    help="For a new index: auto (default: Arabic-script text embedded normalized, other "
    "text as written; matching keys always normalized) | post-inference (match keys only) "
    "| pre-index | off.",
)
CHUNKER = typer.Option(
    None,
    "--chunker",
    help="For a new index: adaptive (default) | fixed | sentence | recursive | structure | "
    "semantic.",
)
CHUNK_TOKENS = typer.Option(
    None, "--chunk-tokens", min=8, help="For a new index: token budget per chunk (256)."
)
CHUNK_WEIGHTS = typer.Option(
    None, "--chunk-weights", help="For a new index: adaptive metric weights, e.g. SC=1,BI=2."
)
PRECISION = typer.Option(
    None,
    "--precision",
    help="For a new index: the encoder's numbers, auto (default: int8 for all-minilm-l6-v2, "
    "fp32 for other models) | fp32 | int8 (its quantized ONNX copy: faster, vectors close to "
    "fp32's, not equal).",
)


def new_index_settings(
    normalization: str | None,
    chunker: str | None,
    chunk_tokens: int | None,
    chunk_weights: str | None,
    precision: str | None = None,
) -> dict[str, Any]:
    """The settings a new index takes from the ingest options that were given.

    Example:
        >>> new_index_settings(None, "fixed", 128, "SC=1,BI=2")
        {'chunker': 'fixed', 'chunk_tokens': 128, 'chunk_weights': {'SC': 1.0, 'BI': 2.0}}
        >>> new_index_settings(None, None, None, None, "int8")
        {'embedding_precision': 'int8'}
    """
    from ragkit.cli.chunk import parse_weights

    options = {
        "normalization": normalization,
        "chunker": chunker,
        "chunk_tokens": chunk_tokens,
        "chunk_weights": parse_weights(chunk_weights, "--chunk-weights"),
        "embedding_precision": precision,
    }
    return {name: value for name, value in options.items() if value is not None}


def ingest(
    paths: list[Path] = typer.Argument(
        ...,
        help="Files or folders to ingest (recursively), or '-': JSONL records on standard "
        "input, one object per line with id, text, and optionally metadata, title, language.",
    ),
    index: str = NEW_INDEX,
    model: str | None = typer.Option(None, "--model", help="Embedding model for a new index."),
    prune: bool = typer.Option(False, "--prune", help="Remove documents whose files are gone."),
    normalization: str | None = NORMALIZATION,
    chunker: str | None = CHUNKER,
    chunk_tokens: int | None = CHUNK_TOKENS,
    chunk_weights: str | None = CHUNK_WEIGHTS,
    precision: str | None = PRECISION,
    wait: bool = typer.Option(
        True, "--wait/--no-wait", help="When another writer holds the index: wait, or fail."
    ),
    include: list[str] = INCLUDE,
    exclude: list[str] = EXCLUDE,
    text_field: str = TEXT_FIELD,
    strict: bool = STRICT,
    config: Path | None = CONFIG,
    source: str | None = SOURCE,
    quiet: bool = QUIET,
    max_delete: str | None = MAX_DELETE,
    prune_empty: bool = PRUNE_EMPTY,
) -> None:
    """Load, chunk, embed and commit files (or JSONL records from standard input) into an
    index. Exit 1 when some files or records failed to load (unsupported file types are
    listed, and fail the run only with --strict). Compressed files (.gz, .bz2, .xz) are read
    as the file they hold."""
    from pydantic import ValidationError

    from ragkit.documents.discovery import check_apart
    from ragkit.documents.given import DEFAULT_SOURCE, check_source, jsonl_records
    from ragkit.documents.stream import timed_lines
    from ragkit.index import Index
    from ragkit.pipeline.plan import PruneGuard
    from ragkit.store.address import is_milvus

    try:
        from_stdin = check_stdin_use(paths, source, include, exclude, text_field)
        if from_stdin:
            check_source(source or DEFAULT_SOURCE)
        elif not any(path.exists() for path in paths):
            raise RagkitError(
                f"{', '.join(map(str, paths))}: no such file or folder; nothing ingested and "
                f"no index created or changed at {index}"
            )
        elif not is_milvus(index):
            check_apart(paths, index)
        if not quiet:
            progress_seconds()  # a bad RAGKIT_PROGRESS_SECONDS fails before an index is made
        PruneGuard(max_delete)  # so does a malformed --max-delete
        chosen = new_index_settings(normalization, chunker, chunk_tokens, chunk_weights, precision)
        try:
            opened = Index.open(index, create=True, model=model, config=config, **chosen)
        except ValidationError as error:
            raise option_error(error, {"embedding_precision": "--precision"}) from error
        with ingest_progress(INGEST_STAGES, quiet) as progress:
            if from_stdin:
                every = opened.settings.commit_every_seconds  # a quiet pipe still commits
                report = opened.add(
                    jsonl_records(timed_lines(sys.stdin.buffer, every)),
                    prune,
                    wait,
                    progress,
                    source or DEFAULT_SOURCE,
                    max_delete=max_delete,
                    prune_empty=prune_empty,
                )
            else:
                report = opened.ingest(
                    paths,
                    prune,
                    progress,
                    wait,
                    include=include,
                    exclude=exclude,
                    text_field=text_field,
                    max_delete=max_delete,
                    prune_empty=prune_empty,
                )
    except RagkitError as error:
        fail(error)
    except Exception:  # noqa: BLE001 - a bug, not a bad file: exit 2, never 1 ("files skipped")
        errors.print_exception()
        raise typer.Exit(2) from None
    print_ingest_report(report, strict)


def check_stdin_use(
    paths: list[Path], source: str | None, include: list[str], exclude: list[str], text_field: str
) -> bool:
    """Whether ``paths`` asks for records on standard input (``-``, alone); the options that
    only apply to one of files or records are refused with the other.

    Example:
        >>> check_stdin_use([Path("-")], "<crawl>", [], [], "text")
        True
        >>> check_stdin_use([Path("docs")], "<crawl>", [], [], "text")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: --source names the records read from standard input; give '-' as the only path
    """
    stdin = [path for path in paths if str(path) == "-"]
    if stdin and len(paths) > 1:
        raise RagkitError("'-' (records on standard input) cannot be mixed with files or folders")
    if not stdin:
        if source is not None:
            raise RagkitError(
                "--source names the records read from standard input; give '-' as the only path"
            )
        return False
    if include or exclude or text_field != "text":
        raise RagkitError(
            "--include, --exclude and --text-field choose files; records on standard input "
            "have the fields id, text, metadata, title, language"
        )
    return True
