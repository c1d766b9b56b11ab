"""``ragkit normalize``: print what ragkit matches on, or explain every change.

Example:
    $ echo "إِلَى" | ragkit normalize - --lang ar --explain
    $ echo "ٱلصَّلَوٰةَ" | ragkit normalize - --lang ar --orthography uthmani
    $ echo "ڕۆژی باش" | ragkit normalize - --terms
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from ragkit.cli.output import console, errors, fail, read_text_file
from ragkit.errors import RagkitError
from ragkit.normalize.detect import SCRIPT_LANGUAGES, check_language

if TYPE_CHECKING:
    from ragkit.normalize.base import Normalized

LATIN_LANGUAGES = frozenset(SCRIPT_LANGUAGES["Latn"])  # what --lexical reads as English


def normalize_command(
    source: str = typer.Argument(..., help="A text file, or - for standard input."),
    lang: str | None = typer.Option(None, "--lang", help="Language code (detected if absent)."),
    mode: str = typer.Option(
        "homophones", "--mode", help="Ge'ez folding: homophones | homophones+labialized."
    ),
    lexical: bool = typer.Option(False, "--lexical", help="Social-media lexical normalization."),
    orthography: str = typer.Option(
        "auto",
        "--orthography",
        help="Arabic in Quranic (Uthmani) spelling to standard: auto (lines with Quranic"
        " marks) | uthmani (all text) | standard (never).",
    ),
    explain: bool = typer.Option(False, "--explain", help="List each change with its offset."),
    terms: bool = typer.Option(
        False,
        "--terms",
        help="Also print the sparse terms an index stores for the text (default settings) and"
        " the tokenizer that counts its chunk budget.",
    ),
) -> None:
    """Print the normalized text (what ragkit matches on); --explain shows every change."""
    import sys

    from ragkit.normalize import GEEZ_MODES, ORTHOGRAPHIES, detect_language, normalize_document

    try:
        if lang is not None:
            lang = check_language(lang)
        if mode not in GEEZ_MODES:
            raise RagkitError(f"--mode {mode!r}: use one of {', '.join(GEEZ_MODES)}")
        if orthography not in ORTHOGRAPHIES:
            raise RagkitError(
                f"--orthography {orthography!r}: use one of {', '.join(ORTHOGRAPHIES)}"
            )
        if source == "-":
            text = sys.stdin.read()
        else:
            text = read_text_file(Path(source))
        language = lang or detect_language(text)
        if lexical and lang is None and language != "en" and language in LATIN_LANGUAGES:
            errors.print(
                f"note: the text reads as {language!r}; --lexical normalizes English "
                "social-media text, so it is read as 'en' (--lang sets the language)",
                soft_wrap=True,
                markup=False,
            )
            language = "en"
        result = normalize_document(
            text,
            language,
            geez_mode=mode,  # type: ignore[arg-type]
            lexical=lexical,
            orthography=orthography,
        )
    except RagkitError as error:
        fail(error)
    if explain:
        print_changes(text, result, language, by_word=lexical)
    if terms:
        print_terms(result.text, language)
    if not (explain or terms):
        typer.echo(result.text, nl=not result.text.endswith("\n"))


def print_changes(text: str, result: Normalized, language: str, by_word: bool = False) -> None:
    """Every change normalization made to ``text``, with offsets and code points; with
    ``by_word`` (lexical normalization rewrites words), each changed word as one row."""
    from ragkit.normalize.base import changes, word_changes

    found = (word_changes if by_word else changes)(text, result)
    if not found:
        console.print(f"language: {language} · no changes: ragkit matches on the text as given")
        return
    table = Table("offset", "original", "normalized", "code points", title=f"language: {language}")
    for change in found:
        points = (
            " ".join(f"U+{ord(c):04X}" for c in change.before)
            + " → "
            + (" ".join(f"U+{ord(c):04X}" for c in change.after) or "(deleted)")
        )
        table.add_row(f"{change.start}-{change.end}", change.before, change.after, points)
    console.print(table)


def print_terms(key: str, language: str) -> None:
    """The matching key, the tokenizer that cuts ``language`` and the key's sparse terms."""
    from ragkit.config import Settings
    from ragkit.pipeline.stages import sparse_terms
    from ragkit.search.sparse import has_stemmer, uses_pieces
    from ragkit.tokenize import tokenizer_for

    settings = Settings()
    try:
        tokenizer = tokenizer_for(language)
        model = Path(tokenizer.name).name
        own = "" if Path(model).stem == language else f", {language} has no model of its own"
        count = tokenizer.count(key)
        counted = f"{model}{own}: {count} token{'s' * (count != 1)}"
    except RagkitError as error:  # no models installed: terms are regex words
        counted = f"none ({error})"
    kind = (
        "tokenizer pieces"
        if uses_pieces(language, settings.sparse_terms)
        else "Snowball stems"
        if has_stemmer(language)
        else "words"
    )
    console.print(f"language: {language} · tokenizer: {counted}")
    console.print(f"matching key: {key.strip()}", markup=False)
    found = sparse_terms(key, language, settings)
    console.print(f"sparse terms ({kind}, {len(found)}): {'  '.join(found)}", markup=False)
