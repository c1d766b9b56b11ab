"""Near-duplicate documents: MinHash signatures of word 5-shingles, grouped with LSH.

Exact copies (the same content hash) are stored once already (:mod:`ragkit.pipeline.duplicates`);
this module finds documents that are *almost* the same — one licence with another copyright
line, a README of two versions, the changelog of two binary packages of one source. Each
document of at least :data:`MIN_WORDS` words gets a signature: a MinHash (``datasketch``,
:data:`NUM_PERM` permutations, a fixed seed) of the set of its 5-word shingles, words being
``\\w+`` runs of the lowercased text. Two documents whose estimated Jaccard similarity of
shingle sets is at least :data:`THRESHOLD` are near-duplicates; groups are the connected
pieces of that relation (candidates from ``MinHashLSH``, each pair checked on its signatures),
named by their smallest key. A group holds documents of at least two different contents
(copies alone are exact duplicates, not near ones).

Signatures are kept per document key in the store (:meth:`ragkit.store.IndexStore.signatures`)
and groups are updated at the end of each ingest and each removal (:func:`update`), so an index
built before signatures existed gets them on its next ingest.

Example:
    >>> base = " ".join(f"word{i}" for i in range(60))
    >>> a, b = signature(base), signature(base.replace("word30", "other"))
    >>> 0.75 < similarity(a, b) < 0.9, signature("Too short to compare.")  # true Jaccard 0.84
    (True, b'')
    >>> groups({"/a": a, "/b": b, "/c": signature(base[::-1])}, {"/a": "h1", "/b": "h2", "/c": "h3"})
    {'/a': '/a', '/b': '/a'}
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from ragkit.store import IndexStore

log = logging.getLogger(__name__)

NUM_PERM = 128  # MinHash permutations: the estimate's standard error at J = 0.8 is ~0.035
SEED = 44  # fixed: signatures written by one ingest are compared with those of later ones
SHINGLE_WORDS = 5
MIN_WORDS = 10  # shorter texts (titles, one-line notes) get no signature
THRESHOLD = 0.8  # estimated Jaccard of 5-shingle sets (benchmarks/duplicates.py chose it)
HASH_BATCH = 4096  # shingles hashed per numpy step (bounds the (NUM_PERM, batch) temporaries)
READ_BATCH = 100  # documents read back per call when a stored one has no signature yet
_WORD = re.compile(r"\w+")


def shingles(text: str) -> set[bytes]:
    """The distinct word 5-shingles of ``text`` (lowercased ``\\w+`` runs joined by one space),
    encoded; empty when ``text`` has fewer than :data:`MIN_WORDS` words.

    Example:
        >>> found = shingles("One two three four five six seven eight nine ten")
        >>> len(found), sorted(found)[0]
        (6, b'five six seven eight nine')
    """
    words = _WORD.findall(text.lower())
    if len(words) < MIN_WORDS:
        return set()
    last = len(words) - SHINGLE_WORDS + 1
    return {" ".join(words[i : i + SHINGLE_WORDS]).encode() for i in range(last)}


def signature(text: str) -> bytes:
    """The MinHash signature of ``text`` as :data:`NUM_PERM` little-endian uint32 values (its
    stored form), or ``b""`` for a text of fewer than :data:`MIN_WORDS` words."""
    from datasketch import MinHash

    found = list(shingles(text))
    if not found:
        return b""
    minhash = MinHash(num_perm=NUM_PERM, seed=SEED)
    for start in range(0, len(found), HASH_BATCH):
        minhash.update_batch(found[start : start + HASH_BATCH])
    # datasketch keeps hash values below 2**32: uint32 holds them exactly, in half the bytes
    return minhash.hashvalues.astype("<u4").tobytes()


def _values(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype="<u4")


def similarity(a: bytes, b: bytes) -> float:
    """The Jaccard similarity of two documents' shingle sets, estimated from their signatures
    (the share of equal slots); 0 when either has none."""
    if not a or not b:
        return 0.0
    return float(np.mean(_values(a) == _values(b)))


def groups(
    signatures: Mapping[str, bytes], hashes: Mapping[str, str], threshold: float = THRESHOLD
) -> dict[str, str]:
    """Key → group key (its smallest key) for every document in a near-duplicate group: a
    connected piece of the pairs whose estimated similarity is at least ``threshold`` that
    holds at least two different contents (``hashes``: key → content hash). Keys without a
    signature (``b""``) are in no group."""
    from datasketch import LeanMinHash, MinHashLSH

    holders: dict[bytes, list[str]] = {}  # copies share one signature: compare it once
    for key, blob in signatures.items():
        if blob:
            holders.setdefault(blob, []).append(key)
    distinct = list(holders)
    lsh = MinHashLSH(threshold=threshold, num_perm=NUM_PERM)
    sketches = []
    for number, blob in enumerate(distinct):
        sketch = LeanMinHash(seed=SEED, hashvalues=_values(blob).astype(np.uint64))
        lsh.insert(number, sketch, check_duplication=False)
        sketches.append(sketch)
    parent = list(range(len(distinct)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for number, sketch in enumerate(sketches):
        for other in lsh.query(sketch):
            if other > number and similarity(distinct[number], distinct[other]) >= threshold:
                parent[root(other)] = root(number)
    members: dict[int, list[str]] = {}
    for number, blob in enumerate(distinct):
        members.setdefault(root(number), []).extend(holders[blob])
    found: dict[str, str] = {}
    for keys in members.values():
        if len({hashes.get(key, key) for key in keys}) >= 2:
            first = min(keys)
            found.update(dict.fromkeys(keys, first))
    return found


@dataclass
class NearDuplicateReport:
    """What :func:`update` did: signatures computed from stored text (documents that had none),
    entries dropped (documents no longer stored), documents in groups, groups, seconds."""

    read_back: int = 0
    dropped: int = 0
    grouped: int = 0
    groups: int = 0
    seconds: float = 0.0


def update(
    store: IndexStore, computed: Mapping[str, bytes | None], threshold: float = THRESHOLD
) -> NearDuplicateReport:
    """Bring the store's signatures and groups up to date after commits or removals.

    ``computed``: signatures of the documents this run committed (from their text in memory;
    None for a copy, which takes its content's). A stored document with no signature takes that of a document with the same content, else
    one computed from its stored text (an index built before signatures, a renamed file);
    entries of documents no longer stored are dropped; then every group is found again and
    only the entries whose signature or group changed are written.
    """
    clock = time.perf_counter()
    report = NearDuplicateReport()
    hashes = store.document_hashes()
    stored = store.signatures()
    removed = [key for key in stored if key not in hashes]
    current = {key: blob for key, blob in stored.items() if key in hashes and key not in computed}
    fresh = {key: blob for key, blob in computed.items() if key in hashes and blob is not None}
    current.update(fresh)
    by_content = {hashes[key]: blob for key, blob in current.items()}
    missing = [key for key in hashes if key not in current]
    unread: dict[str, list[str]] = {}  # content hash → keys that need it read back
    for key in missing:
        if hashes[key] in by_content:
            fresh[key] = by_content[hashes[key]]
        else:
            unread.setdefault(hashes[key], []).append(key)
    if unread:
        log.info("near-duplicates: signatures of %d stored documents that have none", len(unread))
    firsts = [keys[0] for keys in unread.values()]
    for start in range(0, len(firsts), READ_BATCH):
        for pending in store.stored_documents(firsts[start : start + READ_BATCH]):
            blob = signature(pending.document.text)
            fresh.update(dict.fromkeys(unread[hashes[pending.document.key]], blob))
            report.read_back += 1
    current.update(fresh)
    before = store.near_duplicate_groups()
    if not fresh and not removed:  # nothing new, nothing gone: the stored groups hold
        found = dict(before)
    else:
        found = groups(current, hashes, threshold)
    rows = {
        key: (blob, found.get(key))
        for key, blob in current.items()
        if key in fresh or found.get(key) != before.get(key)
    }
    if rows or removed:
        store.write_near_duplicates(rows, removed)
    report.dropped = len(removed)
    report.grouped = len(found)
    report.groups = len(set(found.values()))
    report.seconds = time.perf_counter() - clock
    log.info(
        "near-duplicates: %d documents in %d groups (%d signatures read back, %d dropped, %.1f s)",
        report.grouped,
        report.groups,
        report.read_back,
        report.dropped,
        report.seconds,
    )
    return report


def members(groups_of: Mapping[str, str]) -> dict[str, list[str]]:
    """Group key → its member keys, sorted (from key → group key).

    Example:
        >>> members({"/b": "/a", "/a": "/a"})
        {'/a': ['/a', '/b']}
    """
    found: dict[str, list[str]] = {}
    for key, group in sorted(groups_of.items()):
        found.setdefault(group, []).append(key)
    return found


@dataclass(frozen=True)
class DuplicateGroup:
    """Documents holding the same text (``exact``: one content hash) or almost the same
    (``near``: a near-duplicate group, which may hold exact copies too), as ``ragkit ls
    --duplicates`` lists them; ``key`` is the smallest member key."""

    key: str
    members: list[str]
    kind: Literal["exact", "near"]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def duplicate_groups(hashes: Mapping[str, str], near: Mapping[str, str]) -> list[DuplicateGroup]:
    """Every group of documents, by key: the near-duplicate groups (``near``: key → group key)
    and the sets of exact copies (``hashes``: key → content hash) outside them.

    Example:
        >>> hashes = {"/a": "h1", "/b": "h1", "/c": "h2", "/d": "h3", "/e": "h3"}
        >>> near = {"/c": "/c", "/d": "/c", "/e": "/c"}  # /e: a copy of /d
        >>> [(g.key, g.members, g.kind) for g in duplicate_groups(hashes, near)]
        [('/a', ['/a', '/b'], 'exact'), ('/c', ['/c', '/d', '/e'], 'near')]
    """
    found = [DuplicateGroup(key, keys, "near") for key, keys in members(near).items()]
    copies: dict[str, list[str]] = {}
    for key, content in sorted(hashes.items()):
        copies.setdefault(content, []).append(key)
    for keys in copies.values():
        if len(keys) >= 2 and not any(key in near for key in keys):
            found.append(DuplicateGroup(keys[0], keys, "exact"))
    return sorted(found, key=lambda group: group.key)
