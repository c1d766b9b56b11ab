"""Benchmark: duplicates in a real messy folder built from installed system documentation.

The folder is ``/usr/share/doc`` as this machine has it (licences, copyright files, changelogs,
READMEs and NEWS as plain text, Markdown, HTML and extensionless files, ``.gz`` files read
through ragkit's compressed reading), copied into a scratch folder package by package. Each
package goes to one of two sets by a hash of its name (CRC-32 mod :data:`TUNE_MODULUS` = 0:
the **tune** set, else the **report** set), so the near-duplicate threshold is chosen on
documents the reported numbers never see.

``--tune`` studies the threshold on the tune set (every file, any size, plus the report
packages' files larger than ``--max-kb``, which the report never reads): MinHash signatures of
every distinct content, LSH candidates at 0.5, each pair's true Jaccard of 5-shingle sets beside
the estimate; pairs flagged, documents grouped and groups at thresholds 0.5–0.95; and
:data:`SAMPLE` pairs spread over the estimate bands :data:`BANDS` and over families of
near-duplicates written to ``--pairs-out`` (heads and differing lines of both files) to be
judged by hand. The verdicts are :data:`JUDGED`; the
precision at each threshold is the share of judged pairs at or above it that are
near-duplicates (the same document with small changes).

The default run reports on the report set, at two sizes (whole packages in hash order until
``--small`` files; then every report file, about 5× as many), files up to ``--max-kb``
decompressed kilobytes (the embedding budget of two shared cores):

- ingest in a fresh process, with duplicate handling (this tree) and, for the
  ``--before-sizes`` (default: the small one), without (the tree before exact duplicates were
  handled, commit 991b54a~1, unpacked with ``git archive`` into a scratch folder and imported
  first through ``PYTHONPATH``, same virtualenv; ``--no-before`` skips it): wall seconds,
  chunks stored and chunks embedded (before, every stored chunk was embedded), stage seconds,
  peak RSS (``ru_maxrss``) and the RSS once every file is loaded (at the first progress call);
- exact duplicate rates (documents stored as copies, chunk texts not embedded again) and
  near-duplicate rates (documents in near-duplicate groups, groups) at the chosen threshold;
- 20 queries, top 10 hybrid hits with ``collapse`` on and off: distinct passages per query
  (hits whose text is neither the same as, nor near-identical to, a better hit's: word-set
  Jaccard at the threshold).

Defaults: ``all-minilm-l6-v2`` (what ``auto`` chooses for English), every other setting the
default. The machine is shared with other engineers' test runs: the load average is recorded.
Command (from the repository root)::

    .venv/bin/python -m benchmarks.duplicates --tune            # threshold study, pairs to read
    .venv/bin/python -m benchmarks.duplicates                   # the report (about 7 minutes)
    .venv/bin/python -m benchmarks.duplicates --load-all        # RSS of loading every file

Writes ``benchmarks/results/duplicates.json`` (the tune study under ``"tune"``, kept when only
the report runs, and vice versa) and prints tables.
"""

from __future__ import annotations

import argparse
import bz2
import difflib
import gzip
import lzma
import os
import platform
import shutil
import statistics
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rich.console import Console
from rich.table import Table

from benchmarks.common import read_result, write_result
from benchmarks.ingest_worker import before_tree, rss_kb, run_ingest

