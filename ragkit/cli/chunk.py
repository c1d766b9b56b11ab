"""``ragkit chunk FILE``: chunk one file adaptively and show what was chosen and why.

Example:
    $ ragkit chunk report.md --explain
    $ ragkit chunk notes.txt --chunker fixed --max-tokens 128
    $ ragkit chunk law.txt --explain --weights "SC=1,BI=2,ICC=1,DCC=1,RC=1"
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.rule import Rule
from rich.table import Table

from ragkit.chunking import Chunk, ChunkingRecord
from ragkit.chunking.adaptive import METRICS
from ragkit.cli.output import console, fail, option_error, plain
from ragkit.config import DEFAULT_MODEL, Settings
from ragkit.documents import LoadResult, load_file
from ragkit.embed import Encoder
from ragkit.embed.models import AUTO_MODEL, choose_model
from ragkit.errors import RagkitError
from ragkit.pipeline import DocumentChunker, chunk_embed
from ragkit.pipeline.ingest import text_by_language

RULE_WIDTH = 100  # the rule above each document's chunks spans at most this many columns


def parse_weights(spec: str | None, option: str = "--weights") -> dict[str, float] | None:
    """``"SC=1,BI=2"`` → ``{"SC": 1.0, "BI": 2.0}``; ``None`` keeps the equal default. An error
    names ``option``, the command-line option that gave ``spec``.

    Example:
        >>> parse_weights("SC=1, bi=2")
        {'SC': 1.0, 'BI': 2.0}
    """
    if not spec:
        return None
    weights: dict[str, float] = {}
    for item in spec.split(","):
        name, _, value = item.partition("=")
        try:
            weights[name.strip().upper()] = float(value)
        except ValueError as error:
            raise RagkitError(
                f"{option} {spec!r}: {item.strip()!r} is not METRIC=NUMBER (e.g. SC=1,BI=2)"
            ) from error
    return weights


def lazy_encoder(model: str) -> Callable[[], Encoder]:
    """``model``'s encoder, loaded on first call (short files never need it)."""
    loaded: list[Encoder] = []

    def encoder() -> Encoder:
        if not loaded:
            loaded.append(Encoder(model))
        return loaded[0]

    return encoder


def explain_table(record: ChunkingRecord, title: str) -> Table:
    """The chunker × metric table of an adaptive chunking record, best first, the chosen row
    marked."""
    table = Table(title=title)
    table.add_column("chunker")
    for column in (*METRICS, "score"):
        table.add_column(column, justify="right")
    rows = sorted(record.scores.items(), key=lambda item: -item[1]["score"])
    for label, scores in rows:
        cells = [f"{scores[m]:.3f}" if m in scores else "—" for m in (*METRICS, "score")]
        marker = "[bold green]✓ " if label == record.chosen else "  "
        table.add_row(f"{marker}{label}", *cells)
    return table


def print_chunking(title: str, record: ChunkingRecord) -> None:
    """Print how a document was chunked: the table and the choice (``ragkit chunk --explain``,
    ``ragkit info --document``)."""
    if not record.recorded:
        console.print(f"{title}: no chunking record (indexed before ragkit recorded one)")
        return
    if record.adaptive:
        console.print(explain_table(record, title))
        skipped = record.skipped
        console.print(
            f"chosen [bold]{record.chosen}[/] in {record.seconds:.2f} s"
            + (f" · not computed: {', '.join(skipped)}" if skipped else "")
        )
    else:
        console.print(f"{title}: chunked with [bold]{record.chosen}[/] (fixed by settings)")


def _print_chunks(chunks: list[Chunk]) -> None:
    table = Table(show_header=True)
    for column in ("#", "start", "end", "tokens", "text"):
        table.add_column(column, justify="right" if column != "text" else "left")
    for number, chunk in enumerate(chunks, start=1):
        preview = " ".join(chunk.text.split())
        preview = preview if len(preview) <= 70 else preview[:69] + "…"
        table.add_row(
            str(number), str(chunk.start), str(chunk.end), str(chunk.token_count), preview
        )
    console.print(table)


def chunk_command(
    file: Path = typer.Argument(..., help="A file ragkit can load (.txt .md .html .jsonl .pdf)."),
    explain: bool = typer.Option(False, "--explain", help="Print the chunker × metric table."),
    chunker: str | None = typer.Option(
        None, "--chunker", help="Use one chunker (fixed, sentence, recursive, structure, semantic)."
    ),
    max_tokens: int = typer.Option(256, "--max-tokens", min=8, help="Token budget per chunk."),
    weights: str | None = typer.Option(
        None, "--weights", help="Metric weights, e.g. 'SC=1,BI=2,ICC=1,DCC=1,RC=1'."
    ),
    model: str = typer.Option(
        DEFAULT_MODEL, "--model", help="Embedding model for ICC/DCC (auto: by the language)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print chunks and scores as JSON."),
) -> None:
    """Chunk FILE adaptively (or with --chunker) and print the chunks; --explain shows why."""
    try:
        if file.is_dir():
            raise RagkitError(
                f"{file}: a folder; `ragkit chunk` takes one file (`ragkit ingest` takes folders)"
            )
        result = LoadResult()
        load_file(file, result)
        if model == AUTO_MODEL:
            model, _ = choose_model(text_by_language(result.documents))
        try:
            settings = Settings(
                chunker=chunker or "adaptive",
                chunk_tokens=max_tokens,
                chunk_weights=parse_weights(weights),
            )
        except ValidationError as error:
            raise option_error(
                error, {"chunk_tokens": "--max-tokens", "chunk_weights": "--weights"}
            ) from error
        embed = chunk_embed(settings, lazy_encoder(model))
        chunked = DocumentChunker(settings, embed=embed)(result.documents)
        records = []
        for document, (chunks, record) in zip(result.documents, chunked, strict=True):
            selection = None if chunker else record
            if as_json:
                records.append(
                    {
                        "document": document.key,
                        "chunks": [c.__dict__ | {"block_ids": list(c.block_ids)} for c in chunks],
                        "selection": selection.as_dict() if selection else None,
                    }
                )
                continue
            console.print(Rule(plain(document.key)), width=min(console.width, RULE_WIDTH))
            if explain and selection is not None:
                print_chunking(f"{document.key} ({document.language})", selection)
            _print_chunks(chunks)
        if as_json:
            console.print_json(json.dumps(records, ensure_ascii=False))
    except RagkitError as error:
        fail(error)
