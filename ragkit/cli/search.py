"""``ragkit query`` and ``ragkit info``: search an index, describe it.

Example:
    $ ragkit query "boiling point of water" --index my-index -k 5
    $ ragkit info --index my-index
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from ragkit.cli.ingest import CONFIG
from ragkit.cli.options import INDEX
from ragkit.cli.output import console, counted, errors, fail, plain
from ragkit.cli.search_options import with_search_options
from ragkit.errors import RagkitError
from ragkit.query import SearchOptions
from ragkit.search.query import check_query

if TYPE_CHECKING:
    from ragkit.index import Index


@with_search_options()
def query(
    text: str = typer.Argument(..., help="The query."),
    index: str = INDEX,
    as_json: bool = typer.Option(False, "--json", help="Print hits as JSON."),
    rerank_weight: float | None = typer.Option(
        None,
        "--rerank-weight",
        min=0.0,
        max=1.0,
        help="With --rerank: share of the first-stage score in the result (default: the index's).",
    ),
    reranker: str | None = typer.Option(
        None, "--reranker", help="With --rerank: a shipped model or a folder from `rerank train`."
    ),
    config: Path | None = CONFIG,
    *,
    options: SearchOptions,
) -> None:
    """Search an index and print ranked hits."""
    from ragkit.index import Index

    lang = options.language
    try:
        check_query(text)
        overrides: dict[str, Any] = {"rerank_weight": rerank_weight, "reranker": reranker}
        chosen = {k: v for k, v in overrides.items() if v is not None}
        opened = Index.open(index, config=config, **chosen)
        held = sorted({language for _, language in opened.store.languages()})
        if lang is not None and held and lang not in held:
            errors.print(
                f"[yellow]note:[/] {index} holds no {lang!r} documents ({', '.join(held)}); "
                f"the query is analyzed as {lang!r} anyway",
                soft_wrap=True,
            )
        if options.rerank:
            check_rerank_languages(opened, lang, text)
        hits = opened.search(text, options)
    except RagkitError as error:
        fail(error)
    if as_json:
        typer.echo(json.dumps([hit.__dict__ for hit in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        matching = " matching the filters" if options.filters else ""
        console.print(f"no hits for {text!r}{matching} in {index}", soft_wrap=True, markup=False)
        return
    table = Table(
        "#", "score", "relevance", "document", "span", "text", title=plain(f"query: {text}")
    )
    for rank, hit in enumerate(hits, start=1):
        snippet = plain(" ".join(hit.text.split())[:120])
        span = f"{hit.start}-{hit.end}"
        document = hit.key + (f" (+{len(hit.duplicates)} copies)" if hit.duplicates else "")
        scores = (f"{hit.score:.3f}", f"{hit.relevance:.2f}")
        table.add_row(str(rank), *scores, plain(document), span, snippet)
    console.print(table)


def check_rerank_languages(opened: Index, lang: str | None, query: str) -> None:
    """Refuse ``--rerank`` when a reranker that reads English only (a MiniLM backbone) would
    rerank a query that is not English (analyzed as another language, or written in a script
    other than Latin) or an index with no English; :attr:`ragkit.Index.reranker` warns when
    the index is partly English."""
    from ragkit.embed.models import MINILM_NAMES
    from ragkit.normalize.detect import detect_script

    backbone = opened.reranker.config.backbone
    if backbone not in MINILM_NAMES:
        return
    held = {language for _, language in opened.store.languages()} - {"und"}
    others = sorted(held - {"en"})
    script = detect_script(query)
    problem = ""
    if lang is not None and lang != "en":
        problem = f"the query is analyzed as {lang!r}"
    elif lang is None and script not in ("Latn", "Zyyy"):
        problem = f"the query is written in {script} script, not English"
    elif others and "en" not in held:
        problem = f"this index holds {', '.join(others)}"
    if problem:
        raise RagkitError(
            f"--rerank: the reranker {opened.settings.reranker!r} reads English only "
            f"({backbone}) and {problem}; search without --rerank, or give --reranker a "
            "folder trained with a multilingual backbone"
        )


def info(
    index: str = INDEX,
    document: str | None = typer.Option(
        None,
        "--document",
        help="Show how this document (its path, relative or absolute; FILE#ID for a record) "
        "was chunked and which language it was given.",
    ),
    config: Path | None = CONFIG,
) -> None:
    """Show an index's model, generation, counts, chunker choices and effective settings (or
    how one document was chunked)."""
    from ragkit.index import Index

    try:
        opened = Index.open(index, config=config)
        if document is not None:
            from ragkit.cli.chunk import print_chunking

            document = opened.stored_key(document)
            decision = opened.store.language_decision(document)
            if decision is not None:
                console.print(
                    f"language [bold]{decision.language}[/] ({decision.script}) · confidence "
                    f"{decision.confidence:.2f} · decided by {decision.method}",
                    soft_wrap=True,
                )
            print_chunking(document, opened.chunking(document))
            entries = [each for each in opened.documents(document) if each.key == document]
            for entry in entries:  # the page's chunk bands count the same chunks
                console.print(f"{counted(entry.chunks, 'chunk')} · {entry.characters} characters")
            return
        details = opened.info()
    except RagkitError as error:
        fail(error)
    table = Table("field", "value")
    for name, value in details.rows():
        table.add_row(name, plain(value))
    console.print(table)
