"""Prefect flow: build ragkit's shipped tokenizers from packaged corpora.

Each language is one task (corpus download with retries, vocabulary sweep, training,
held-out figures), then one writer task puts the models and the manifest in place. The work is
:func:`ragkit.tokenize.build.build_language`; this module only schedules it.

Run::

    .venv/bin/python -m flows.tokenizers            # every shipped language and mul
    .venv/bin/python -m flows.tokenizers ar am      # some languages

Example:
    >>> train_tokenizers.name
    'ragkit-tokenizers'
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task

from ragkit.tokenize import MULTILINGUAL
from ragkit.tokenize.build import SHIPPED_LANGUAGES, BuildResult, build_language, write_model


@task(name="build-tokenizer", retries=2, retry_delay_seconds=10)
def build(language: str, vocab_size: int | None) -> BuildResult:
    logger = get_run_logger()
    return build_language(language, vocab_size, progress=logger.info)


@task(name="write-tokenizer")
def write(result: BuildResult, folder: Path | None) -> str:
    return str(write_model(result, folder))


@flow(name="ragkit-tokenizers", log_prints=True)
def train_tokenizers(
    languages: tuple[str, ...] = (*SHIPPED_LANGUAGES, MULTILINGUAL),
    vocab_size: int | None = None,
    folder: Path | None = None,
) -> dict[str, str]:
    """Build and write one tokenizer per language; returns language → vocabulary hash."""
    hashes: dict[str, str] = {}
    for language in languages:  # one at a time: each training already uses a full core
        result = build(language, vocab_size)
        write(result, folder)
        hashes[language] = result.vocab_hash
    return hashes


def main(arguments: list[str]) -> None:
    """``python -m flows.tokenizers [LANG…]``: train the languages named (default: every
    shipped one and the multilingual fallback); print the result."""
    print(train_tokenizers(tuple(arguments) or (*SHIPPED_LANGUAGES, MULTILINGUAL)))
