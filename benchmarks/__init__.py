"""ragkit's product claims: the measurements ``docs/results.md`` and the stage pages cite.

Each module is one benchmark, run from the repository root as ``python -m benchmarks.NAME``
(its docstring gives the command, what it measures and the result file); all of them share
:mod:`benchmarks.common` (BEIR loading, ``ragkit serve`` on a free port, percentiles, peak
memory, the retrieval metrics) and write ``benchmarks/results/NAME.json`` through
:func:`benchmarks.common.write_result`, which records the run's provenance (command, commit,
CPUs, thread settings, load, date). Studies — a question answered once, with a verdict — live
in ``experiments/`` (``experiments/README.md``); the figures of these results are drawn by
``docs/plots.py`` (``make plots``).
"""
