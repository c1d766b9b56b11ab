"""``ragkit doctor``: verify an index, and repair what can be rebuilt (a folder's FAISS and
BM25 from SQLite; a Milvus index's hidden rows of unfinished writes deleted). The last line
says what was checked, as the backend checks it.

Example:
    $ ragkit doctor --index my-index --repair
"""

from __future__ import annotations

import typer

from ragkit.cli.options import INDEX
from ragkit.cli.output import console, counted, fail, plain
from ragkit.errors import RagkitError


def doctor(
    index: str = INDEX,
    fix: bool = typer.Option(
        False,
        "--repair",
        help="Repair what can be: a folder's FAISS and BM25 rebuilt from SQLite; "
        "a Milvus index's hidden rows of unfinished writes deleted.",
    ),
    again: bool = typer.Option(
        False,
        "--reanalyze",
        help="Re-derive languages, matching keys and sparse terms with this version's rules "
        "(keeps the vectors; an index built before an update matches as new ones do).",
    ),
) -> None:
    """Verify an index: a folder's checksums and SQLite ↔ FAISS ↔ BM25 ids; a Milvus index's
    document, chunk and text rows. Exit 1 when problems remain."""
    from ragkit.index import Index
    from ragkit.store.address import diagnose, repair

    try:
        found = repair(index) if fix else diagnose(index)
        if again and not found.problems:
            redone = Index.open(index).reanalyze()
            changes = ", ".join(f"{k} {v}" for k, v in redone.languages.items()) or "none"
            console.print(
                f"re-analyzed {counted(redone.documents, 'document')} · {redone.changed} changed · "
                f"languages changed: {changes} · chunks re-embedded {redone.chunks_reembedded} "
                f"· generation {redone.generation}",
                soft_wrap=True,
            )
            found = diagnose(index)
    except RagkitError as error:
        fail(error)
    console.print(
        f"generation {found.generation} · documents {found.counts.get('documents', 0)} · "
        f"chunks {found.counts.get('chunks', 0)}"
    )
    for line in found.repaired:
        console.print("[green]repaired:[/]", plain(line), soft_wrap=True)
    for line in found.notes:
        console.print("note:", plain(line), soft_wrap=True)
    for line in found.problems:
        console.print("[red]problem:[/]", plain(line), soft_wrap=True)
    if found.problems:
        console.print(f"[yellow]{found.hint}[/]")
        raise typer.Exit(1)
    console.print("[green]ok[/]:", plain(found.checked), soft_wrap=True)
