"""Studies: one question each, answered once, with its verdict (``experiments/README.md``).

Run a study from the repository root as ``python -m experiments.<area>.<purpose>.<script>``;
its result lands next to the script, with the run's provenance
(:func:`benchmarks.common.write_result`).
"""
