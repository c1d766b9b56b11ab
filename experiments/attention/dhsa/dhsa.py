"""Prefill latency, peak memory and fidelity of DHSA vs dense attention in one interaction layer.

Run::

    .venv/bin/python -m experiments.attention.dhsa.dhsa   # 1k, 2k, 4k, 8k, 16k tokens
    .venv/bin/python -m experiments.attention.dhsa.dhsa --lengths 1024 2048  # these rows only (others kept)
    .venv/bin/python -m experiments.attention.dhsa.dhsa --parts reranker --reranker FOLDER  # whole reranker

The layer is ragkit's :class:`~ragkit.rerank.layers.InteractionLayer` (pre-norm, hidden 384,
6 heads, FFN 1536, seeded random weights), run once with ``AttentionConfig()`` (dense, the
reference: PyTorch's fused SDPA kernel, memory linear in length) and once with
``AttentionConfig(kind="dhsa")`` at its defaults (budget 1024 keys per 64-token query block,
window 64 each side, key chunks of about 16). Its input is a real reranking group: the
bundled MiniLM's token states of a CISI query (32 tokens) followed by the longest CISI
abstracts (256 tokens each, as candidates), cut to the length measured.

- **Latency**: one forward pass (prefill, no gradients) on 2 threads; dense and DHSA runs are
  interleaved, best and median of ``--repeats`` runs reported (this machine is shared, so the
  best run is the least disturbed one). ``OMP_WAIT_POLICY=PASSIVE`` by default: on a machine
  shared with other jobs, spinning OpenMP threads lose their core at every barrier, which
  punishes DHSA's many small parallel operations far more than dense attention's single
  fused kernel (``--omp-wait-policy default`` measures that case).
- **Peak memory**: each configuration runs once in a fresh subprocess; the peak resident set
  during the forward pass above the resident set just before it (Linux ``VmHWM``, reset via
  ``/proc/self/clear_refs``); the same for the attention call alone (q, k, v given).
  ``dense-math`` is dense attention forced onto SDPA's unfused kernel (the full score matrix
  in memory, as eager attention code has), up to 8k (DHSA's peak against it: ``memory_ratio_vs_math``).
- **Fidelity**: cosine between the DHSA and dense outputs per valid token, of the attention
  output (before the output projection) and of the whole layer (residual included). For
  scale, on 128 sampled queries: the *oracle* that keeps each query's own ``budget``
  highest-weighted keys (no selection of that many keys does better per query). A randomly
  initialised layer attends diffusely, so even the oracle loses part of the attention mass.

**Whole reranker** (:func:`reranker_fidelity`, when a trained reranker loads): the shipped
groupwise reranker with dense vs DHSA attention (``--rerank-budget`` keys per 32-token block)
reranking the hybrid top-50 of Cranfield and CISI: Kendall τ of the scores, nDCG@10 of both,
and a needle test (the best-judged document among unjudged ones, first / middle / last in a
group: is it ranked first?). ``--parts reranker`` runs this part alone and keeps the layer
results already in the JSON file.

Writes ``experiments/attention/dhsa/dhsa.json`` and prints a table with the DHSA / dense ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

# As started: importing ragkit sets OMP_WAIT_POLICY=PASSIVE when unset (ragkit.threads).
STARTING_WAIT_POLICY = os.environ.get("OMP_WAIT_POLICY")

import torch
import torch.nn.functional as F
from rich.console import Console
from rich.table import Table
from torch.nn.attention import SDPBackend, sdpa_kernel

from ragkit.rerank.attention import AttentionConfig, attend
from ragkit.rerank.layers import InteractionLayer

if TYPE_CHECKING:
    from ragkit.rerank.reranker import Reranker

from benchmarks.common import BEIR, ROOT, load_beir, read_result, write_result

HERE = Path(__file__).resolve().parent
MODULE = "experiments.attention.dhsa.dhsa"  # run as python -m MODULE from the repository root
CISI = BEIR / "cisi"
LENGTHS = (1024, 2048, 4096, 8192, 16384)
HIDDEN, HEADS, FFN = 384, 6, 1536
QUERY_TOKENS, DOC_TOKENS = 32, 256
THREADS = 2
SEED = 0
MATH_LIMIT = 8192  # the unfused peer holds heads × tokens² scores: 1.5 GiB per copy at 8k
CONFIGS = {"dense": AttentionConfig(), "dhsa": AttentionConfig(kind="dhsa")}

log = logging.getLogger("benchmarks.dhsa")


def group_states(tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(1, tokens, 384)`` MiniLM states of a CISI query and abstracts, and their segments."""
    from ragkit.rerank.backbone import Backbone

    docs = [json.loads(line) for line in (CISI / "corpus.jsonl").open()]
    docs.sort(key=lambda d: (-len(d["text"]), d["_id"]))
    query = json.loads((CISI / "queries.jsonl").open().readline())["text"]
    backbone = Backbone("all-minilm-l6-v2")
    parts = [backbone.encode([query], QUERY_TOKENS, "query")]
    need = -(-(tokens - QUERY_TOKENS) // DOC_TOKENS) + 8  # abstracts shorter than 256 exist
    parts.append(backbone.encode([d["text"] for d in docs[:need]], DOC_TOKENS, "passage"))
    states, segments = [], []
    for part, offset in ((parts[0], 0), (parts[1], 1)):
        for row, (hidden, mask) in enumerate(zip(part.hidden, part.mask, strict=True)):
            states.append(hidden[mask])
            segments.append(torch.full((int(mask.sum()),), row + offset))
    x, seg = torch.cat(states)[:tokens], torch.cat(segments)[:tokens]
    if len(x) < tokens:
        raise SystemExit(f"CISI gave {len(x)} tokens, fewer than {tokens}")
    return x[None], seg[None]


def make_layer() -> InteractionLayer:
    torch.manual_seed(SEED)
    return InteractionLayer(HIDDEN, HEADS, FFN).eval()


def projections(layer: InteractionLayer, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The layer's q, k, v ``(batch, heads, tokens, head_dim)`` for input ``x``."""
    qkv = layer.qkv(layer.norm1(x)).view(*x.shape[:2], 3, HEADS, -1)
    return qkv.permute(2, 0, 3, 1, 4).unbind(0)


def oracle_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, seg: torch.Tensor, rows: torch.Tensor
) -> torch.Tensor:
    """``(len(rows), hidden)``: attention of query ``rows`` restricted to each query's own
    ``budget`` highest-weighted keys (the best any selection of that many keys can do)."""
    scores = q[0][:, rows] @ k[0].transpose(-1, -2) / q.shape[-1] ** 0.5
    scores.masked_fill_(seg[0] < 0, -torch.inf)
    top = scores.topk(CONFIGS["dhsa"].budget, dim=-1)
    weights = torch.zeros_like(scores).scatter_(-1, top.indices, top.values.softmax(-1))
    return (weights @ v[0]).transpose(0, 1).flatten(1)


def cosines(a: torch.Tensor, b: torch.Tensor) -> dict[str, float]:
    values = F.cosine_similarity(a.flatten(0, -2).double(), b.flatten(0, -2).double(), dim=-1)
    return {"mean": round(float(values.mean()), 5), "min": round(float(values.min()), 5)}


@torch.inference_mode()
def fidelity(layer: InteractionLayer, x: torch.Tensor, seg: torch.Tensor) -> dict[str, dict]:
    """Cosines to dense of DHSA's attention and layer outputs; on 128 sampled queries, also of
    the oracle that keeps each query's top-``budget`` keys."""
    q, k, v = projections(layer, x)
    outputs = {}
    for kind, config in CONFIGS.items():
        layer.attention = config
        mixed = attend(q, k, v, seg, config).transpose(1, 2).flatten(2)[0]  # (tokens, hidden)
        outputs[kind] = (mixed, layer(x, seg))
    rows = torch.nonzero(seg[0] >= 0).flatten()
    rows = rows[torch.linspace(0, len(rows) - 1, 128).long()]
    return {
        "attention": cosines(outputs["dhsa"][0], outputs["dense"][0]),
        "layer": cosines(outputs["dhsa"][1], outputs["dense"][1]),
        "attention_sampled": cosines(outputs["dhsa"][0][rows], outputs["dense"][0][rows]),
        "oracle_sampled": cosines(oracle_attention(q, k, v, seg, rows), outputs["dense"][0][rows]),
    }


@torch.inference_mode()
def latency(
    layer: InteractionLayer, x: torch.Tensor, seg: torch.Tensor, repeats: int
) -> dict[str, dict]:
    runs: dict[str, list[float]] = {kind: [] for kind in CONFIGS}
    for attempt in range(repeats + 1):  # the first round warms up and is not counted
        for kind, config in CONFIGS.items():
            layer.attention = config
            start = time.perf_counter()
            layer(x, seg)
            if attempt:
                runs[kind].append(time.perf_counter() - start)
    return {
        kind: {"best_s": round(min(r), 4), "median_s": round(sorted(r)[len(r) // 2], 4), "runs": r}
        for kind, r in runs.items()
    }


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


@torch.inference_mode()
def child(kind: str, scope: str, tokens: int, states: Path) -> None:
    """One forward pass of the layer (or its attention call only, ``scope="attention"``) in
    this fresh process; prints its peak memory as JSON."""
    torch.set_num_threads(THREADS)
    saved = torch.load(states)
    x, seg = saved["x"][:, :tokens].clone(), saved["segments"][:, :tokens].clone()
    del saved
    layer = make_layer()
    layer.attention = config = CONFIGS["dense" if kind == "dense-math" else kind]
    layer(x[:, :256], seg[:, :256])  # load kernels and thread pools outside the measurement
    q, k, v = projections(layer, x) if scope == "attention" else (None, None, None)
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current resident set
    before = _status_mib("VmRSS")
    with sdpa_kernel(SDPBackend.MATH) if kind == "dense-math" else contextlib.nullcontext():
        if q is None:
            layer(x, seg)
        else:
            attend(q, k, v, seg, config)
    peak = _status_mib("VmHWM")
    print(json.dumps({"peak_mib": round(peak - before, 1), "rss_peak_mib": round(peak, 1)}))


def peak_memory(kind: str, scope: str, tokens: int, states: Path, runs: int = 2) -> dict:
    """The lowest peak of ``runs`` fresh processes (allocator effects vary a little per run)."""
    command = [sys.executable, "-m", MODULE, "--child", kind, scope, str(tokens), str(states)]
    results = [
        json.loads(
            subprocess.run(
                command, cwd=ROOT, capture_output=True, text=True, check=True
            ).stdout.split("\n")[-2]
        )
        for _ in range(runs)
    ]
    return min(results, key=lambda result: result["peak_mib"])


def use_attention(reranker: Reranker, config: AttentionConfig) -> None:
    """Make every interaction layer of ``reranker`` attend with ``config``."""
    for module in reranker.model.modules():
        if isinstance(module, InteractionLayer):
            module.attention = config


def reranker_fidelity(
    reranker: Reranker,
    runs: dict[str, list[tuple[str, str, float]]],
    queries: dict[str, str],
    qrels: dict[str, dict[str, int]],
    dhsa: AttentionConfig,
) -> dict[str, float]:
    """The whole reranker with dense vs ``dhsa`` attention on first-stage candidate lists.

    ``runs``: per query, candidates ``(doc id, text, first-stage score)``. Returns the mean
    Kendall τ between the two score lists, nDCG@10 of both rankings, and the needle test: the
    query's best-judged candidate placed first, in the middle and last of one group of
    ``group_size`` among unjudged candidates (distractors); how often it comes out first.
    """
    from scipy.stats import kendalltau

    from ragkit.evaluate import ndcg_at_k
    from ragkit.rerank.backbone import StateBank
    from ragkit.rerank.features import first_stage_prior, overlaps

    config = reranker.config
    passages = StateBank(reranker.backbone, config.doc_tokens, "passage")
    query_bank = StateBank(reranker.backbone, config.query_tokens, "query")
    kinds = {"dense": AttentionConfig(), "dhsa": dhsa}
    taus, ndcg = [], {kind: [] for kind in kinds}
    needles = {kind: 0 for kind in (*kinds, "both")}
    trials = 0
    for query_id, candidates in runs.items():
        ids = [doc for doc, _, _ in candidates]
        texts = [text for _, text, _ in candidates]
        query, docs = query_bank.get([queries[query_id]]), passages.get(texts)
        overlap = overlaps(queries[query_id], texts, "en")
        prior = first_stage_prior([score for *_, score in candidates], len(candidates))
        scores = {}
        for kind, attention in kinds.items():
            use_attention(reranker, attention)
            scores[kind] = reranker.score_states(query, docs, overlap, prior)
            ranked = [ids[i] for i in sorted(range(len(ids)), key=lambda i: -scores[kind][i])]
            ndcg[kind].append(ndcg_at_k(ranked, qrels[query_id]))
        taus.append(float(kendalltau(scores["dense"], scores["dhsa"]).statistic))
        judged = qrels[query_id]
        distractors = [i for i, doc in enumerate(ids) if doc not in judged]
        relevant = [i for i, doc in enumerate(ids) if judged.get(doc, 0) > 0]
        if not relevant or len(distractors) < config.group_size - 1:
            continue
        needle = max(relevant, key=lambda i: judged[ids[i]])
        for place in (0, config.group_size // 2, config.group_size - 1):
            group = distractors[: config.group_size - 1]
            group.insert(place, needle)
            members = torch.tensor(group)
            states = type(docs)(docs.hidden[members], docs.mask[members])
            first = {}
            for kind, attention in kinds.items():
                use_attention(reranker, attention)
                needle_scores = reranker.score_states(  # equal priors: no hint from the place
                    query, states, overlap[members], torch.ones(len(group))
                )
                first[kind] = int(needle_scores.argmax())
                needles[kind] += first[kind] == place
            needles["both"] += first["dense"] == place == first["dhsa"]
            trials += 1
    use_attention(reranker, config.attention_config())
    return {
        "queries": len(runs),
        "kendall_tau": round(sum(taus) / len(taus), 4),
        "ndcg_at_10_dense": round(sum(ndcg["dense"]) / len(runs), 4),
        "ndcg_at_10_dhsa": round(sum(ndcg["dhsa"]) / len(runs), 4),
        "needle_trials": trials,
        **{f"needle_first_{kind}": round(n / max(trials, 1), 4) for kind, n in needles.items()},
    }


def reranker_rows(name: str | None, budget: int, index_root: Path) -> dict:
    """:func:`reranker_fidelity` on Cranfield and CISI (hybrid top-50), or why it was skipped."""
    from ragkit.errors import RagkitError
    from ragkit.rerank.reranker import Reranker

    try:
        reranker = Reranker.load(name)
    except RagkitError as error:
        return {"pending": str(error)}
    from ragkit.training.judged import candidate_list, first_stage_index

    dhsa = AttentionConfig(kind="dhsa", budget=budget, block_size=32, local_window=16)
    rows = {"attention": dhsa.__dict__, "group_size": reranker.config.group_size}
    for dataset in ("cranfield", "cisi"):
        judgments = load_beir(dataset)
        index = first_stage_index(index_root / dataset, judgments, reranker.config.backbone)
        runs = {q: candidate_list(index, judgments.queries[q], 50) for q in judgments.judged}
        index.close()
        rows[dataset] = reranker_fidelity(reranker, runs, judgments.queries, judgments.qrels, dhsa)
    return rows


def ratio(a: float, b: float) -> float:
    return round(a / b, 3) if b else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=4, metavar=("KIND", "SCOPE", "TOKENS", "STATES"))
    parser.add_argument(
        "--omp-wait-policy",
        choices=["PASSIVE", "ACTIVE", "default"],
        default="PASSIVE",
        help="OpenMP threads' waiting: PASSIVE sleeps (the setting for a shared machine)",
    )
    parser.add_argument("--reranker", help="reranker name or folder (default: the shipped one)")
    parser.add_argument("--rerank-budget", type=int, default=160, help="DHSA keys per block")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ragkit-dhsa")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=["layer", "reranker"],
        default=["layer", "reranker"],
        help="what to measure; the other part's results already in the JSON file are kept",
    )
    args = parser.parse_args()
    wanted = None if args.omp_wait_policy == "default" else args.omp_wait_policy
    if STARTING_WAIT_POLICY != wanted:  # libgomp reads it once, at start-up
        env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
        env.update({"OMP_WAIT_POLICY": wanted} if wanted else {})
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", MODULE, *sys.argv[1:]], env)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]), Path(args.child[3]))
        return
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.set_num_threads(THREADS)
    earlier = read_result("dhsa", HERE)
    result = dict(earlier)
    if "layer" in args.parts:
        measured = layer_result(args.lengths, args.repeats, args.omp_wait_policy)
        kept = [row for row in result.get("rows", []) if row["tokens"] not in args.lengths]
        measured["rows"] = sorted(kept + measured["rows"], key=lambda row: row["tokens"])
        result.update(measured)
    if "reranker" in args.parts:
        result["reranker"] = reranker_rows(args.reranker, args.rerank_budget, args.work)
    write_result("dhsa", result, HERE, parts=args.parts, earlier=earlier)
    show(result.get("rows", []))
    Console().print_json(data=result.get("reranker", {"not measured": True}))


def layer_result(lengths: list[int], repeats: int, wait_policy: str) -> dict:
    """The interaction-layer measurements at each length (see the module docstring)."""
    x, seg = group_states(max(lengths))
    layer = make_layer()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        states = Path(scratch) / "states.pt"
        torch.save({"x": x, "segments": seg}, states)
        for tokens in lengths:
            log.info("%d tokens", tokens)
            xs, ss = x[:, :tokens], seg[:, :tokens]
            kinds = list(CONFIGS) + (["dense-math"] if tokens <= MATH_LIMIT else [])
            row = {
                "tokens": tokens,
                "candidates": int(ss.max()),
                "latency": latency(layer, xs, ss, repeats),
                "memory": {kind: peak_memory(kind, "layer", tokens, states) for kind in kinds},
                "attention_memory": {
                    kind: peak_memory(kind, "attention", tokens, states) for kind in kinds
                },
                "cosine": fidelity(layer, xs, ss),
            }
            time_ = row["latency"]
            row["time_ratio_best"] = ratio(time_["dhsa"]["best_s"], time_["dense"]["best_s"])
            row["time_ratio_median"] = ratio(time_["dhsa"]["median_s"], time_["dense"]["median_s"])
            memory = row["memory"]
            row["memory_ratio"] = ratio(memory["dhsa"]["peak_mib"], memory["dense"]["peak_mib"])
            if "dense-math" in memory:
                row["memory_ratio_vs_math"] = ratio(
                    memory["dhsa"]["peak_mib"], memory["dense-math"]["peak_mib"]
                )
            attention = row["attention_memory"]
            row["attention_memory_ratio"] = ratio(
                attention["dhsa"]["peak_mib"], attention["dense"]["peak_mib"]
            )
            rows.append(row)
    return {
        "layer": {"hidden": HIDDEN, "heads": HEADS, "ffn": FFN, "seed": SEED},
        "dhsa": CONFIGS["dhsa"].__dict__,
        "threads": THREADS,
        "omp_wait_policy": wait_policy,
        "repeats": repeats,
        "input": "MiniLM token states: 1 CISI query (32 tokens) + longest CISI abstracts (256)",
        "torch": torch.__version__,
        "rows": rows,
    }


def show(rows: list[dict]) -> None:
    table = Table(title="One interaction layer (384/6/1536), prefill on 2 threads: DHSA vs dense")
    for column in (
        "tokens",
        "dense s",
        "dhsa s",
        "time ×",
        "dense MiB",
        "dhsa MiB",
        "mem ×",
        "math MiB",
        "attn-only MiB d/dhsa (×)/math",
        "attn cos",
        "sampled: dhsa / oracle",
        "layer cos",
    ):
        table.add_column(column, justify="right")
    for row in rows:
        time_, memory, cos = row["latency"], row["memory"], row["cosine"]
        math = memory.get("dense-math", {}).get("peak_mib")
        attention = row["attention_memory"]
        attention_math = f"{attention['dense-math']['peak_mib']:.0f}" if math else "-"
        table.add_row(
            f"{row['tokens']:,}",
            f"{time_['dense']['best_s']:.3f}",
            f"{time_['dhsa']['best_s']:.3f}",
            f"{row['time_ratio_best']:.2f} ({row['time_ratio_median']:.2f})",
            f"{memory['dense']['peak_mib']:.0f}",
            f"{memory['dhsa']['peak_mib']:.0f}",
            f"{row['memory_ratio']:.2f}",
            "-" if math is None else f"{math:.0f}",
            f"{attention['dense']['peak_mib']:.0f} / {attention['dhsa']['peak_mib']:.0f} "
            f"({row['attention_memory_ratio']:.2f}) / {attention_math}",
            f"{cos['attention']['mean']:.4f} (min {cos['attention']['min']:.3f})",
            f"{cos['attention_sampled']['mean']:.4f} / {cos['oracle_sampled']['mean']:.4f}",
            f"{cos['layer']['mean']:.4f}",
        )
    console = Console(width=160)
    console.print(table)
    console.print("time ×: best-run ratio DHSA / dense (median-run ratio in brackets)")


if __name__ == "__main__":
    main()
