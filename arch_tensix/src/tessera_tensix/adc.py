"""The address counters (ADCs) of the unpackers and packers (ADCs.md).

``ADCs[3]`` — usually indexed by the current thread, though instructions may name
another — each hold a set for Unpacker 0, Unpacker 1 and the packers (one set shared
by all four), each with two channels of X/Y/Z/W counters and their ``_Cr``
("carriage return") copies.  Widths: X 18 bits, Y 13, Z 8, W 8; writes wrap.
SETADC*/INCADC*/ADDRCR* change them; UNPACR/PACR read and advance them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: the three sets of one ADC: index 0 Unpacker 0, 1 Unpacker 1, 2 the packers
UNPACKER0, UNPACKER1, PACKERS = 0, 1, 2
SET_NAMES = ("Unpacker0", "Unpacker1", "Packers")
#: counter -> (column in the table, width in bits); the _Cr copy is the next column
COUNTERS = {"X": (0, 18), "Y": (2, 13), "Z": (4, 8), "W": (6, 8)}
FIELDS = ("X", "X_Cr", "Y", "Y_Cr", "Z", "Z_Cr", "W", "W_Cr")
MASKS = np.array([(1 << COUNTERS[f[0]][1]) - 1 for f in FIELDS], dtype=np.int64)


class Adcs:
    """All ADCs of a core: ``values[adc, set, channel, field]`` (fields in :data:`FIELDS`)."""

    def __init__(self, core: Any = None) -> None:
        self.values = np.zeros((3, 3, 2, len(FIELDS)), dtype=np.int64)

    def get(self, adc: int, which: int, channel: int, field: str) -> int:
        return int(self.values[adc, which, channel, FIELDS.index(field)])

    def set(self, adc: int, which: int, channel: int, field: str, value: int) -> None:
        i = FIELDS.index(field)
        self.values[adc, which, channel, i] = int(value) & int(MASKS[i])

    def add(self, adc: int, which: int, channel: int, field: str, delta: int) -> None:
        self.set(adc, which, channel, field, self.get(adc, which, channel, field) + delta)

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for adc in range(3):
            for which, name in enumerate(SET_NAMES):
                for ch in range(2):
                    row = self.values[adc, which, ch]
                    if row.any():
                        out[f"T{adc}.{name}.ch{ch}"] = dict(zip(FIELDS, map(int, row)))
        return out


def adcs(core: Any) -> Adcs:
    """The core's ADCs (created on first use)."""
    return core.unit("adcs", Adcs)
