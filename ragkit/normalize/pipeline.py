"""Normalization steps composed into one: :class:`Pipeline`, with its runs of character maps
merged and its leading steps compiled into one translation table.

Example:
    >>> from ragkit.normalize.base import CharMap
    >>> p = Pipeline([CharMap({"ـ": ""}), CharMap({"أ": "ا"})], name="demo")
    >>> p("أـحمد").text
    'احمد'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragkit.normalize.base import BMP, CharMap, Normalized, RunCollapse, Step, as_offsets
from ragkit.normalize.translation import TranslationTable, counting


class Pipeline(Step):
    """Steps applied in order, offsets composed. Idempotent when each step is.

    Runs of plain character maps are merged (:func:`_fused`). The leading steps that are plain
    maps or know their triggers (:meth:`Step.triggers`), and a :class:`RunCollapse` after them,
    are compiled into one :class:`~ragkit.normalize.translation.TranslationTable`: a text
    holding no trigger goes through all of them in one lookup (``bytes.translate`` when it is
    written in ASCII and ``alphabet`` alone), its offsets are the positions of the characters
    kept (none to build when nothing was deleted), and each later step runs only when it
    cannot tell that it changes nothing (:meth:`Step.unchanged`). A text holding a trigger goes
    step by step: the maps run over the code points without offsets (:meth:`CharMap.mapped`)
    while every other step is unchanged, offsets are built once from what the maps delete,
    and from the first step that changes the text on, steps run one by one with composed
    offsets. Either way a short text (a query, a line) pays for one pass, not for every step.
    ``alphabet`` (speed only): the characters, beyond ASCII, that get a byte of their own.

    Example:
        >>> p = Pipeline([CharMap({"ـ": ""}), CharMap({"أ": "ا"})], name="demo")
        >>> out = p("أـحمد")
        >>> out.text, out.offsets.tolist()
        ('احمد', [0, 2, 3, 4])
    """

    def __init__(self, steps: Sequence[Step], name: str = "pipeline", alphabet: str = "") -> None:
        self.steps = tuple(steps)
        self.name = name
        self.alphabet = alphabet
        self._plan = _fused(self.steps)
        # The plain maps of the plan by position, each with the characters that it and the
        # maps before it delete.
        self._maps: dict[int, tuple[CharMap, npt.NDArray[np.bool_]]] = {}
        composite, deleted = np.arange(BMP, dtype=np.uint32), np.zeros(BMP, dtype=bool)
        for index, step in enumerate(self._plan):
            if isinstance(step, CharMap) and _is_plain_map(step):
                deleted = deleted | step._deleted[composite]
                composite = step._lookup[composite]
                self._maps[index] = (step, deleted)
        # The leading steps compiled into one table, and the steps after them; on first use.
        self._compiled: tuple[TranslationTable | None, tuple[Step, ...]] | None = None

    def apply(self, text: str) -> Normalized:
        table, rest = self._compiled or self._compile()
        translated = None if table is None else table(text)
        if translated is None:
            return self._step_by_step(text)
        current, offsets = translated
        result = Normalized._trusted(
            current, counting(len(text)) if offsets is None else offsets, len(text)
        )
        for step in rest:
            if not step.unchanged(result.text):
                result = step(result)
        return result

    def _compile(self) -> tuple[TranslationTable | None, tuple[Step, ...]]:
        """The translation table of the leading maps, trigger steps and a final run collapse."""
        table, count = TranslationTable(self.alphabet), 0
        for step in self._plan:
            if isinstance(step, CharMap) and _is_plain_map(step):
                table.add_map(step.table)
            elif type(step) is RunCollapse:
                table.add_collapse(step.char)
                count += 1
                break
            elif (triggers := step.triggers()) is not None:
                table.add_triggers(triggers)
            else:
                break
            count += 1
        table.table  # noqa: B018 (built now, not on the first call)
        self._compiled = (table if count else None, tuple(self._plan[count:]))
        return self._compiled

    def _step_by_step(self, text: str) -> Normalized:
        current, deleted = text, None  # deleted: what the maps applied so far delete
        for index, step in enumerate(self._plan):
            if index in self._maps and not self._maps[index][0].expands(current):
                char_map, deleted = self._maps[index]
                if not char_map.unchanged(current):
                    current = char_map.mapped(current)[0]
            elif not step.unchanged(current):
                result = _mapped_offsets(text, current, deleted)
                for later in self._plan[index:]:
                    result = later(result)
                return result
        return _mapped_offsets(text, current, deleted)

    def unchanged(self, text: str) -> bool:
        return all(step.unchanged(text) for step in self._plan)

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}, steps={[step.name for step in self.steps]})"


def _mapped_offsets(text: str, current: str, deleted: npt.NDArray[np.bool_] | None) -> Normalized:
    """``current``, which one-to-one maps deleting ``deleted`` made from ``text``, with offsets."""
    if deleted is None or len(current) == len(text):  # one to one: nothing was deleted
        return Normalized(current, counting(len(text)), len(text))
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    kept = ~deleted[np.minimum(codes, BMP - 1)]
    return Normalized(current, as_offsets(np.flatnonzero(kept).astype(np.int32)), len(text))


def _fused(steps: Sequence[Step]) -> list[Step]:
    """Nested pipelines flattened and runs of plain character maps merged into one map.

    Applying the merged table once equals applying the maps in order, at a fraction of the cost.
    """
    flat: list[Step] = []
    for step in steps:
        flat.extend(step._plan if isinstance(step, Pipeline) else [step])
    plan: list[Step] = []
    for step in flat:
        previous = plan[-1] if plan else None
        if _is_plain_map(step) and previous is not None and _is_plain_map(previous):
            plan[-1] = _merge(previous, step)  # type: ignore[arg-type]
        else:
            plan.append(step)
    return plan


def _is_plain_map(step: Step) -> bool:
    return isinstance(step, CharMap) and type(step).apply is CharMap.apply


def _merge(first: CharMap, second: CharMap) -> CharMap:
    table = {
        key: "".join(second.table.get(char, char) for char in first.table.get(key, key))
        for key in first.table.keys() | second.table.keys()
    }
    return CharMap(table, name=f"{first.name}+{second.name}")
