"""``ragkit ls``, ``ragkit rm`` and ``ragkit export``: what an index holds, removed or written out.

Example:
    $ ragkit ls --index my-index --glob 'docs/*.md'
    $ ragkit ls --index my-index --duplicates
    $ ragkit rm --index my-index docs/old.md 'drafts/*'
    $ ragkit export --index my-index --output chunks.jsonl --vectors
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from ragkit.cli.options import INDEX
from ragkit.cli.output import console, counted, fail, plain
from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from ragkit.pipeline.near_duplicates import DuplicateGroup


def ls(
    index: str = INDEX,
    glob: str | None = typer.Option(
        None, "--glob", help="Only documents whose key or source matches, e.g. 'docs/*.md'."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print a JSON array, one object per document."
    ),
    duplicates: bool = typer.Option(
        False,
        "--duplicates",
        help="List the groups of exact copies and near-duplicates instead: group key, kind, "
        "members.",
    ),
) -> None:
    """List the documents of an index: key, language, chunks, characters, title (or, with
    --duplicates, its groups of duplicate documents)."""
    from ragkit.index import Index

    try:
        with Index.open(index) as opened:
            if duplicates:
                groups = opened.duplicates()
                if glob is not None:  # the groups with a document that --glob lists
                    listed = {entry.key for entry in opened.documents(glob)}
                    groups = [g for g in groups if listed.intersection(g.members)]
                _list_duplicates(groups, as_json)
                return
            entries = opened.documents(glob)
    except RagkitError as error:
        fail(error)
    if as_json:
        typer.echo(json.dumps([e.as_dict() for e in entries], ensure_ascii=False, indent=2))
        return
    table = Table("key", "language", "chunks", "characters", "title")
    for entry in entries:
        table.add_row(
            plain(entry.key),
            entry.language,
            str(entry.chunks),
            str(entry.characters),
            plain(entry.title),
        )
    console.print(table)
    console.print(counted(len(entries), "document"))


def _list_duplicates(groups: list[DuplicateGroup], as_json: bool) -> None:
    """Print the groups of duplicate documents: group key, kind, size, the other members."""
    if as_json:
        typer.echo(json.dumps([g.as_dict() for g in groups], ensure_ascii=False, indent=2))
        return
    table = Table("group", "kind", "documents", "members")
    for group in groups:
        others = Text("\n").join(plain(m) for m in group.members if m != group.key)
        table.add_row(plain(group.key), group.kind, str(len(group.members)), others)
    console.print(table)
    near = sum(g.kind == "near" for g in groups)
    console.print(
        f"{counted(len(groups) - near, 'group')} of exact copies · "
        f"{counted(near, 'near-duplicate group')} · "
        f"{counted(sum(len(g.members) for g in groups), 'document')}"
    )


def rm(
    patterns: list[str] = typer.Argument(
        ..., help="Document keys or sources, or globs such as 'docs/*.md' (quote them)."
    ),
    index: str = INDEX,
    wait: bool = typer.Option(
        True, "--wait/--no-wait", help="When another writer holds the index: wait, or fail."
    ),
    exact: bool = typer.Option(
        False, "--id", help="Read each argument as one document id, never as a glob or source."
    ),
) -> None:
    """Remove documents (chunks, vectors, BM25 terms) in one new generation; nothing is removed
    when a pattern (or, with --id, an id) matches no document."""
    from ragkit.index import Index

    try:
        with Index.open(index) as opened:
            remove = opened.delete if exact else opened.delete_matching
            removed = remove(patterns, wait=wait)
            generation = opened.store.generation
    except RagkitError as error:
        fail(error)
    for key in removed:
        console.print(plain(f"removed {key}"), soft_wrap=True)
    console.print(f"{counted(len(removed), 'document')} removed · generation {generation}")


def export(
    index: str = INDEX,
    output: Path | None = typer.Option(
        None, "--output", "-o", help="File to write (default: standard output)."
    ),
    format: str = typer.Option("jsonl", "--format", help="jsonl: one JSON object per chunk."),
    vectors: bool = typer.Option(False, "--vectors", help="Include each chunk's embedding."),
) -> None:
    """Write every chunk with its offsets, language and metadata (and vector) as JSON lines."""
    from ragkit.index import Index

    try:
        with Index.open(index) as opened:
            written = opened.export(output or sys.stdout, format=format, vectors=vectors)
    except RagkitError as error:
        fail(error)
    if output is not None:
        console.print(
            f"{counted(written, 'chunk')} written to {output}", soft_wrap=True, markup=False
        )
