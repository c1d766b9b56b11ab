"""Texts the framework component tests index and chunk (written for these tests)."""

from __future__ import annotations

from pathlib import Path

from ragkit import Index

RAIL = """Railways in the early nineteenth century

The first public railways carried coal from mines to rivers and harbours. Horses pulled the \
wagons at first, and the rails were made of cast iron that cracked under heavy loads. Engineers \
soon replaced them with wrought iron, which bent rather than broke, and later with steel.

Steam locomotives changed the speed of travel within a single generation. A journey that had \
taken two days by stagecoach could be made in a few hours, and timetables had to be printed \
because passengers now planned trips around fixed departures rather than the weather.

Railway time followed from the timetables. Towns had kept their own local noon, set by the \
sun, so clocks in neighbouring cities disagreed by several minutes. Railway companies adopted \
one standard time along their lines, and the rest of the country gradually followed.

Building the lines required enormous numbers of workers. Cuttings, embankments, tunnels and \
viaducts were dug and raised largely by hand, with picks, shovels and barrows, and accidents \
were frequent. Many of the labourers moved from one construction camp to the next for years.

Freight mattered as much as passengers. Fresh milk, fish and newspapers could reach a city \
overnight, which changed what people ate and what they read. Farmers far from town could now \
sell perishable goods, and prices in distant markets began to move together.

Signalling grew out of the need to keep trains apart. Early lines relied on a policeman with \
flags and a watch, letting a train leave only after a fixed interval. The electric telegraph \
later allowed the block system, in which only one train may occupy a section of track at a \
time."""

KETTLE = (
    "A kettle of water boils at 100 degrees Celsius at sea level; high on a mountain it boils "
    "sooner, because the air pressure is lower."
)
BREAD = (
    "Bread dough rises because yeast ferments sugars and gives off carbon dioxide, which the "
    "gluten network traps in small bubbles."
)
ARABIC = "يغلي الماء عند مئة درجة مئوية عند مستوى سطح البحر."

RECORDS = {
    "kettle": (KETTLE, {"source": "physics-notes", "year": 1998}),
    "bread": (BREAD, {"source": "kitchen", "year": 2005}),
    "rail": (RAIL, {"source": "history", "year": 2012}),
    "ar-boil": (ARABIC, {"source": "physics-notes", "year": 2020}),
}


def rail_and_records_index(folder: Path, model: str) -> Index:
    """An index in ``folder``: RAIL ingested as a Markdown file, the other texts of RECORDS
    added as records of ``<notes>`` with their metadata."""
    (folder / "docs").mkdir()
    (folder / "docs" / "rail.md").write_text(RAIL, encoding="utf-8")
    index = Index.open(folder / "index", create=True, model=model)
    index.ingest([folder / "docs"])
    records = [{"id": k, "text": t, "metadata": m} for k, (t, m) in RECORDS.items() if k != "rail"]
    assert not index.add(records, source="<notes>").skipped
    return index
