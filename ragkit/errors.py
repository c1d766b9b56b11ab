"""The one error family ragkit raises; messages name the file or setting and the fix."""


class RagkitError(Exception):
    """Base class of every error ragkit raises on purpose.

    Example:
        >>> raise RagkitError("index /tmp/x: no MANIFEST.json; run `ragkit ingest` first")
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: index /tmp/x: no MANIFEST.json; run `ragkit ingest` first
    """
