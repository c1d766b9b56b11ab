"""The ``ragkit`` command line (typer + rich): one module per command group, wired here.

Example:
    $ ragkit ingest examples --index demo-index
    $ ragkit query "boiling point of water" --index demo-index -k 5
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import typer

from ragkit import __version__
from ragkit.cli.chunk import chunk_command
from ragkit.cli.doctor import doctor
from ragkit.cli.evaluate import eval_command
from ragkit.cli.flows import flows_app
from ragkit.cli.help import ReadableGroup
from ragkit.cli.ingest import ingest
from ragkit.cli.lexnorm import lexnorm_app
from ragkit.cli.manage import export, ls, rm
from ragkit.cli.normalize import normalize_command
from ragkit.cli.rerank import rerank_app
from ragkit.cli.search import info, query
from ragkit.cli.serve import serve
from ragkit.cli.tokenizers import tokenizer_app

app = typer.Typer(
    help="ragkit: multilingual RAG ingest, index, query and evaluation.",
    no_args_is_help=True,
    cls=ReadableGroup,
)


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"ragkit {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """ragkit: multilingual RAG ingest, index, query and evaluation."""


app.command()(ingest)
app.command()(query)
app.command()(info)
app.command()(ls)
app.command()(rm)
app.command()(export)
app.command()(doctor)
app.command()(serve)
app.command(name="normalize")(normalize_command)
app.command(name="eval")(eval_command)
app.command("chunk")(chunk_command)
app.add_typer(rerank_app, name="rerank")
app.add_typer(tokenizer_app, name="tokenizer")
app.add_typer(lexnorm_app, name="lexnorm")
app.add_typer(flows_app, name="flows")
