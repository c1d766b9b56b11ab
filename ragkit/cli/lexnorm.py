"""``ragkit lexnorm``: train the English lexical normalizer ``ragkit normalize --lexical`` uses.

Example:
    $ ragkit lexnorm train                                  # rebuilds the shipped model
    $ ragkit lexnorm train --data ../shared/data/lexnorm/en --out /tmp/m.json.gz \\
        --report /tmp/lexnorm.json
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from ragkit.cli.help import ReadableGroup
from ragkit.cli.output import console, errors, fail
from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from ragkit.normalize.lexical import TrainingReport

lexnorm_app = typer.Typer(
    cls=ReadableGroup,
    help="Train and measure the lexical normalizer (social-media English, MultiLexNorm).",
)
SPLITS = ("train.norm", "dev.norm")


def default_data() -> Path:
    """MultiLexNorm English in the shared data (``RAGKIT_SHARED_DATA``): ``lexnorm/en``."""
    from ragkit.paths import shared_data_dir

    return shared_data_dir() / "lexnorm" / "en"


def check_paths(data: Path, out: Path, report: Path | None) -> None:
    """Refuse, before minutes of training, a data folder without both splits and an output
    or report file whose folder does not exist."""
    missing = [name for name in SPLITS if not (data / name).is_file()]
    if missing:
        raise RagkitError(
            f"--data {data}: no {' or '.join(missing)}; give a MultiLexNorm folder holding "
            f"{' and '.join(SPLITS)} (e.g. ../shared/data/lexnorm/en)"
        )
    for option, path in (("--out", out), ("--report", report)):
        if path is not None and not path.parent.is_dir():
            raise RagkitError(f"{option} {path}: folder {path.parent} does not exist")


@lexnorm_app.command("train")
def lexnorm_train(
    data: Path | None = typer.Option(
        None,
        "--data",
        help="MultiLexNorm folder with train.norm and dev.norm (default: the shared lexnorm/en).",
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Model file to write (default: the shipped model, ragkit/normalize/data).",
    ),
    report: Path | None = typer.Option(
        None, "--report", help="Also write the scores as JSON, with the run's provenance."
    ),
    trees: int = typer.Option(300, "--trees", min=1, help="Boosted trees in the ranker."),
    leaves: int = typer.Option(31, "--leaves", min=2, help="Leaves per tree."),
    folds: int = typer.Option(20, "--folds", min=2, help="Cross-validation folds."),
    vocabulary: int = typer.Option(
        30000, "--vocabulary", min=1, help="Most frequent words taken as vocabulary."
    ),
    dev_in_model: bool = typer.Option(
        True,
        "--dev-in-model/--no-dev-in-model",
        help="Fit the saved model on the training part and dev.norm (scored on the held-out "
        "tenth), or save the training part's model (the one scored on dev).",
    ),
) -> None:
    """Train on train.norm less a held-out tenth, tune by cross-validation, score, save.

    Margins and biases are chosen on out-of-fold scores; the model of the training part is
    scored on dev.norm, the saved one on the held-out tenth, both against the leave-as-is and
    most-frequent-replacement baselines. Needs the dev extra (wordfreq, symspellpy, lightgbm)
    and the ekphrasis and breame data (make install); about 11 minutes on 2 cores.
    """
    from ragkit.normalize.lexical import model_path, train_lexical
    from ragkit.provenance import provenance

    data = data or default_data()
    out = out or model_path("en")
    try:
        check_paths(data, out, report)
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        result = train_lexical(
            data / "train.norm",
            data / "dev.norm",
            out,
            vocabulary_size=vocabulary,
            folds=folds,
            trees=trees,
            leaves=leaves,
            dev_in_model=dev_in_model,
            progress=lambda message: errors.print(message, markup=False, highlight=False),
        )
    except RagkitError as error:
        fail(error)
    if report is not None:
        record = {"provenance": provenance(), **result.to_dict()}
        report.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print_training(result)
    saved = f"; scores in {report}" if report else ""
    console.print(
        f"wrote {result.model_path} ({result.model_bytes / 1024:.0f} KiB) in "
        f"{result.seconds:.0f} s{saved}",
        highlight=False,
    )


def print_training(report: TrainingReport) -> None:
    """The scores of a training run: overall against the baselines, then by change type."""
    table = Table(title=f"MultiLexNorm {report.language} ({report.dev_tokens} dev tokens)")
    for column in ("system", "set", "ERR", "ERR 95 % interval", "accuracy", "TP", "FP", "FN"):
        table.add_column(column, justify="left" if column in ("system", "set") else "right")
    scored = f"ragkit, {report.train_sentences} training sentences"
    saved = (
        f"ragkit saved, {report.model_sentences} sentences, margin {report.margin:g}, "
        f"keep bias {report.keep_bias:g}, multiword bias {report.multiword_bias:g}"
    )
    rows = [
        ("leave-as-is (LAI)", "dev", report.leave_as_is, None),
        ("most frequent replacement (MFR)", "dev", report.most_frequent, None),
        ("most frequent replacement (MFR)", "held-out", report.held_most_frequent, None),
        (scored, "cross-validation", report.dev_cross_validation.overall, None),
        (scored, "dev", report.dev.overall, report.dev.interval),
        (saved, "cross-validation", report.cross_validation.overall, None),
        (saved, "held-out", report.held.overall, report.held.interval),
    ]
    for name, part, score, interval in rows:
        table.add_row(
            name,
            part,
            f"{score.err:.4f}",
            f"{interval[0]:.3f}–{interval[1]:.3f}" if interval else "-",
            f"{score.accuracy:.4f}",
            str(score.tp),
            str(score.fp),
            str(score.fn),
        )
    console.print(table)
    kinds = Table(title="ragkit by change type (gold type; FP by the type of change made)")
    for column in ("set", "type", "tokens", "ERR", "TP", "FP", "FN"):
        kinds.add_column(column, justify="left" if column in ("set", "type") else "right")
    parts = (
        ("cross-validation (training part)", report.dev_cross_validation),
        ("dev", report.dev),
        ("cross-validation (saved model)", report.cross_validation),
        ("held-out", report.held),
    )
    for part, evaluation in parts:
        for kind, change in evaluation.by_change.items():
            err = "-" if kind == "keep" else f"{change.err:.4f}"
            values = (change.tokens, change.tp, change.fp, change.fn)
            kinds.add_row(part, kind, str(values[0]), err, *map(str, values[1:]))
    console.print(kinds)
    console.print(
        f"gold in candidates for {report.train_candidate_recall:.1%} / "
        f"{report.dev_candidate_recall:.1%} / {report.held_candidate_recall:.1%} of changed "
        "tokens of the saved model's cross-validation / dev / held-out parts",
        highlight=False,
    )
