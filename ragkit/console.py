"""Consoles and the progress bar shared by ragkit's commands (rich).

Example:
    >>> with progress_bar() as bar:
    ...     task = bar.add_task("work", total=2)
    ...     bar.update(task, completed=2)
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

errors = Console(stderr=True)


def progress_bar() -> Progress:
    """A transient ``description ▕bar▏ done/total`` bar on standard error."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=errors,
        transient=True,
    )
