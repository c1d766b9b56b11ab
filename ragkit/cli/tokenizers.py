"""``ragkit tokenizer``: train ragkit's SentencePiece tokenizers and report their figures.

Example:
    $ ragkit tokenizer train --lang ar
    $ ragkit tokenizer report --lang ar --lang am
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ragkit.cli.help import ReadableGroup
from ragkit.cli.output import console, errors, fail, print_figures
from ragkit.errors import RagkitError

tokenizer_app = typer.Typer(
    cls=ReadableGroup, help="Train and measure ragkit's SentencePiece tokenizers."
)


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
    from ragkit.tokenize.build import build_language, write_model

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
        fail(error)
    console.print(f"wrote {path} (vocab {result.vocab_size}, hash {result.vocab_hash[:16]})")
    print_figures(lang, [f.as_dict() for f in result.figures])


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
        fail(error if isinstance(error, RagkitError) else RagkitError(f"{manifest_path}: {error}"))
    for language in dict.fromkeys(lang) or sorted(models):  # each language once
        if language not in models:
            hint = f"; {language} is cut by mul (--lang mul)" if "mul" in models else ""
            fail(
                RagkitError(
                    f"{manifest_path}: no model for {language!r}{hint}; models: "
                    f"{', '.join(sorted(models))}"
                )
            )
        entry = models[language]
        print_figures(
            f"{language} · vocab {entry['vocab_size']} · held-out "
            f"{entry['corpus']['held_out']['words']} words",
            entry["held_out"],
        )
