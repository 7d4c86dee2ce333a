"""SrcA and SrcB: two banks each of 64 rows x 16 columns of 19-bit data (SrcASrcB.md).

Each bank has an ``AllowedClient`` — the unpackers (which fill it) or the matrix unit
(which consumes it); the bank changes hands through SETDVALID, UNPACR / UNPACR_NOP,
CLEARDVALID, the flip bits of MVMUL/ELW*/... and SETRWC's CLR_A/CLR_B.  Each side keeps
its own bank index: ``matrix_bank`` (``MatrixUnit::SrcABank`` / ``SrcBBank``) and
``unpacker_bank`` (``Unpackers[0].SrcBank`` for SrcA, ``Unpackers[1].SrcBank`` for SrcB).
Cells are ``uint32`` holding the 19-bit pattern (layouts in SrcASrcB.md: TF32 at
[18:0], BF16 overlaid with the three low TF32 mantissa bits zero, FP16, integer "8"
and "16"); every write masks to 19 bits.

Every change of ownership calls ``signal.changed()`` so threads parked on a bank
condition (STALLWAIT C8-C11, an implicit wait of the matrix unit or an unpacker)
re-check it.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

BANKS, ROWS, COLS = 2, 64, 16
MASK19 = (1 << 19) - 1
UNPACKERS, MATRIX = "unpackers", "matrix unit"


class SrcRegister:
    """One of SrcA / SrcB."""

    def __init__(self, name: str, signal: Any = None) -> None:
        self.name = name                       # "SrcA" or "SrcB"
        self.rows = np.zeros((BANKS, ROWS, COLS), dtype=np.uint32)
        self.allowed = [UNPACKERS, UNPACKERS]  # AllowedClient per bank (reset: unpackers)
        self.matrix_bank = 0                   # the bank the matrix unit uses
        #: per bank, the format code an unpacker last wrote it in (None: never written);
        #: Blackhole's matrix unit takes SrcA's format from here (matrixbanks.srca_format)
        self.formats: list[int | None] = [None, None]
        self.unpacker_bank = 0                 # the bank its unpacker writes
        #: ``Unpackers[i].SrcRow[thread]``: the row the unpacker writes next, per Tensix
        #: thread (SETDVALID / UNPACR_NOP reset it to ``SRC?_SET_Base << 4``); the
        #: unpackers' state (``unpack.Unpackers.src_row``) holds these same lists
        self.src_row = [0, 0, 0]
        #: the matrix unit's most recent starting row of this register (SHIFTXA's
        #: ``HardwareBug()`` reads SrcA's; see :func:`tessera_tensix.matrixbanks.note_row`)
        self.last_row = 0
        self.signal = signal

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("formats", [None, None])   # a snapshot from before they were kept

    def give(self, bank: int, client: str) -> None:
        """Hand ``bank`` to ``client`` (UNPACKERS or MATRIX) and wake waiters."""
        if self.allowed[bank] != client:
            self.allowed[bank] = client
            if self.signal is not None:
                self.signal.changed()

    def require(self, thread: Any, bank: int, client: str, who: str) -> None:
        """Park ``thread`` unless ``bank`` belongs to ``client`` (an implicit wait of
        ``who``, e.g. ``"MOVA2D"``: the wait gate / mid-instruction wait of WaitGate.md)."""
        if self.allowed[bank] != client:
            pc = getattr(thread, "pc", None)
            where = "" if pc is None else f" (at pc {pc:#x})"
            self.signal.hold(thread, f"{who} waits: {self.owner_text(bank)}{where}")

    def matrix_owns(self) -> bool:
        """Does the matrix unit's bank (``MatrixUnit::Src?Bank``) belong to the matrix unit?"""
        return self.allowed[self.matrix_bank] == MATRIX

    def unpackers_own(self) -> bool:
        """Does the unpacker's bank (``Unpackers[i].SrcBank``) belong to the unpackers?"""
        return self.allowed[self.unpacker_bank] == UNPACKERS

    def owner_text(self, bank: int) -> str:
        """``SrcA bank 0 is owned by the unpackers`` (for wait reasons and reports)."""
        return f"{self.name} bank {bank} is owned by the {self.allowed[bank]}"

    def state(self) -> dict[str, Any]:
        nonzero = [int(b) for b in range(BANKS) if self.rows[b].any()]
        return {"allowed": list(self.allowed), "matrix_bank": self.matrix_bank,
                "unpacker_bank": self.unpacker_bank, "src_row": list(self.src_row),
                "formats": list(self.formats),
                "nonzero_banks": nonzero,
                "digest": hashlib.sha1(self.rows.tobytes()).hexdigest()[:16]}
