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
    ("press", {"source": "press", "year": 1999.5}),
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
    with pytest.raises(RagkitError, match="match a string or a number, not set"):
        _ids(index, year={1})
    with pytest.raises(RagkitError, match=r"filter 'year': no operator 'nested'; use \$eq"):
        _ids(index, year={"nested": 1})


def test_numeric_ranges_and_metadata_named_like_a_column(built) -> None:
    index, docs = built
    # "2021" is text that spells a number, as every CSV cell is: a range reads it as one
    assert _ids(index, year={">=": 2000}) == {"y2019", "y2020", "y2021"}
    assert _ids(index, year={">=": 2021}) == {"y2021"} and _ids(index, draft={">": 0}) == set()
    assert _ids(index, year={">": 1999, "<": 2020}) == {"press", "y2019"}
    assert _ids(index, year=[{"<": 2000}, 2020]) == {"press", "y2020"}
    assert _ids(index, **{"meta.source": "press"}) == {"press"}
    assert _ids(index, source=f"{docs}/*.txt") == {"a.txt"}  # the column, not the field


def test_a_key_no_document_has_is_an_error_naming_the_known_ones(built) -> None:
    index, _ = built
    with pytest.raises(
        RagkitError, match=r"'yaer'.*no document has.*draft, say \"hi\", source, year"
    ):
        _ids(index, yaer=2020)
    assert _ids(index, year=1000) == set()  # a known field with no match: just no hits


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
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for filters, expected in (
        (["year=2019", "year=2021"], {"y2019", "y2021"}),
        (["year=2019,2021"], {"y2019", "y2021"}),
        (["year>=2000", "year<1999.9"], {"y2019", "y2020", "y2021", "press"}),
        (["year>=2000", "language=en,ar"], {"y2019", "y2020", "y2021"}),
    ):
        flags = [part for each in filters for part in ("--filter", each)]
        done = subprocess.run(command + flags, capture_output=True, text=True, env=env, check=True)
        assert {hit["document_id"] for hit in json.loads(done.stdout)} == expected, filters
    wrong = subprocess.run(
        command + ["--filter", "yaer=1"], check=False, capture_output=True, text=True, env=env
    )
    assert wrong.returncode == 2 and "no document has that metadata field" in wrong.stderr
