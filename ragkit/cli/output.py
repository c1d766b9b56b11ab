"""What every command prints: the two consoles, the progress bar, errors and shared tables.

One way to fail: :func:`fail` prints ``error: …`` on standard error and exits with the error's
``exit_code``: 2, or 3 when the index's backend cannot answer now
(:class:`~ragkit.errors.BackendUnavailableError`; exit 1 is reserved for "done, but some files
failed to load" and "problems remain").

Example:
    >>> with progress_bar() as bar:
    ...     task = bar.add_task("work", total=2)
    ...     bar.update(task, completed=2)
    >>> import typer
    >>> try:
    ...     fail(RagkitError("index x: missing"))
    ... except typer.Exit as stop:
    ...     stop.exit_code
    2
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console, ConsoleDimensions
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.table import Table
from rich.text import Text

from ragkit.errors import RagkitError, validation_message

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ragkit.evaluate import EvalReport
    from ragkit.pipeline import IngestReport

# Control characters a terminal acts on (C0 but tab and newline, DEL, C1, line and paragraph
# separators, bidi embeddings, overrides and isolates); line breaks and tabs as well in values.
_TERMINAL_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(f"[{_TERMINAL_CONTROLS}]")
_CONTROLS_AND_BREAKS = re.compile(f"[\t\n{_TERMINAL_CONTROLS}]")


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def printable(text: str) -> str:
    r"""``text`` as one line that only prints: control characters — terminal escapes, NUL,
    line breaks, bidi overrides — become escapes, so document text and file names can neither
    drive the terminal nor forge lines of a report.

    Example:
        >>> printable("a\x1b[2Jb\u202ec\nd")
        'a\\x1b[2Jb\\u202ec\\nd'
    """
    return _CONTROLS_AND_BREAKS.sub(_escape, text)


def counted(number: int, noun: str) -> str:
    """``number`` with ``noun`` in the singular or the plural (an added ``s``).

    Example:
        >>> counted(1, "document"), counted(3, "chunk"), counted(0, "document")
        ('1 document', '3 chunks', '0 documents')
    """
    return f"{number} {noun}{'' if number == 1 else 's'}"


def plain(text: str) -> Text:
    """``text`` as a printable cell or line: escaped (:func:`printable`), never read as markup
    (a document id like ``[/]`` prints as it is)."""
    return Text(printable(text))


UNCUT_WIDTH = 4096  # columns of a console that is not a terminal (and no COLUMNS is set)


class SafeConsole(Console):
    """A rich console that shows control characters in every string it prints as escapes
    (line breaks and tabs of ragkit's own messages stay): whatever reaches it cannot clear the
    screen, set the clipboard (OSC 52) or reorder a line."""

    def render_str(self, text: str, *args: Any, **options: Any) -> Text:
        return super().render_str(_CONTROLS.sub(_escape, text), *args, **options)

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size; outside a terminal (a pipe, a log) :data:`UNCUT_WIDTH` columns
        unless ``COLUMNS`` says otherwise, so keys and paths in tables print whole, not cut
        to 80 columns with an ellipsis."""
        measured = Console.size.fget(self)  # type: ignore[attr-defined]
        if self._width is None and not self.is_terminal and "COLUMNS" not in self._environ:
            return ConsoleDimensions(UNCUT_WIDTH, measured.height)
        return measured

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


console = SafeConsole()
errors = SafeConsole(stderr=True)


class RateColumn(ProgressColumn):
    """Items per second of a task, blank until rich has measured it."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f}/s", style="progress.data.speed")


class RemainingColumn(ProgressColumn):
    """Time left for a task (``0:02:05``), blank until rich has measured its rate."""

    def render(self, task: Task) -> Text:
        left = task.time_remaining
        text = "" if left is None or task.finished else str(timedelta(seconds=round(left)))
        return Text(text, style="progress.remaining")


def progress_bar(speed_window: float = 30.0) -> Progress:
    """A transient ``description ▕bar▏ done/total rate/s time-left`` bar on standard error;
    it draws nothing when standard error is not a terminal (logs, pipes). Rates are measured
    over the last ``speed_window`` seconds (longer for stages that move in steps)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        RemainingColumn(),
        console=errors,
        transient=True,
        disable=not errors.is_terminal,  # not even the blank line a stopped display leaves
        speed_estimate_period=speed_window,
    )