DOCS = Path("/usr/share/doc")
MODEL = "all-minilm-l6-v2"
TUNE_MODULUS = 6  # one package in six (by name hash) tunes the threshold
BEFORE = "991b54a~1"  # the tree before exact duplicates were stored as copies
SAMPLE = 36
BANDS = ((0.6, 0.7), (0.7, 0.75), (0.75, 0.8), (0.8, 0.85), (0.85, 0.9), (0.9, 1.01))
THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
OPENERS = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
QUERIES = [
    "how to configure the default locale",
    "permission to copy, modify and distribute the software",
    "the software is provided without warranty",
    "security vulnerability fixed in this release",
    "new upstream release with bug fixes",
    "how to report a bug",
    "build dependencies updated",
    "command line options documentation",
    "memory leak fixed",
    "python 3 support",
    "systemd service file",
    "translation updates",
    "compile from source with make",
    "configuration file in /etc",
    "deprecated functions removed",
    "unicode and utf-8 support",
    "performance improvements",
    "ssl certificate verification",
    "thread safety",
    "installation instructions",
]
# Hand verdicts on the tune pairs ``--tune`` writes out (42 pairs read: the 36 of the sample,
# and 6 more a larger tune set drew at first): "same" — one
# document with small changes (another release's notes, another format of one manual, the
# changelog of two binary packages of one source); "boilerplate" — two packages' own
# documents whose bulk is one licence text (grouping them is harmless for collapse, which folds
# only near-identical passages, but they are not one document); "different".
SAME, BOILERPLATE, DIFFERENT = "same", "boilerplate", "different"
JUDGED: dict[tuple[str, str], tuple[str, str]] = {
    ("git/RelNotes/2.14.1.txt", "git/RelNotes/2.8.6.txt"): (SAME, "one notice, versions differ"),
    ("libksba8/AUTHORS", "libksba8/copyright"): (DIFFERENT, "authors list vs licence notice"),
    ("nettle-dev/nettle.html", "nettle-dev/nettle.pdf.gz"): (SAME, "one manual, HTML and PDF"),
    ("nodejs/api/crypto.html", "nodejs/api/crypto.md"): (SAME, "one API page, HTML and Markdown"),
    ("fontconfig/fontconfig-user.html", "fontconfig/fontconfig-user.pdf.gz"): (SAME, "formats"),
    (
        "libxslt1-dev/gtk-doc/html/libxslt/libxslt-extensions.html",
        "libxslt1-dev/html/html/libxslt-extensions.html",
    ): (SAME, "one reference page from two doc generators"),
    ("ca-certificates/copyright", "publicsuffix/copyright"): (BOILERPLATE, "MPL-2.0 text"),
    ("nodejs/api/fs.html", "nodejs/api/fs.md"): (SAME, "formats"),
    ("libpython3-dev/copyright", "python3-distutils/copyright"): (
        BOILERPLATE,
        "the Python licence history under two different Debian headers",
    ),
    ("gcc-12-base/NEWS.gz", "gcc-12-base/NEWS.html"): (SAME, "formats"),
    ("git/RelNotes/2.20.4.txt", "git/RelNotes/2.21.3.txt"): (SAME, "versions differ"),
    (
        "libxslt1-dev/gtk-doc/html/libxslt/libxslt-templates.html",
        "libxslt1-dev/html/html/libxslt-templates.html",
    ): (SAME, "two doc generators"),
    ("bzip2/manual.html", "bzip2/manual.pdf.gz"): (SAME, "formats"),
    ("jq/copyright", "mawk/copyright"): (BOILERPLATE, "two packages sharing long licence texts"),
    ("git/RelNotes/2.5.6.txt", "git/RelNotes/2.8.5.txt"): (SAME, "versions differ"),
    ("nodejs/api/n-api.html", "nodejs/api/n-api.md"): (SAME, "formats"),
    ("libcolord2/copyright", "valgrind/html/license.gfdl.html"): (BOILERPLATE, "GFDL text"),
    ("git/RelNotes/2.14.4.txt", "git/RelNotes/2.16.4.txt"): (SAME, "versions differ"),
    ("nodejs/api/vm.html", "nodejs/api/vm.md"): (SAME, "formats"),
    ("git/RelNotes/2.18.1.txt", "git/RelNotes/2.19.1.txt"): (SAME, "versions differ"),
    ("git/RelNotes/2.35.6.txt", "git/RelNotes/2.37.5.txt"): (SAME, "versions differ"),
    ("nodejs/api/permissions.html", "nodejs/api/permissions.md"): (SAME, "formats"),
    ("nodejs/api/report.html", "nodejs/api/report.md"): (SAME, "formats"),
    ("git/RelNotes/2.3.10.txt", "git/RelNotes/2.4.10.txt"): (SAME, "versions differ"),
    ("git/RelNotes/2.4.10.txt", "git/RelNotes/2.6.1.txt"): (SAME, "versions differ"),
    ("valgrind/FAQ.txt.gz", "valgrind/html/faq.html"): (SAME, "formats"),
    (
        "shared-mime-info/shared-mime-info-spec.html/x34.html",
        "shared-mime-info/shared-mime-info-spec.pdf",
    ): (SAME, "one specification, HTML and PDF"),
    ("git/RelNotes/1.5.1.5.txt", "git/RelNotes/1.5.1.6.txt"): (SAME, "later notes add fixes"),
    ("gir1.2-glib-2.0/copyright", "libglib2.0-0/copyright"): (
        BOILERPLATE,
        "two source packages' notices, GLib's licence files in both",
    ),
    ("git/RelNotes/2.0.5.txt", "git/RelNotes/2.2.1.txt"): (SAME, "versions differ"),
    ("git/RelNotes/2.23.1.txt", "git/RelNotes/2.24.1.txt"): (SAME, "versions differ"),
    ("python3/python-policy.html", "python3/python-policy.txt.gz"): (SAME, "formats"),
    ("xtrans-dev/xtrans.html", "xtrans-dev/xtrans.txt.gz"): (SAME, "formats"),
    ("fontconfig/fontconfig-user.html", "fontconfig/fontconfig-user.txt.gz"): (SAME, "formats"),
    ("apt-transport-https/changelog.gz", "libapt-pkg6.0/changelog.gz"): (SAME, "one source"),
    ("postgresql-common/changelog.gz", "postgresql/changelog.gz"): (SAME, "one line added"),
    (
        "libxslt1-dev/gtk-doc/html/libxslt/libxslt-documents.html",
        "libxslt1-dev/html/html/libxslt-documents.html",
    ): (SAME, "two doc generators"),
    ("libdav1d6/copyright", "librav1e0/copyright"): (BOILERPLATE, "BSD and AOM patent texts"),
    ("google-cloud-cli-anthoscli/copyright", "libavif15/LICENSE.gz"): (BOILERPLATE, "Apache-2.0"),
    ("libaom3/copyright", "libdav1d6/copyright"): (BOILERPLATE, "BSD and AOM patent texts"),
    ("libsisu-inject-java/copyright", "libsisu-plexus-java/copyright"): (
        SAME,
        "one project's notice, component names and file lists differ",
    ),
    ("llvm-runtime/changelog.gz", "llvm/changelog.gz"): (SAME, "one source"),
}


