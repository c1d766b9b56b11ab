"""Passage embedding throughput: ragkit's ONNX Runtime path (fp32 and int8) against torch, on
both bundled models.

The passages: the first ``--passages`` Cranfield abstracts (``../shared/data/beir``, title and
text, as ``ragkit ingest`` of the records would embed them; 1,000 by default). Each model
embeds them, in one process and in turn, ``--rounds`` times through:

- ``torch``: :meth:`ragkit.embed.Encoder.encode_passages` with ``RAGKIT_EMBED_RUNTIME=torch``
  (sentence-transformers' ``encode``, batches of 32, longest first: what ragkit ran before);
- ``onnx fp32``: the same call on the checked ONNX copy (each text alone on one thread, the
  thread count of them at once: :mod:`ragkit.embed.onnx_runtime`);
- ``onnx int8``: the same with ``precision="int8"`` (:mod:`ragkit.embed.int8`).

The copies are made (and the models loaded) before the clock starts. Reported per model and
path: the median wall seconds over the rounds (every round's kept, with the load average),
passages per second and the ratio to torch; the same for the CPU seconds the process spent
(user + system: the work done, which other processes on a shared machine disturb far less than
the wall clock); and how close the vectors are: the largest difference of
fp32 ONNX from torch (the module's tolerance is 1e-4) and the least and mean cosine of int8
to fp32.

``--part queries`` measures single queries instead (kept beside the passages' figures of an
earlier run): p50 and p95 milliseconds of ``encode_queries([query])`` over the 225 Cranfield
queries, on each path (torch: one forward pass on one thread, ``Encoder._forward``), after 10
warm-up queries.

Run::

    .venv/bin/python -m benchmarks.onnx_passages                 # both models, 3 rounds
    .venv/bin/python -m benchmarks.onnx_passages --models all-minilm-l6-v2 --rounds 5
    .venv/bin/python -m benchmarks.onnx_passages --part queries

Writes ``benchmarks/results/onnx_passages.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import time
from collections.abc import Callable

import ragkit  # noqa: F401  (thread policy before torch loads: ragkit.threads)

# isort: split

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.common import beir_folder, p50_p95, per_call_ms, read_result, write_result
from ragkit.embed import Encoder
from ragkit.evaluate import load_queries
from ragkit.threads import thread_count

MODELS = ("all-minilm-l6-v2", "multilingual-e5-small")
PATHS = ("torch", "onnx fp32", "onnx int8")


def passages(count: int) -> list[str]:
    """The first ``count`` Cranfield records as ingest reads them: ``title\n\ntext``."""
    texts = []
    with beir_folder("cranfield").joinpath("corpus.jsonl").open(encoding="utf-8") as lines:
        for line in itertools.islice(lines, count):
            record = json.loads(line)
            title, text = record.get("title") or "", record["text"]
            texts.append(f"{title}\n\n{text}" if title else text)
    return texts


def torch_encoder(model: str) -> Encoder:
    """An encoder whose runtime is torch (chosen now, with ``RAGKIT_EMBED_RUNTIME=torch``)."""
    encoder = Encoder(model)
    before = os.environ.get("RAGKIT_EMBED_RUNTIME")
    os.environ["RAGKIT_EMBED_RUNTIME"] = "torch"
    try:
        assert encoder.runtime() is None
    finally:
        if before is None:
            del os.environ["RAGKIT_EMBED_RUNTIME"]
        else:
            os.environ["RAGKIT_EMBED_RUNTIME"] = before
    return encoder


def timed(call: Callable[[], np.ndarray]) -> tuple[float, float, np.ndarray]:
    """Wall and CPU seconds of ``call()``, and what it returned."""
    clock, cpu = time.perf_counter(), time.process_time()
    vectors = call()
    return time.perf_counter() - clock, time.process_time() - cpu, vectors


def measure(model: str, texts: list[str], rounds: int) -> dict:
    """Every path's seconds per round on ``texts``, and how close their vectors are."""
    encoders = {
        "torch": torch_encoder(model),
        "onnx fp32": Encoder(model),
        "onnx int8": Encoder(model, precision="int8"),
    }
    for encoder in encoders.values():  # models loaded, copies made, before the clock starts
        encoder.encode_passages(texts[:4])
    runs: dict[str, list[dict[str, float]]] = {path: [] for path in PATHS}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(rounds):
        for path, encoder in encoders.items():
            seconds, cpu, vectors[path] = timed(lambda e=encoder: e.encode_passages(texts))
            runs[path].append(
                {
                    "seconds": round(seconds, 2),
                    "cpu_seconds": round(cpu, 2),
                    "load": os.getloadavg()[0],
                }
            )

    def median(path: str, what: str) -> float:
        return statistics.median(run[what] for run in runs[path])

    paths = {}
    for path in PATHS:
        paths[path] = {
            "median_seconds": round(median(path, "seconds"), 2),
            "passages_per_s": round(len(texts) / median(path, "seconds"), 1),
            "speedup_over_torch": round(median("torch", "seconds") / median(path, "seconds"), 2),
            "median_cpu_seconds": round(median(path, "cpu_seconds"), 2),
            "cpu_speedup_over_torch": round(
                median("torch", "cpu_seconds") / median(path, "cpu_seconds"), 2
            ),
            "runs": runs[path],
        }
    cosine = (vectors["onnx int8"] * vectors["onnx fp32"]).sum(axis=1)
    return {
        "paths": paths,
        "fp32_onnx_max_abs_difference_from_torch": float(
            np.abs(vectors["onnx fp32"] - vectors["torch"]).max()
        ),
        "int8_cosine_to_fp32": {"min": float(cosine.min()), "mean": float(cosine.mean())},
    }


