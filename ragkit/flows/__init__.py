"""Prefect flows wrapping ragkit's library stages (in the installed package, so Dask workers import the same tasks; the repository's top-level ``flows/`` folder holds the entry points, ``python -m flows.<name>``).

Importing this package sets ragkit's Prefect defaults before Prefect loads, unless the user set
them: ``PREFECT_HOME`` under ragkit's cache folder, analytics off, and a generous start-up
timeout for the temporary local server Prefect starts when no ``PREFECT_API_URL`` is set.
"""

import os

from ragkit.paths import cache_dir

if "PREFECT_HOME" not in os.environ:
    home = cache_dir() / "prefect"
    try:  # Prefect makes only the last folder: on a fresh machine the cache folder is absent
        home.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # Prefect says it could not make it, and runs without it
    os.environ["PREFECT_HOME"] = str(home)
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