def decompressed_size(path: Path) -> int:
    """Bytes of ``path``'s text (of the file a ``.gz``/``.bz2``/``.xz`` holds)."""
    opener = OPENERS.get(path.suffix)
    if opener is None:
        return path.stat().st_size
    try:
        with opener(path, "rb") as stream:
            return sum(len(block) for block in iter(lambda: stream.read(1 << 20), b""))
    except (OSError, EOFError, lzma.LZMAError):
        return 0


def packages(tune: bool) -> list[str]:
    """Package folders of ``/usr/share/doc`` in the tune (or report) set, in hash order."""
    chosen = [
        p.name
        for p in DOCS.iterdir()
        if p.is_dir() and not p.is_symlink()
        if (zlib.crc32(p.name.encode()) % TUNE_MODULUS == 0) == tune
    ]
    return sorted(chosen, key=lambda name: (zlib.crc32(name.encode()), name))


def package_files(name: str, max_bytes: int | None) -> list[Path]:
    """The regular files of one package folder (up to ``max_bytes`` of text each)."""
    found = []
    for path in sorted((DOCS / name).rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        if max_bytes is None or 0 < decompressed_size(path) <= max_bytes:
            found.append(path)
    return found


def build(target: Path, files: list[Path]) -> Path:
    """Copy ``files`` under ``target`` at their place below ``/usr/share/doc``."""
    for path in files:
        copy = target / path.relative_to(DOCS)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    return target


def select(tune: bool, max_bytes: int | None, limit: int | None) -> list[Path]:
    """Files of whole packages of one set, in hash order, until ``limit`` files (all: None)."""
    chosen: list[Path] = []
    for name in packages(tune):
        if limit is not None and len(chosen) >= limit:
            break
        chosen += package_files(name, max_bytes)
    return chosen


def load_texts(folder: Path) -> dict[str, tuple[str, str]]:
    """Key (relative to ``folder``) → (content hash, text) of every document ragkit loads."""
    from ragkit.documents import load_paths

    loaded = load_paths([folder])
    prefix = str(folder.resolve()) + "/"
    return {d.key.removeprefix(prefix): (d.content_hash, d.text) for d in loaded.documents}


# -- the threshold study -------------------------------------------------------------------------
def tune(pairs_out: Path, max_kb: int) -> dict[str, Any]:
    from datasketch import LeanMinHash, MinHashLSH

    from ragkit.pipeline.near_duplicates import NUM_PERM, SEED, shingles, signature, similarity

    console = Console()
    with tempfile.TemporaryDirectory(prefix="ragkit-dup-tune-") as scratch:
        max_bytes = max_kb * 1024
        files = select(True, None, None) + [
            p
            for name in packages(False)
            for p in package_files(name, None)
            if decompressed_size(p) > max_bytes
        ]
        texts = load_texts(build(Path(scratch) / "doc", files))
    holders: dict[str, list[str]] = {}
    for key, (content, _) in sorted(texts.items()):
        holders.setdefault(content, []).append(key)
    first = {keys[0]: len(keys) for keys in holders.values()}
    signed = {key: signature(texts[key][1]) for key in first}
    signed = {key: blob for key, blob in signed.items() if blob}
    lsh = MinHashLSH(threshold=0.5, num_perm=NUM_PERM)
    import numpy as np

    sketches = {}
    for key, blob in signed.items():
        sketches[key] = LeanMinHash(seed=SEED, hashvalues=np.frombuffer(blob, "<u4").astype("u8"))
        lsh.insert(key, sketches[key])
    shingled: dict[str, set[bytes]] = {}
    pairs = []
    for key, sketch in sketches.items():
        for other in lsh.query(sketch):
            if other <= key:
                continue
            estimate = similarity(signed[key], signed[other])
            if estimate < 0.5:
                continue
            a = shingled.setdefault(key, shingles(texts[key][1]))
            b = shingled.setdefault(other, shingles(texts[other][1]))
            true = len(a & b) / len(a | b)
            pairs.append({"a": key, "b": other, "estimate": estimate, "jaccard": true})
    by_threshold = {}
    for threshold in THRESHOLDS:
        flagged = [p for p in pairs if p["estimate"] >= threshold]
        judged = [JUDGED[p["a"], p["b"]][0] for p in flagged if (p["a"], p["b"]) in JUDGED]
        lenient = [verdict != DIFFERENT for verdict in judged]
        grouped = _components([(p["a"], p["b"]) for p in flagged])
        by_threshold[str(threshold)] = {
            "pairs": len(flagged),
            "documents_grouped": sum(first[k] for group in grouped for k in group),
            "groups": len(grouped),
            "judged": len(judged),
            "precision": sum(v == SAME for v in judged) / len(judged) if judged else None,
            "precision_boilerplate_counted": sum(lenient) / len(lenient) if lenient else None,
        }
    sample = _spread(pairs, _components([(p["a"], p["b"]) for p in pairs]))
    _write_pairs(pairs_out, sample, texts)
    errors = [abs(p["estimate"] - p["jaccard"]) for p in pairs]
    table = Table(
        "threshold", "pairs", "documents grouped", "groups", "judged", "precision", "+ boilerplate"
    )
    for threshold, row in by_threshold.items():
        precision = "—" if row["precision"] is None else f"{row['precision']:.2f}"
        lenient = row["precision_boilerplate_counted"]
        table.add_row(
            threshold,
            str(row["pairs"]),
            str(row["documents_grouped"]),
            str(row["groups"]),
            str(row["judged"]),
            precision,
            "—" if lenient is None else f"{lenient:.2f}",
        )
    console.print(table)
    console.print(f"{len(sample)} pairs to judge written to {pairs_out}")
    return {
        "packages": len(packages(True)),
        "files": len(files),
        "documents": len(texts),
        "distinct_contents": len(holders),
        "signed": len(signed),
        "candidate_pairs_at_0.5": len(pairs),
        "estimate_abs_error_mean": statistics.fmean(errors) if errors else None,
        "by_threshold": by_threshold,
        "judged": [
            {"a": a, "b": b, "verdict": verdict, "note": note}
            for (a, b), (verdict, note) in JUDGED.items()
        ],
        "sample": [
            {k: (round(v, 3) if isinstance(v, float) else v) for k, v in p.items()} for p in sample
        ],
    }


def _spread(pairs: list[dict], families: list[set[str]]) -> list[dict]:
    """:data:`SAMPLE` pairs, as many from each band of :data:`BANDS` (fewer where a band has
    fewer), taking in turn from each family of near-duplicates (a connected group at 0.5) so
    that one large family (a package's many release notes) does not fill the sample."""
    family = {key: number for number, keys in enumerate(families) for key in keys}

    def source(pair: dict) -> tuple[str, str]:  # the two packages a pair comes from
        return (pair["a"].split("/", 1)[0], pair["b"].split("/", 1)[0])

    chosen: list[dict] = []
    per_band = SAMPLE // len(BANDS)
    for low, high in BANDS:
        band = sorted(
            (p for p in pairs if low <= p["estimate"] < high),
            key=lambda p: zlib.crc32(f"{p['a']}|{p['b']}".encode()),
        )
        taken: dict[object, int] = {}
        picked: list[dict] = []
        while band and len(picked) < per_band:
            best = min(band, key=lambda p: (taken.get(source(p), 0), taken.get(family[p["a"]], 0)))
            band.remove(best)
            for seen in (source(best), family[best["a"]]):
                taken[seen] = taken.get(seen, 0) + 1
            picked.append(best)
        chosen += sorted(picked, key=lambda p: p["estimate"])
    return chosen


def _components(edges: list[tuple[str, str]]) -> list[set[str]]:
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        parent[root(a)] = root(b)
    groups: dict[str, set[str]] = {}
    for x in list(parent):
        groups.setdefault(root(x), set()).add(x)
    return list(groups.values())


def _write_pairs(path: Path, sample: list[dict], texts: dict[str, tuple[str, str]]) -> None:
    """Each sampled pair: its numbers, the first lines of each file and the lines that
    differ (a unified diff, cut short), to be read and judged."""
    out = []
    for number, pair in enumerate(sample, start=1):
        a, b = texts[pair["a"]][1], texts[pair["b"]][1]
        out.append(
            f"=== {number}. {pair['a']}  ~  {pair['b']}  estimate {pair['estimate']:.3f} "
            f"jaccard {pair['jaccard']:.3f}  ({len(a.split())} / {len(b.split())} words)"
        )
        out.append("--- head of a: " + " ".join(a.split())[:300])
        diff = list(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0))[2:]
        changed = [line for line in diff if not line.startswith("@@")]
        out.append(f"--- {len(changed)} changed lines; first ones:")
        out.extend(line[:160] for line in changed[:24])
        out.append("")
    path.write_text("\n".join(out), encoding="utf-8")


