"""The ``ragkit`` command line: ``ragkit.cli:app`` is the console script.

Example:
    >>> from typer.testing import CliRunner
    >>> "ingest" in CliRunner().invoke(app, ["--help"]).output
    True
"""

from ragkit.cli.main import app

__all__ = ["app"]
