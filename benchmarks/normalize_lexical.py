"""Train and evaluate the English lexical normalizer on MultiLexNorm (LexNorm 2015) data.

Trains on ``train.norm`` less a held-out tenth (k-fold features), chooses the replacement
margin, the keep bias and the multiword bias by cross-validation on the rest, and scores that
model on ``dev.norm``; then fits the saved model the same way on the training part and
``dev.norm`` together and scores it on the held-out tenth (``--no-dev-in-model`` saves the
first model instead). Both against the leave-as-is (LAI) and most-frequent-replacement (MFR)
baselines, overall and by change type. Writes
``benchmarks/results/normalize_lexical.json`` (with the command) and the model (by default the
shipped ``ragkit/normalize/data/lexnorm-en.json.gz``), and prints tables.

Run from the repository root::

    .venv/bin/python benchmarks/normalize_lexical.py
    .venv/bin/python benchmarks/normalize_lexical.py --data ../shared/data/lexnorm/en --out /tmp/m.json.gz
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from rich.console import Console
from rich.logging import RichHandler
from rich.table import Table

from ragkit.normalize.lexical import model_path, train_lexical
from ragkit.paths import shared_data_dir

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = shared_data_dir() / "lexnorm" / "en"
RESULTS = ROOT / "benchmarks" / "results" / "normalize_lexical.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help="folder with train/dev.norm"
    )
    parser.add_argument("--out", type=Path, default=model_path("en"), help="model file to write")
    parser.add_argument("--results", type=Path, default=RESULTS, help="JSON results file")
    parser.add_argument("--trees", type=int, default=300, help="boosted trees in the ranker")
    parser.add_argument("--leaves", type=int, default=31, help="leaves per tree")
    parser.add_argument("--folds", type=int, default=20, help="cross-validation folds")
    parser.add_argument(
        "--vocabulary", type=int, default=30000, help="most frequent words taken as vocabulary"
    )
    parser.add_argument(
        "--no-dev-in-model",
        dest="dev_in_model",
        action="store_false",
        help="save the model of the training part alone (the one scored on dev)",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", handlers=[RichHandler()])
    console = Console()
    report = train_lexical(
        args.data / "train.norm",
        args.data / "dev.norm",
        args.out,
        vocabulary_size=args.vocabulary,
        folds=args.folds,
        trees=args.trees,
        leaves=args.leaves,
        dev_in_model=args.dev_in_model,
        progress=console.log,
    )
    args.results.parent.mkdir(parents=True, exist_ok=True)
    data = {"command": " ".join([".venv/bin/python", *sys.argv]), **report.to_dict()}
    out = args.out.resolve()
    data["model_path"] = str(out.relative_to(ROOT)) if out.is_relative_to(ROOT) else str(out)
    args.results.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    table = Table(title=f"MultiLexNorm en ({report.dev_tokens} dev tokens)")
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
        for kind, score in evaluation.by_change.items():
            err = "-" if kind == "keep" else f"{score.err:.4f}"
            values = (score.tokens, score.tp, score.fp, score.fn)
            kinds.add_row(part, kind, str(values[0]), err, *map(str, values[1:]))
    console.print(kinds)
    console.print(
        f"gold in candidates for {report.train_candidate_recall:.1%} / "
        f"{report.dev_candidate_recall:.1%} / {report.held_candidate_recall:.1%} of changed "
        "saved model's cross-validation / dev / held-out tokens; "
        f"model {report.model_bytes / 1024:.0f} KiB at {report.model_path}; "
        f"{report.seconds:.0f} s; results in {args.results}"
    )


if __name__ == "__main__":
    main()