def load_all() -> dict[str, Any]:
    """RSS of a process before and after loading all of ``/usr/share/doc`` as ingest loads
    it (every document's text is held until the ingest ends): what grows with the corpus."""
    from ragkit.documents import load_paths

    before = rss_kb()
    loaded = load_paths([DOCS])
    return {
        "documents": len(loaded.documents),
        "skipped": len(loaded.skipped),
        "text_mb": sum(len(d.text) for d in loaded.documents) / 1e6,
        "rss_before_mb": before / 1024,
        "rss_after_load_mb": rss_kb() / 1024,
    }


# -- queries ---------------------------------------------------------------------------------------
def distinct_passages(texts: list[str], threshold: float) -> int:
    """How many of ``texts`` (best first) are neither the same passage as, nor near-identical
    to, a better one."""
    from ragkit.search.collapse import passage_key, word_jaccard

    kept: list[str] = []
    for text in texts:
        if any(
            passage_key(text) == passage_key(o) or word_jaccard(text, o) >= threshold for o in kept
        ):
            continue
        kept.append(text)
    return len(kept)


def query_study(index_path: Path) -> dict[str, Any]:
    from ragkit import Index
    from ragkit.pipeline.near_duplicates import THRESHOLD

    rows = []
    with Index.open(index_path) as index:
        for query in QUERIES:
            row: dict[str, Any] = {"query": query}
            for collapse in (False, True):
                hits = index.search(query, k=10, collapse=collapse)
                name = "on" if collapse else "off"
                row[f"distinct_{name}"] = distinct_passages([h.text for h in hits], THRESHOLD)
                row[f"hits_{name}"] = len(hits)
                row[f"folded_{name}"] = sum(len(h.duplicates) for h in hits)
            rows.append(row)
    return {
        "queries": rows,
        "mean_distinct_off": statistics.fmean(r["distinct_off"] for r in rows),
        "mean_distinct_on": statistics.fmean(r["distinct_on"] for r in rows),
        "queries_with_repeats_off": sum(r["distinct_off"] < r["hits_off"] for r in rows),
        "queries_with_repeats_on": sum(r["distinct_on"] < r["hits_on"] for r in rows),
    }


