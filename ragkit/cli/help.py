"""Help pages that read as words: ``--index PATH``, ``--prune`` — not ``<path>``, ``<bool>``.

Typer shows each parameter's Python type (``<list[Path]>``, ``<bool>``); a flag then looks as if
it took a value (``--prune true``). :class:`ReadableGroup` gives every command it hands out —
and itself — readable metavars: nothing for flags, ``PATH``, ``TEXT``, ``INTEGER``,
``NUMBER`` or the choices for values. In a group's list of commands, typer keeps the line
breaks of a wrapped docstring; each command's summary there is its first paragraph on one
line. Every ``typer.Typer`` of the CLI is made with ``cls=ReadableGroup``.

Example:
    >>> import typer
    >>> from typer.testing import CliRunner
    >>> demo = typer.Typer(cls=ReadableGroup)
    >>> @demo.command()
    ... def go(index: str = typer.Option(..., "--index"), prune: bool = False) -> None: ...
    >>> @demo.command()
    ... def stop() -> None:
    ...     '''Stop every run that is still
    ...     going.'''
    >>> page = CliRunner().invoke(demo, ["go", "--help"], env={"COLUMNS": "80"}).output
    >>> "TEXT" in page, "<str>" in page, "<bool>" in page
    (True, False, False)
    >>> "Stop every run that is still going." in CliRunner().invoke(demo, ["--help"]).output
    True
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from typer.core import TyperArgument, TyperGroup, TyperOption

if TYPE_CHECKING:  # typer carries its own copy of click
    from typer._click.core import Command, Context, Parameter

_WORDS = {str: "TEXT", int: "INTEGER", float: "NUMBER", Path: "PATH"}


def _word(parameter: TyperOption | TyperArgument) -> str:
    """The readable name of what ``parameter`` takes."""
    described = parameter.type_descriptor
    if described.choices:
        return "|".join(str(getattr(choice, "value", choice)) for choice in described.choices)
    annotation = described.annotation
    element = getattr(annotation, "__args__", (annotation,))[0]
    return _WORDS.get(element, "VALUE")


def _shows(word: str) -> Callable[[Context], str]:
    return lambda ctx: word


def readable(command: Command, ctx: Context) -> Command:
    """Give ``command``'s parameters and help option readable metavars and its help a one-line
    summary for a group's command list (in place)."""
    if command.short_help is None and command.help:
        first = inspect.cleandoc(command.help).split("\n\n")[0]
        command.short_help = " ".join(first.split())
    for parameter in [*command.params, command.get_help_option(ctx)]:
        if isinstance(parameter, TyperArgument):
            parameter.display_type_rich = _shows(_word(parameter))  # type: ignore[method-assign,assignment]
        elif parameter is not None and getattr(parameter, "metavar", "") is None:
            flag = getattr(parameter, "is_flag", True) or not isinstance(parameter, TyperOption)
            parameter.metavar = "" if flag else _word(parameter)  # type: ignore[arg-type]
    return command


class ReadableGroup(TyperGroup):
    """A typer group whose help pages, and its commands', show readable metavars."""

    def get_params(self, ctx: Context) -> list[Parameter]:
        readable(self, ctx)
        return super().get_params(ctx)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        command = super().get_command(ctx, cmd_name)
        return readable(command, ctx) if command is not None else None
