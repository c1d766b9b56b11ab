"""What ``ragkit doctor`` found in an index, whichever backend holds it.

Each backend's doctor (:mod:`ragkit.store.folder.doctor`, :mod:`ragkit.store.milvus.doctor`)
fills one :class:`Diagnosis`; :func:`ragkit.store.address.diagnose` and
:func:`~ragkit.store.address.repair` return it, and ``ragkit doctor`` and ``GET /doctor`` print
it.

Example:
    >>> found = Diagnosis("/srv/idx", generation=2, repair="rebuild it", checked="ids agree")
    >>> found.healthy, found.hint
    (True, 'run `ragkit doctor --index /srv/idx --repair` to rebuild it')
    >>> found.problems.append("vectors-2.faiss: unreadable")
    >>> found.healthy
    False
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

__all__ = ["REPAIR_HINT", "Diagnosis"]

REPAIR_HINT = "run `ragkit doctor --index {folder} --repair` to {repair}"


@dataclass
class Diagnosis:
    """What a doctor found: ``problems`` need a repair, ``notes`` do not. ``folder`` names the
    index (a folder, or a Milvus address); ``repair`` says what ``--repair`` does there;
    ``checked`` what a healthy verdict vouches for (the backend's own checks)."""

    folder: Path | str
    generation: int = -1
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)
    _: KW_ONLY
    repair: str
    checked: str

    @property
    def healthy(self) -> bool:
        """Whether nothing needs a repair."""
        return not self.problems

    @property
    def hint(self) -> str:
        """The command that repairs the index, and what it does."""
        return REPAIR_HINT.format(folder=self.folder, repair=self.repair)
