"""Conditional-branch direction predictors for cycle models.

Every predictor answers ``predict(pc, target) -> bool`` (True = taken) before the branch
resolves and learns the outcome through ``update(pc, taken)``.  Only the direction is
predicted: the models assume the taken target is available in time (a BTB), so a
correctly predicted taken branch costs nothing.

``predictions`` and ``mispredictions`` are counted by the cycle model, the one party that
sees both the prediction and the outcome; :meth:`Predictor.stats` reports them.
"""

from __future__ import annotations

from typing import Any


class Predictor:
    """The common part: a name and the counters the model keeps on it."""

    name = "predictor"

    def __init__(self) -> None:
        self.predictions = 0
        self.mispredictions = 0

    def predict(self, pc: int, target: int) -> bool:
        """Whether the branch at *pc* (taken target *target*) is predicted taken."""
        raise NotImplementedError

    def update(self, pc: int, taken: bool) -> None:
        """Learn the actual direction of the branch at *pc*; static predictors ignore it."""

    def stats(self) -> dict[str, Any]:
        """Name and counters; ``accuracy`` is 1.0 while nothing was predicted."""
        return {
            "name": self.name, "predictions": self.predictions, "mispredictions": self.mispredictions,
            "accuracy": 1.0 - self.mispredictions / self.predictions if self.predictions else 1.0,
        }


class StaticNotTaken(Predictor):
    """Always predicts not taken: fetch simply continues at pc + length."""

    name = "not-taken"

    def predict(self, pc: int, target: int) -> bool:
        return False


class StaticBTFN(Predictor):
    """Backward taken, forward not taken: loops' closing branches are taken.

    A target at or before the branch (``target <= pc``) is predicted taken.
    """

    name = "btfn"

    def predict(self, pc: int, target: int) -> bool:
        return target <= pc


class Bimodal(Predictor):
    """A table of 2-bit saturating counters indexed by ``(pc >> 2) % entries``.

    Counters start at 1 (weakly not taken); a counter of 2 or 3 predicts taken.  A taken
    branch counts up (to 3), a not-taken one down (to 0), so one anomalous outcome does
    not flip a strongly biased counter.  ``entries`` must be a power of two (the index is
    a mask of the pc's word number).
    """

    name = "bimodal"

    def __init__(self, entries: int) -> None:
        if isinstance(entries, bool) or not isinstance(entries, int) or entries <= 0 or entries & (entries - 1):
            raise ValueError(f"bimodal predictor: entries must be a positive power of two, got {entries!r}")
        super().__init__()
        self.entries = entries
        self._mask = entries - 1
        self._table = [1] * entries

    def predict(self, pc: int, target: int) -> bool:
        return self._table[(pc >> 2) & self._mask] >= 2

    def update(self, pc: int, taken: bool) -> None:
        table = self._table
        index = (pc >> 2) & self._mask
        counter = table[index]
        if taken:
            if counter < 3:
                table[index] = counter + 1
        elif counter > 0:
            table[index] = counter - 1


#: predictor name -> class; Bimodal is the only one that takes a table size
PREDICTORS: dict[str, type[Predictor]] = {
    StaticNotTaken.name: StaticNotTaken, StaticBTFN.name: StaticBTFN, Bimodal.name: Bimodal,
}


def make_predictor(name: str, entries: int) -> Predictor:
    """A fresh predictor called *name*; *entries* sizes the bimodal table (ignored otherwise)."""
    if name not in PREDICTORS:
        raise ValueError(f"unknown branch predictor {name!r}; choose one of: {', '.join(PREDICTORS)}")
    if name == Bimodal.name:
        return Bimodal(entries)
    return PREDICTORS[name]()