def query_latency(model: str) -> dict[str, dict[str, float]]:
    """p50 and p95 ms of one query's vector on each path, over the Cranfield queries."""
    queries = list(load_queries(beir_folder("cranfield") / "queries.jsonl").values())
    encoders = {
        "torch": torch_encoder(model),
        "onnx fp32": Encoder(model),
        "onnx int8": Encoder(model, precision="int8"),
    }
    found = {}
    for path, encoder in encoders.items():

        def embed(query: str, encoder: Encoder = encoder, path: str = path) -> object:
            if path == "torch":  # what encode_queries ran before: one pass, one thread
                return encoder._forward([encoder.spec.query_prefix + query])
            return encoder.encode_queries([query])

        per_call_ms(embed, queries[:10])
        found[path] = p50_p95(per_call_ms(embed, queries))
    return found


def show(result: dict) -> None:
    table = Table(
        "model",
        "path",
        "median s",
        "passages/s",
        "× torch",
        "CPU s",
        "× torch (CPU)",
        title=f"{result['passages']:,} Cranfield passages, {result['threads']} threads, "
        f"median of {result['rounds']} rounds",
    )
    for model, figures in result["models"].items():
        for path, row in figures["paths"].items():
            table.add_row(
                model,
                path,
                f"{row['median_seconds']:.1f}",
                f"{row['passages_per_s']:.1f}",
                f"{row['speedup_over_torch']:.2f}",
                f"{row['median_cpu_seconds']:.1f}",
                f"{row['cpu_speedup_over_torch']:.2f}",
            )
    Console().print(table)
    for model, paths in result.get("queries", {}).items():
        Console().print(
            f"{model}, one query: "
            + ", ".join(
                f"{path} p50 {t['p50_ms']} ms (p95 {t['p95_ms']})" for path, t in paths.items()
            )
        )
    for model, figures in result["models"].items():
        cosine = figures["int8_cosine_to_fp32"]
        Console().print(
            f"{model}: fp32 ONNX vs torch max |Δ| "
            f"{figures['fp32_onnx_max_abs_difference_from_torch']:.1e}; int8 vs fp32 cosine "
            f"min {cosine['min']:.4f}, mean {cosine['mean']:.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--part", choices=("passages", "queries"), default="passages")
    args = parser.parse_args()
    earlier = read_result("onnx_passages")
    if args.part == "queries":
        queries = {model: query_latency(model) for model in args.models}
        result = {**earlier, "queries": queries}
        path = write_result("onnx_passages", result, parts=["queries"], earlier=earlier)
    else:
        texts = passages(args.passages)
        result = {
            "passages": len(texts),
            "rounds": args.rounds,
            "threads": thread_count(os.environ),
            "models": {model: measure(model, texts, args.rounds) for model in args.models},
        }
        path = write_result("onnx_passages", result)
    show(result)
    print(path)


if __name__ == "__main__":
    main()