def report_study(args: argparse.Namespace) -> dict[str, Any]:
    console = Console()
    max_bytes = args.max_kb * 1024
    sizes: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ragkit-dup-") as scratch_name:
        scratch = Path(scratch_name)
        source = before_tree(scratch / "before", BEFORE) if args.before else None
        everything = select(False, max_bytes, None)
        small = select(False, max_bytes, args.small)
        for label, files in (("small", small), ("large", everything)):
            folder = build(scratch / label / "doc", files)
            text_bytes = sum(decompressed_size(p) for p in files)
            after = run_ingest(folder, scratch / label / "index-after", None, MODEL)
            entry: dict[str, Any] = {
                "files": len(files),
                "packages": len({p.relative_to(DOCS).parts[0] for p in files}),
                "compressed_files": sum(p.suffix in OPENERS for p in files),
                "text_mb": text_bytes / 1e6,
                "after": after,
            }
            console.print(f"{label}: {len(files)} files, after {after['wall_seconds']:.0f} s")
            if source is not None and label in args.before_sizes:
                before = run_ingest(folder, scratch / label / "index-before", source, MODEL)
                entry["before"] = before
                console.print(f"{label}: before {before['wall_seconds']:.0f} s")
            if label == "large":
                entry["queries"] = query_study(scratch / label / "index-after")
            shutil.rmtree(folder)
            sizes[label] = entry
    return {"sizes": sizes, "max_kb": args.max_kb}


