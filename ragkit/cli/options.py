"""The ``--index`` option every command shares: a folder or a Milvus address.

Example:
    >>> INDEX.param_decls, NEW_INDEX.metavar
    (('--index',), 'INDEX')
"""

from __future__ import annotations

import typer

WHERE = "a folder, milvus://HOST:PORT/COLLECTION or milvus-lite:///ABSOLUTE/PATH.db"
INDEX = typer.Option(..., "--index", metavar="INDEX", help=f"The index: {WHERE}.")
NEW_INDEX = typer.Option(
    ..., "--index", metavar="INDEX", help=f"The index (created if missing): {WHERE}."
)
