"""The flows' entry points in the repository: ``python -m flows.<name>`` and
``prefect deploy flows/<name>.py:<flow>``. The flows themselves are :mod:`ragkit.flows` (in the
installed package, so Dask workers import the same tasks); importing either sets ragkit's
Prefect defaults before Prefect loads."""

import ragkit.flows  # noqa: F401  (ragkit's Prefect settings, before Prefect loads)