def print_report(report: dict[str, Any]) -> None:
    console = Console()
    table = Table(
        "size",
        "files",
        "text MB",
        "run",
        "wall s",
        "chunks",
        "embedded",
        "copies",
        "near docs / groups",
        "RSS load MB",
        "peak RSS MB",
    )
    for label, entry in report["sizes"].items():
        for run in ("before", "after"):
            if run not in entry:
                continue
            found = entry[run]
            r = found["report"]
            near = (
                f"{r['near_duplicate_documents']} / {r['near_duplicate_groups']}"
                if "near_duplicate_documents" in r
                else "—"
            )
            table.add_row(
                label,
                str(entry["files"]),
                f"{entry['text_mb']:.1f}",
                run,
                f"{found['wall_seconds']:.0f}",
                str(r["chunks_added"]),
                str(r.get("chunks_embedded", r["chunks_added"])),
                str(r.get("documents_copied", 0)),
                near,
                f"{found['rss_after_load_mb']:.0f}",
                f"{found['peak_rss_mb']:.0f}",
            )
    console.print(table)
    queries = report["sizes"].get("large", {}).get("queries")
    if queries:
        console.print(
            f"distinct passages in the top 10 (mean of {len(queries['queries'])} queries): "
            f"collapse off {queries['mean_distinct_off']:.2f}, on {queries['mean_distinct_on']:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tune", action="store_true", help="the threshold study only")
    parser.add_argument("--pairs-out", type=Path, default=Path("duplicates-pairs.txt"))
    parser.add_argument("--small", type=int, default=400, help="files of the small size")
    parser.add_argument("--max-kb", type=int, default=8, help="largest file (decompressed kB)")
    parser.add_argument("--no-before", dest="before", action="store_false")
    parser.add_argument(
        "--before-sizes", nargs="+", default=["small"], help="sizes ingested before, too"
    )
    parser.add_argument("--load-all", action="store_true", help="memory of loading all docs")
    args = parser.parse_args()
    earlier = read_result("duplicates")
    saved = dict(earlier)
    started = time.perf_counter()
    load = os.getloadavg()
    if args.load_all:
        saved["load_all"] = load_all()
        Console().print(saved["load_all"])
    elif args.tune:
        saved["tune"] = tune(args.pairs_out, args.max_kb)
    else:
        saved["report"] = report_study(args)
        print_report(saved["report"])
    saved.setdefault("machine", {})
    part = "load_all" if args.load_all else "tune" if args.tune else "report"
    saved["machine"][part] = {
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_start": load,
        "load_average_end": os.getloadavg(),
        "seconds": time.perf_counter() - started,
        "note": "shared with other engineers' test runs",
    }
    saved["model"] = MODEL
    write_result("duplicates", saved, parts=[part], earlier=earlier, indent=1)


if __name__ == "__main__":
    main()
