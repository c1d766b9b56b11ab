"""Entry point of the ingest flow (:mod:`ragkit.flows.ingest`): ``ragkit flows run ingest``,
or ``prefect deploy flows/ingest.py:ingest_flow``."""

from ragkit.flows.ingest import ingest_flow, run_ingest, serve_ingest

__all__ = ["ingest_flow", "run_ingest", "serve_ingest"]
