"""The ``ragkit`` command line (typer + rich).

Example:
    $ ragkit ingest examples --index demo-index
    $ ragkit query "boiling point of water" --index demo-index -k 5
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import typer
from rich.console import Console
from rich.table import Table

from ragkit.console import errors, progress_bar
from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from ragkit.evaluate import EvalReport
    from ragkit.index import IngestReport
    from ragkit.retrieve import SearchMode

app = typer.Typer(
    help="ragkit: multilingual RAG ingest, index, query and evaluation.", no_args_is_help=True
)
console = Console()


def _fail(error: RagkitError) -> None:
    errors.print(f"[bold red]error:[/] {error}")
    raise typer.Exit(2)


@app.command()
def ingest(
    paths: list[Path] = typer.Argument(..., help="Files or folders to ingest (recursively)."),
    index: Path = typer.Option(..., "--index", help="Index folder (created if missing)."),
    model: str | None = typer.Option(None, "--model", help="Embedding model for a new index."),
    prune: bool = typer.Option(False, "--prune", help="Remove documents whose files are gone."),
    normalization: str | None = typer.Option(
        None,
        "--normalization",
        help="For a new index: post-inference (default; match keys only) | pre-index | off.",
    ),
    chunker: str | None = typer.Option(
        None,
        "--chunker",
        help="For a new index: adaptive (default) | fixed | sentence | recursive | structure | "
        "semantic.",
    ),
    chunk_tokens: int | None = typer.Option(
        None, "--chunk-tokens", min=8, help="For a new index: token budget per chunk (256)."
    ),
    chunk_weights: str | None = typer.Option(
        None, "--chunk-weights", help="For a new index: adaptive metric weights, e.g. SC=1,BI=2."
    ),
    wait: bool = typer.Option(
        True, "--wait/--no-wait", help="When another writer holds the index: wait, or fail."
    ),
) -> None:
    """Load, chunk, embed and commit files into an index. Exit 1 when some files were skipped."""
    from pydantic import ValidationError

    from ragkit.chunk_cli import parse_weights
    from ragkit.index import Index

    try:
        options = {
            "normalization": normalization,
            "chunker": chunker,
            "chunk_tokens": chunk_tokens,
            "chunk_weights": parse_weights(chunk_weights),
        }
        chosen = {k: v for k, v in options.items() if v is not None}
        try:
            opened = Index.open(index, create=True, model=model, **chosen)
        except ValidationError as error:
            problem = error.errors()[0]
            option = "--" + str(problem["loc"][0]).replace("_", "-") if problem["loc"] else ""
            raise RagkitError(f"{option}: {problem['msg']}") from error
        with progress_bar() as bar:
            task = bar.add_task("ingesting documents", total=None)

            def progress(stage: str, done: int, total: int) -> None:
                if stage == "documents":
                    bar.update(task, completed=done, total=total)

            report = opened.ingest(paths, prune=prune, progress=progress, wait=wait)
    except RagkitError as error:
        _fail(error)
    except Exception:  # noqa: BLE001 - a bug, not a bad file: exit 2, never 1 ("files skipped")
        errors.print_exception()
        raise typer.Exit(2) from None
    print_ingest_report(report)


def print_ingest_report(report: IngestReport) -> None:
    """The ingest summary line and skipped files; exit 1 when some files were skipped."""
    console.print(
        f"files seen {report.files_seen} · documents added {report.documents_added} · "
        f"unchanged {report.documents_unchanged} · removed {report.documents_removed} · "
        f"chunks added {report.chunks_added} · generation {report.generation}"
    )
    if report.skipped:
        console.print(f"[yellow]{len(report.skipped)} skipped:[/]")
        for item in report.skipped:
            console.print(f"  {item.path}: {item.reason}", soft_wrap=True, markup=False)
        raise typer.Exit(1)


@app.command()
def query(
    text: str = typer.Argument(..., help="The query."),
    index: Path = typer.Option(..., "--index", help="Index folder."),
    k: int = typer.Option(10, "-k", "--top-k", min=1, help="Number of hits."),
    mode: str = typer.Option("hybrid", "--mode", help="hybrid | dense | sparse."),
    fusion: str | None = typer.Option(
        None, "--fusion", help="weighted | rrf (hybrid mode; default: the index's setting)."
    ),
    where: list[str] = typer.Option(
        [], "--filter", help="KEY=VALUE: language, source (glob) or a metadata key."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print hits as JSON."),
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
) -> None:
    """Search an index and print ranked hits."""
    from ragkit.index import Index

    try:
        filters = {}
        for item in where:
            key, separator, value = item.partition("=")
            if not separator or not key:
                raise RagkitError(f"--filter {item!r}: write KEY=VALUE, e.g. language=ar")
            filters[key] = value
        if fusion not in (None, "rrf", "weighted"):
            raise RagkitError(f"--fusion {fusion!r}: use rrf or weighted")
        overrides = {"rerank_weight": rerank_weight, "reranker": reranker}
        opened = Index.open(index, **{k: v for k, v in overrides.items() if v is not None})
        hits = opened.search(
            text,
            k=k,
            mode=mode,
            filters=filters or None,
            fusion=fusion,  # type: ignore[arg-type]
            rerank=rerank,
        )
    except RagkitError as error:
        _fail(error)
    if as_json:
        typer.echo(json.dumps([hit.__dict__ for hit in hits], ensure_ascii=False, indent=2))
        return
    table = Table("#", "score", "source", "span", "text", title=f"query: {text}")
    for rank, hit in enumerate(hits, start=1):
        snippet = " ".join(hit.text.split())[:120]
        table.add_row(
            str(rank), f"{hit.score:.3f}", hit.document_id, f"{hit.start}-{hit.end}", snippet
        )
    console.print(table)


@app.command()
def info(
    index: Path = typer.Option(..., "--index", help="Index folder."),
    document: str | None = typer.Option(
        None, "--document", help="Show how this document (its key: the file path) was chunked."
    ),
) -> None:
    """Show an index's model, generation, counts and chunker choices (or one document's)."""
    from ragkit.index import Index

    try:
        opened = Index.open(index)
        if document is not None:
            from ragkit.chunk_cli import print_chunking

            print_chunking(document, opened.chunking(document))
            return
        details = opened.info()
    except RagkitError as error:
        _fail(error)
    table = Table("field", "value")
    for key, value in details.items():
        if isinstance(value, dict):
            value = ", ".join(f"{name} {count}" for name, count in value.items()) or "—"
        table.add_row(key, str(value))
    console.print(table)


@app.command()
def doctor(
    index: Path = typer.Option(..., "--index", help="Index folder."),
    fix: bool = typer.Option(False, "--repair", help="Rebuild FAISS and BM25 from SQLite."),
) -> None:
    """Verify checksums and SQLite ↔ FAISS ↔ BM25 consistency. Exit 1 when problems remain."""
    from ragkit.doctor import diagnose, repair

    try:
        found = repair(index) if fix else diagnose(index)
    except RagkitError as error:
        _fail(error)
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


@app.command(name="normalize")
def normalize_command(
    source: str = typer.Argument(..., help="A text file, or - for standard input."),
    lang: str | None = typer.Option(None, "--lang", help="Language code (detected if absent)."),
    mode: str = typer.Option(
        "homophones", "--mode", help="Ge'ez folding: homophones | homophones+labialized."
    ),
    lexical: bool = typer.Option(False, "--lexical", help="Social-media lexical normalization."),
    explain: bool = typer.Option(False, "--explain", help="List each change with its offset."),
) -> None:
    """Print the normalized text (what ragkit matches on); --explain shows every change."""
    import sys

    from ragkit.normalize import GEEZ_MODES, detect_language, normalize_document
    from ragkit.normalize.base import changes

    try:
        if mode not in GEEZ_MODES:
            raise RagkitError(f"--mode {mode!r}: use one of {', '.join(GEEZ_MODES)}")
        if source == "-":
            text = sys.stdin.read()
        else:
            try:
                text = Path(source).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise RagkitError(f"{source}: cannot read as UTF-8 text ({error})") from error
        language = lang or detect_language(text)
        result = normalize_document(text, language, geez_mode=mode, lexical=lexical)  # type: ignore[arg-type]
    except RagkitError as error:
        _fail(error)
    if not explain:
        typer.echo(result.text, nl=not result.text.endswith("\n"))
        return
    table = Table("offset", "original", "normalized", "code points", title=f"language: {language}")
    for change in changes(text, result):
        points = (
            " ".join(f"U+{ord(c):04X}" for c in change.before)
            + " → "
            + (" ".join(f"U+{ord(c):04X}" for c in change.after) or "(deleted)")
        )
        table.add_row(f"{change.start}-{change.end}", change.before, change.after, points)
    console.print(table)


def _register_rerank_commands() -> None:
    from ragkit.rerank_cli import rerank_app

    app.add_typer(rerank_app, name="rerank")


_register_rerank_commands()

tokenizer_app = typer.Typer(help="Train and measure ragkit's SentencePiece tokenizers.")
app.add_typer(tokenizer_app, name="tokenizer")


@tokenizer_app.command("train")
def tokenizer_train(
    lang: str = typer.Option(..., "--lang", help="Language code (ar am fa ur en, or mul)."),
    vocab_size: int | None = typer.Option(
        None, "--vocab-size", min=100, help="Vocabulary size (default: chosen by a sweep)."
    ),
    corpus: list[Path] = typer.Option(
        [], "--corpus", help="Text/JSONL files or folders instead of the packaged corpus."
    ),
    out: Path | None = typer.Option(None, "--out", help="Folder (default: tokenizers/)."),
) -> None:
    """Train a tokenizer on real text, measure it on held-out text, update the manifest."""
    from ragkit.corpora import CorpusDocument
    from ragkit.documents import load_paths
    from ragkit.tokenizer_build import build_language, write_model

    try:
        documents = None
        if corpus:
            loaded = load_paths(corpus)
            for skipped in loaded.skipped:
                errors.print(f"[yellow]skipped[/] {skipped.path}: {skipped.reason}")
            documents = [
                CorpusDocument(d.key, d.text, f"file:{d.source}") for d in loaded.documents
            ]
            if not documents:
                raise RagkitError(f"--corpus {', '.join(map(str, corpus))}: no readable text")
        result = build_language(
            lang, vocab_size, documents=documents, progress=lambda m: errors.print(m)
        )
        path = write_model(result, out)
    except RagkitError as error:
        _fail(error)
    console.print(f"wrote {path} (vocab {result.vocab_size}, hash {result.vocab_hash[:16]})")
    _print_figures(lang, [f.as_dict() for f in result.figures])


@tokenizer_app.command("report")
def tokenizer_report(
    lang: list[str] = typer.Option([], "--lang", help="Languages (default: all shipped)."),
    folder: Path | None = typer.Option(None, "--dir", help="Folder (default: tokenizers/)."),
) -> None:
    """Held-out fertility, characters/token and UNK rate per language, next to the peers."""
    from ragkit.tokenize import tokenizers_dir

    manifest_path = (folder or tokenizers_dir()) / "MANIFEST.json"
    try:
        if not manifest_path.is_file():
            raise RagkitError(f"{manifest_path}: missing; run `ragkit tokenizer train` first")
        models = json.loads(manifest_path.read_text())["models"]
    except (RagkitError, ValueError, KeyError) as error:
        _fail(error if isinstance(error, RagkitError) else RagkitError(f"{manifest_path}: {error}"))
    for language in lang or sorted(models):
        if language not in models:
            _fail(RagkitError(f"{manifest_path}: no model for {language!r}"))
        entry = models[language]
        _print_figures(
            f"{language} · vocab {entry['vocab_size']} · held-out "
            f"{entry['corpus']['held_out']['words']} words",
            entry["held_out"],
        )


def _print_figures(title: str, rows: list[dict]) -> None:
    table = Table("tokenizer", "fertility", "chars/token", "UNK rate", title=title)
    for row in rows:
        table.add_row(
            row["tokenizer"],
            f"{row['fertility']:.3f}",
            f"{row['chars_per_token']:.2f}",
            f"{row['unk_rate']:.4%}",
        )
    console.print(table)


@app.command(name="eval")
def eval_command(
    dataset: Path = typer.Argument(
        ..., help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv."
    ),
    model: str | None = typer.Option(None, "--model", help="Embedding model."),
    mode: list[str] = typer.Option(
        ["dense"], "--mode", help="dense | sparse | hybrid | all (repeatable)."
    ),
    keep_index: Path | None = typer.Option(
        None, "--keep-index", help="Build (or reuse) the index in this folder."
    ),
    chunker: str | None = typer.Option(
        None, "--chunker", help="Build the index with one chunker instead of adaptive."
    ),
    fusion: str | None = typer.Option(
        None, "--fusion", help="weighted | rrf for hybrid (default: the index's setting)."
    ),
    json_out: Path | None = typer.Option(None, "--json", help="Write the reports as JSON here."),
) -> None:
    """Evaluate retrieval on a BEIR-layout dataset: nDCG@10, Recall@100, MRR@10 per mode."""
    from ragkit.config import DEFAULT_MODEL
    from ragkit.evaluate import evaluate

    try:
        if fusion not in (None, "rrf", "weighted"):
            raise RagkitError(f"--fusion {fusion!r}: use weighted or rrf")
        reports = evaluate(
            dataset,
            model or DEFAULT_MODEL,
            keep_index,
            search_modes(mode),
            fusion,  # type: ignore[arg-type]
            **({"chunker": chunker} if chunker else {}),
        )
    except RagkitError as error:
        _fail(error)
    print_eval_reports(reports)
    if json_out:
        json_out.write_text(json.dumps([r.as_dict() for r in reports], indent=2))


def search_modes(requested: list[str]) -> list[SearchMode]:
    """``--mode`` values checked; ``all`` means sparse, dense and hybrid."""
    from ragkit.retrieve import SEARCH_MODES

    modes = list(SEARCH_MODES[::-1]) if "all" in requested else list(dict.fromkeys(requested))
    unknown = [m for m in modes if m not in SEARCH_MODES]
    if unknown:
        raise RagkitError(f"--mode {unknown[0]!r}: use dense, sparse, hybrid or all")
    return modes  # type: ignore[return-value]


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


def _register_commands() -> None:
    from ragkit.chunk_cli import chunk_command
    from ragkit.flows_cli import flows_app

    app.command("chunk")(chunk_command)
    app.add_typer(flows_app, name="flows")


_register_commands()
