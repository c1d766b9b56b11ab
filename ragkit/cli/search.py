"""``ragkit query`` and ``ragkit info``: search an index, describe it.

Example:
    $ ragkit query "boiling point of water" --index my-index -k 5
    $ ragkit info --index my-index
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from ragkit.cli.ingest import CONFIG
from ragkit.cli.options import INDEX
from ragkit.cli.output import console, counted, errors, fail, plain
from ragkit.errors import RagkitError
from ragkit.normalize.detect import check_language
from ragkit.search.query import check_query

if TYPE_CHECKING:
    from ragkit.index import Index


def query(
    text: str = typer.Argument(..., help="The query."),
    index: str = INDEX,
    k: int = typer.Option(10, "-k", "--top-k", min=1, help="Number of hits."),
    mode: str = typer.Option("hybrid", "--mode", help="hybrid | dense | sparse."),
    fusion: str | None = typer.Option(
        None, "--fusion", help="weighted | rrf (hybrid mode; default: the index's setting)."
    ),
    where: list[str] = typer.Option(
        [],
        "--filter",
        help="KEY=VALUE: language, source (glob; * stays in one folder, ** crosses them) or a "
        "metadata key (2020 also matches the number; meta.source for a metadata field named "
        "source). KEY=A,B or a repeated key: any of the values. KEY>=N, KEY<N…: a numeric range.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print hits as JSON."),
    lang: str | None = typer.Option(
        None,
        "--lang",
        help="Analyze the query as this language (ISO 639 code, e.g. en, ar); default: the "
        "languages the index holds for the query's script.",
    ),
    rerank: bool = typer.Option(
        False, "--rerank", help="Rerank the top candidates with the groupwise reranker."
    ),
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
    collapse: bool | None = typer.Option(
        None,
        "--collapse/--no-collapse",
        help="Fold hits whose text a better hit shows into it, so k hits are k distinct "
        "passages (default: the index's collapse setting, on).",
    ),
    feedback: str | None = typer.Option(
        None,
        "--feedback",
        help="off | sparse | dense | both | auto: a second pass with the query expanded from "
        "the first pass's top chunks (default: the index's feedback setting).",
    ),
    document_evidence: str | None = typer.Option(
        None,
        "--document-evidence",
        help="on | off | auto: lift a chunk whose document matches in other chunks too "
        "(default: the index's setting).",
    ),
    phrase_evidence: str | None = typer.Option(
        None,
        "--phrase-evidence",
        help="on | off | auto: chunks holding the query's words side by side and in order "
        "come first (default: the index's setting, off).",
    ),
    config: Path | None = CONFIG,
) -> None:
    """Search an index and print ranked hits."""
    from ragkit.index import Index

    try:
        check_query(text)
        if lang is not None:
            lang = check_language(lang)
        filters: dict[str, list[Any]] = {}
        for item in where:
            key, values = parse_filter(item)
            filters.setdefault(key, []).extend(values)  # a repeated key: any of its values
        if fusion not in (None, "rrf", "weighted"):
            raise RagkitError(f"--fusion {fusion!r}: use rrf or weighted")
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
        if rerank:
            check_rerank_languages(opened, lang, text)
        hits = opened.search(
            text,
            k=k,
            mode=mode,  # type: ignore[arg-type]  # Index.search checks it
            filters=filters or None,
            fusion=fusion,  # type: ignore[arg-type]
            rerank=rerank,
            language=lang,
            collapse=collapse,
            feedback=feedback,  # type: ignore[arg-type]  # Index.search checks it
            document_evidence=document_evidence,  # type: ignore[arg-type]
            phrase_evidence=phrase_evidence,  # type: ignore[arg-type]
        )
    except RagkitError as error:
        fail(error)
    if as_json:
        typer.echo(json.dumps([hit.__dict__ for hit in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        matching = " matching the filters" if filters else ""
        console.print(f"no hits for {text!r}{matching} in {index}", soft_wrap=True, markup=False)
        return
    table = Table("#", "score", "document", "span", "text", title=plain(f"query: {text}"))
    for rank, hit in enumerate(hits, start=1):
        snippet = plain(" ".join(hit.text.split())[:120])
        span = f"{hit.start}-{hit.end}"
        document = hit.key + (f" (+{len(hit.duplicates)} copies)" if hit.duplicates else "")
        table.add_row(str(rank), f"{hit.score:.3f}", plain(document), span, snippet)
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


_RANGE = re.compile(r"^([^<>=]+)(>=|<=|>|<)(.+)$")


def parse_filter(item: str) -> tuple[str, list[Any]]:
    """One ``--filter``: ``KEY=VALUE`` (``KEY=A,B``: any of them) or a range ``KEY>=N``.

    Example:
        >>> parse_filter("language=fa,ar"), parse_filter("year>=1990")
        (('language', ['fa', 'ar']), ('year', [{'>=': '1990'}]))
        >>> parse_filter("year=>2000")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: --filter 'year=>2000': no value starts with '>'; did you mean 'year>=2000'? (ranges are KEY>=N, KEY<N…; values KEY=VALUE)
    """
    if ranged := _RANGE.match(item):
        key, operator, bound = ranged.groups()
        return key.strip(), [{operator: bound.strip()}]
    key, separator, value = item.partition("=")
    if not separator or not key:
        raise RagkitError(
            f"--filter {item!r}: write KEY=VALUE (e.g. language=ar) or a range (year>=1990)"
        )
    if value[:1] in ("<", ">", "="):  # year=>2000, year==2000: a range or a value mistyped
        fixed = f"{key}{value[0]}={value[1:]}" if value[:1] in "<>" else f"{key}={value[1:]}"
        raise RagkitError(
            f"--filter {item!r}: no value starts with {value[0]!r}; did you mean {fixed!r}? "
            "(ranges are KEY>=N, KEY<N…; values KEY=VALUE)"
        )
    return key, value.split(",")
