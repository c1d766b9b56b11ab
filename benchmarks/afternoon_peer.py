"""The pipeline a user writes in an afternoon, as :mod:`benchmarks.afternoon`'s peer: read every
file of a folder, split with LangChain's ``RecursiveCharacterTextSplitter(1000, 100)``, embed
with ``SentenceTransformer.encode`` (batch 32, normalized), add to a flat FAISS index and save
it with the chunk texts. Imports and the model load are part of its wall time, as they are of
``ragkit ingest``'s.

Run (what :mod:`benchmarks.afternoon` does, in a child process)::

    .venv/bin/python -m benchmarks.afternoon_peer DOCS OUT --model /path/to/weights --prefix "passage: "

Prints one JSON line: ``{"files": N, "chunks": N}``.
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("documents", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--model", required=True, help="a sentence-transformers model folder")
    parser.add_argument("--prefix", default="", help="the model's passage prefix (e5: 'passage: ')")
    arguments = parser.parse_args()

    import faiss
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from sentence_transformers import SentenceTransformer

    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100)
    files = sorted(p for p in arguments.documents.rglob("*") if p.is_file())
    chunks: list[str] = []
    for path in files:
        chunks.extend(splitter.split_text(path.read_text(encoding="utf-8")))
    model = SentenceTransformer(arguments.model, device="cpu")
    vectors = model.encode(
        [arguments.prefix + chunk for chunk in chunks],
        batch_size=32,
        normalize_embeddings=True,
        convert_to_numpy=True,
    )
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    arguments.out.mkdir(parents=True, exist_ok=True)
    faiss.write_index(index, str(arguments.out / "vectors.faiss"))
    (arguments.out / "chunks.pkl").write_bytes(pickle.dumps(chunks))
    print(json.dumps({"files": len(files), "chunks": len(chunks)}))


if __name__ == "__main__":
    main()