def stage_progress(
    bar: Progress, labels: Mapping[str, str] | None = None
) -> Callable[[str, int, int], None]:
    """A ``(stage, done, total)`` callback drawing one task per stage on ``bar``, described by
    ``labels`` (default: the stage's name); a total of 0 is unknown.

    Example:
        >>> with progress_bar() as bar:
        ...     report = stage_progress(bar, {"embed": "embedding chunks"})
        ...     report("embed", 3, 10)
        >>> [(task.description, task.completed, task.total) for task in bar.tasks]
        [('embedding chunks', 3, 10)]
    """
    tasks: dict[str, TaskID] = {}

    def report(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            description = (labels or {}).get(stage, stage)
            tasks[stage] = bar.add_task(description, total=total or None)
        bar.update(tasks[stage], completed=done, total=total or None)

    return report


def fail(error: RagkitError) -> NoReturn:
    """Print ``error`` on standard error and exit with its ``exit_code`` (2; 3 for a backend
    that cannot answer now)."""
    errors.print("[bold red]error:[/]", plain(str(error)), soft_wrap=True)
    raise typer.Exit(error.exit_code) from error


def read_text_file(path: Path) -> str:
    """The text of the file at ``path`` decoded as ingest decodes it (UTF-8 with or without a
    BOM, or UTF-16 with one; line ends kept as written), so offsets match the spans a search
    reports; or a :class:`RagkitError` naming it and why.

    Example:
        >>> read_text_file(Path("no such notes.txt"))
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: no such notes.txt: no such file (give a text file, or - to read standard input)
    """
    from ragkit.documents.encodings import decode_text

    try:
        return decode_text(path.read_bytes(), path)
    except FileNotFoundError as error:
        raise RagkitError(
            f"{path}: no such file (give a text file, or - to read standard input)"
        ) from error
    except IsADirectoryError as error:
        raise RagkitError(f"{path}: a folder, not a text file") from error
    except OSError as error:
        raise RagkitError(f"{path}: cannot read ({error.strerror or error})") from error


def option_error(error: ValidationError, options: dict[str, str] | None = None) -> RagkitError:
    """A settings validation error as the command-line option it came from: the setting
    ``chunk_tokens`` is reported as ``--chunk-tokens`` unless ``options`` names it otherwise."""
    problem = error.errors()[0]
    setting = str(problem["loc"][0]) if problem["loc"] else ""
    option = (options or {}).get(setting, "--" + setting.replace("_", "-")) if setting else ""
    return RagkitError(f"{option}: {validation_message(error)}")


def print_ingest_report(report: IngestReport, strict: bool = False) -> None:
    """The ingest summary line, unsupported, empty and skipped files; exit 1 when some files
    failed to load (with ``strict``, also when some were of an unsupported type or empty)."""
    if report.model_choice:
        console.print("embedding model:", plain(report.model_choice), soft_wrap=True)
    if report.languages_from_collection:
        too_short = counted(report.languages_from_collection, "document")
        console.print(
            f"{too_short} too short to tell their language took the collection's",
            soft_wrap=True,
        )
    renamed = f"renamed {report.documents_renamed} · " if report.documents_renamed else ""
    if report.documents_copied:  # exact duplicates: stored as copies, not embedded again
        renamed += f"duplicates {report.documents_copied} · "
    seen = (
        f"records seen {report.records_seen}"
        if report.records_seen
        else f"files seen {report.files_seen}"
    )
    console.print(
        f"{seen} · documents added {report.documents_added} · "
        f"unchanged {report.documents_unchanged} · {renamed}removed {report.documents_removed} · "
        f"chunks added {report.chunks_added} · generation {report.generation}"
    )
    unsupported = [item for item in report.skipped if item.unsupported]
    empty = [item for item in report.skipped if item.empty]
    failed = [item for item in report.skipped if not (item.unsupported or item.empty)]
    groups = (
        (unsupported, "not read (unsupported type)"),
        (empty, "empty (nothing to index)"),
        (failed, "skipped"),
    )
    for items, heading in groups:
        if items:
            console.print(f"[yellow]{len(items)} {heading}:[/]")
        for item in items:
            console.print(plain(f"  {item.path}: {item.reason}"), soft_wrap=True)
    if failed or (strict and (unsupported or empty)):
        raise typer.Exit(1)


def print_eval_reports(reports: list[EvalReport]) -> None:
    """The metrics table (one row per mode) and the seconds per stage."""
    table = Table("dataset", "model", "mode", "queries", "nDCG@10", "Recall@100", "MRR@10")
    for report in reports:
        table.add_row(
            report.dataset,
            report.model,
            f"{report.mode} ({report.fusion})" if report.fusion else report.mode,
            str(report.queries),
            f"{report.ndcg_at_10:.3f}",
            f"{report.recall_at_100:.3f}",
            f"{report.mrr_at_10:.3f}",
        )
    console.print(table)
    seconds = {**reports[0].seconds, **{f"search_{r.mode}": r.seconds["search"] for r in reports}}
    seconds.pop("search", None)
    console.print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()))


def print_figures(title: str, rows: list[dict[str, Any]]) -> None:
    """Tokenizer figures: fertility, characters per token and UNK rate per tokenizer."""
    table = Table("tokenizer", "fertility", "chars/token", "UNK rate", title=title)
    for row in rows:
        table.add_row(
            row["tokenizer"],
            f"{row['fertility']:.3f}",
            f"{row['chars_per_token']:.2f}",
            f"{row['unk_rate']:.4%}",
        )
    console.print(table)
