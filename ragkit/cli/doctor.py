"""``ragkit doctor``: verify an index folder, and repair what SQLite can rebuild.

Example:
    $ ragkit doctor --index my-index --repair
"""

from __future__ import annotations

from pathlib import Path

import typer

from ragkit.cli.output import console, fail
from ragkit.errors import RagkitError


def doctor(
    index: Path = typer.Option(..., "--index", help="Index folder."),
    fix: bool = typer.Option(False, "--repair", help="Rebuild FAISS and BM25 from SQLite."),
) -> None:
    """Verify checksums and SQLite ↔ FAISS ↔ BM25 consistency. Exit 1 when problems remain."""
    from ragkit.store.doctor import diagnose, repair

    try:
        found = repair(index) if fix else diagnose(index)
    except RagkitError as error:
        fail(error)
    console.print(
        f"generation {found.generation} · documents {found.counts.get('documents', 0)} · "
        f"chunks {found.counts.get('chunks', 0)}"
    )
    for line in found.repaired:
        console.print(f"[green]repaired:[/] {line}", soft_wrap=True)
    for line in found.notes:
        console.print(f"note: {line}", soft_wrap=True, markup=False)
    for line in found.problems:
        console.print(f"[red]problem:[/] {line}", soft_wrap=True)
    if found.problems:
        console.print(f"[yellow]{found.hint}[/]")
        raise typer.Exit(1)
    console.print("[green]ok[/]: checksums and SQLite ↔ FAISS ↔ BM25 ids agree")
