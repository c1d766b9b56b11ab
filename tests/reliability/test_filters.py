"""Search filters: typed values, keys with quotes, a repeated key means any of its values,
``*`` in a source glob stays in one folder, and ``k`` must be ≥ 1 (issue 24, item 16)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MODEL

from ragkit import Index, RagkitError

RECORDS = [
    ("y2019", {"year": 2019}),
    ("y2020", {"year": 2020}),
    ("y2021", {"year": "2021"}),
    ("quoted", {'say "hi"': "yes", "draft": True}),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Index, Path]:
    docs = tmp_path_factory.mktemp("filters") / "docs"
    (docs / "sub").mkdir(parents=True)
    lines = [{"id": i, "text": f"The river {i} floods.", "metadata": m} for i, m in RECORDS]
    (docs / "sub" / "r.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (docs / "a.txt").write_text("The river a floods.\n")
    (docs / "sub" / "b.txt").write_text("The river b floods.\n")
    index = Index.open(docs.parent / "index", create=True, model=MODEL)
    index.ingest([docs])
    yield index, docs
    index.close()


def _ids(index: Index, **filters: object) -> set[str]:
    hits = index.search("river floods", k=20, mode="sparse", filters=filters)
    return {Path(h.document_id).name for h in hits}


def test_metadata_values_match_by_type_and_repeated_keys_mean_any(built) -> None:
    index, _ = built
    assert _ids(index, year="2020") == _ids(index, year=2020) == {"y2020"}
    assert _ids(index, year="2021") == {"y2021"} and _ids(index, year=2021) == set()
    assert _ids(index, year=["2019", "2021"]) == {"y2019", "y2021"}
    assert _ids(index, **{'say "hi"': "yes"}) == {"quoted"}
    assert _ids(index, draft="true") == _ids(index, draft=True) == {"quoted"}
    with pytest.raises(RagkitError, match="match a string or a number, not dict"):
        _ids(index, year={"nested": 1})


def test_a_source_star_stays_in_one_folder(built) -> None:
    index, docs = built
    assert _ids(index, source=f"{docs}/*.txt") == {"a.txt"}
    assert _ids(index, source=f"{docs}/**/*.txt") == {"a.txt", "b.txt"}
    assert _ids(index, source=f"{docs}/*/b.txt") == {"b.txt"}


@pytest.mark.parametrize("k", [-1, 0])
def test_search_refuses_k_below_one(built, k: int) -> None:
    with pytest.raises(RagkitError, match=f"k={k}: ask for at least one hit"):
        built[0].search("river", k=k)


def test_the_cli_ors_a_repeated_filter_key(built) -> None:
    index, _ = built
    command = [str(Path(sys.executable).with_name("ragkit")), "query", "river floods"]
    command += ["--index", str(index.store.folder), "--mode", "sparse", "--json"]
    command += ["--filter", "year=2019", "--filter", "year=2021"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    assert {hit["document_id"] for hit in json.loads(done.stdout)} == {"y2019", "y2021"}
