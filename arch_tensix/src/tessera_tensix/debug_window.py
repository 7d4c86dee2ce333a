"""The RISC-V debug window onto Dest at 0xFFBD8000 (32 KiB; BH Dst.md "RISCV access").

The window's shape follows the backend config of the accessing RISC-V thread n
(``RISC_DEST_ACCESS_CTRL_SEC{n}_fmt``, ``_no_swizzle``, ``_unsigned_int``):

===  ==============================  =====================================================
fmt  view                            conversion (skipped when ``no_swizzle``)
===  ==============================  =====================================================
0    ``uint32/float Dst32b[512][16]``  Dst FP32 layout ↔ IEEE FP32
1    ``int32 Dst32b[512][16]``         as 0, then sign-magnitude ↔ two's complement
2    ``__fp16 Dst16b[1024][16]``       Dst FP16 layout ↔ IEEE FP16
3    ``__bf16 Dst16b[1024][16]``       Dst BF16 layout ↔ IEEE BF16
4    ``int16 Dst16b[1024][16]``        sign-magnitude ↔ two's complement (not if unsigned_int)
5    ``int8 Dst16b[1024][16]``         Integer "8" magnitude; signed: sign + 7-bit magnitude
≥6   reserved                          (access faults)
===  ==============================  =====================================================

Element ``i`` of the view lives at byte offset ``i * size`` (row-major, 16 per row);
the row remaps Adj16/Adj32 of the backend config apply.  An access of exactly one
element works for every thread; a wider access aligned to its size is split into
elements (what RISC-V T2 can do); a narrower or misaligned access faults (the
hardware "generally misbehaves").  Signed int8 stores reproduce the documented
hardware conversion (which is not a true two's-complement conversion).

The accessing thread is ``space.current_agent``: its ``dest_window_sec`` attribute
if it has one, else its ``tid``, else 0.  Reads return the raw cell contents whether
or not ZEROACC marked the row undefined; writes make the written cells defined.
The device holds the core and the address space (no closures), so it pickles.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tessera.errors import MemoryFault
from tessera_tensix import dest as D

BASE, SIZE = 0xFFBD_8000, 0x8000
ELEMENT_BYTES = {0: 4, 1: 4, 2: 2, 3: 2, 4: 2, 5: 1}
M32 = 0xFFFF_FFFF


class DestWindow:
    """MMIO device: the Dest debug window (offsets relative to 0xFFBD8000)."""

    def __init__(self, core: Any, space: Any = None) -> None:
        self.core = core
        self.space = space

    # ------------------------------------------------------------------ config
    def _sec(self) -> int:
        agent = getattr(self.space, "current_agent", None)
        sec = getattr(agent, "dest_window_sec", None)
        if sec is None:
            sec = getattr(agent, "tid", 0)
        return int(sec) if isinstance(sec, int) and 0 <= sec <= 2 else 0

    def _mode(self) -> tuple[int, bool, bool, bool, bool]:
        c = self.core.cfg.fields
        n = self._sec()
        p = f"RISC_DEST_ACCESS_CTRL_SEC{n}_"
        return (c.get(p + "fmt", 0), bool(c.get(p + "no_swizzle", 0)), bool(c.get(p + "unsigned_int", 0)),
                bool(c.get("DEST_ACCESS_CFG_remap_addrs", 0)), bool(c.get("DEST_ACCESS_CFG_swizzle_32b", 0)))

    def _elements(self, offset: int, size: int, fmt: int, access: str) -> int:
        ebytes = ELEMENT_BYTES.get(fmt)
        if ebytes is None:
            raise MemoryFault(f"Dest debug window: fmt={fmt} is reserved", address=BASE + offset,
                              access=access, size=size)
        if size < ebytes or size % ebytes or offset % size:
            raise MemoryFault(f"Dest debug window: fmt={fmt} takes aligned {ebytes}-byte elements "
                              f"(got a {size}-byte {access} at +{offset:#x})",
                              address=BASE + offset, access=access, size=size)
        return ebytes

    # ------------------------------------------------------------------ MMIO
    def read(self, offset: int, size: int) -> int:
        fmt, nosw, uns, remap, swz = self._mode()
        eb = self._elements(offset, size, fmt, "read")
        value = 0
        for k in range(size // eb):
            v = self.read_element((offset + k * eb) // eb, fmt, nosw, uns, remap, swz)
            value |= v << (8 * eb * k)
        return value

    def write(self, offset: int, size: int, value: int) -> None:
        fmt, nosw, uns, remap, swz = self._mode()
        eb = self._elements(offset, size, fmt, "write")
        emask = (1 << (8 * eb)) - 1
        for k in range(size // eb):
            self.write_element((offset + k * eb) // eb, fmt, nosw, uns, remap, swz,
                               (value >> (8 * eb * k)) & emask)

    # ------------------------------------------------------------------ one element
    def read_element(self, i: int, fmt: int, no_swizzle: bool, unsigned: bool,
                     remap: bool, swizzle: bool) -> int:
        dest = self.core.dest
        row, col = (i >> 4) & D.ROW_MASK10, i & 15
        if fmt <= 1:
            v = dest.get32(row, col, remap, swizzle)
            if not no_swizzle:
                v = D.unshuffle_fp32(v)
                if fmt == 1 and v & 0x8000_0000:
                    v = (-(v & 0x7FFF_FFFF)) & M32
            return v
        h = dest.get16(row, col, remap)
        if fmt == 2:
            return h if no_swizzle else D.unshuffle_fp16(h)
        if fmt == 3:
            return h if no_swizzle else D.unshuffle_bf16(h)
        if fmt == 4:
            if no_swizzle or unsigned or h < 0x8000:
                return h
            return (-(h & 0x7FFF)) & 0xFFFF
        # fmt 5
        if no_swizzle or unsigned:
            return (h >> 5) & 0xFF
        mag = (h >> 5) & 0x7F
        return (-mag) & 0xFF if h & 0x8000 else mag

    def write_element(self, i: int, fmt: int, no_swizzle: bool, unsigned: bool,
                      remap: bool, swizzle: bool, v: int) -> None:
        dest = self.core.dest
        row, col = (i >> 4) & D.ROW_MASK10, i & 15
        if fmt <= 1:
            if fmt == 1 and not no_swizzle and v >= 0x8000_0000:
                v = 0x8000_0000 | ((-(v + (v == 0x8000_0000))) & M32)
            if not no_swizzle:
                v = D.shuffle_fp32(v)
            dest.set32(row, col, v, remap, swizzle)
            p = int(D.ADJ32[int(remap)][int(swizzle)][row])
            cells = [p * D.COLS + col, (p + 8) * D.COLS + col]
        else:
            if fmt == 2:
                h = v if no_swizzle else D.shuffle_fp16(v)
            elif fmt == 3:
                h = v if no_swizzle else D.shuffle_bf16(v)
            elif fmt == 4:
                h = v if (no_swizzle or unsigned or v < 0x8000) else 0x8000 | ((-(v + (v == 0x8000))) & 0xFFFF)
            else:  # fmt 5: the documented (not quite two's-complement) conversion
                if no_swizzle or unsigned or v < 0x80:
                    h = (v << 5) | (16 if v else 0)
                else:
                    mag = (0x180 - v - (v == 0x80)) & 0xFF
                    h = 0x8000 | (mag << 5) | 16
            dest.set16(row, col, h & 0xFFFF, remap)
            cells = [int(D.ADJ16[int(remap)][row]) * D.COLS + col]
        if not dest.all_valid:
            dest.mark_written(np.array(cells, dtype=np.int64))


def install(machine: Any, core: Any) -> DestWindow:
    """Map the window as an MMIO region named ``dest_window``."""
    device = DestWindow(core, machine.space)
    machine.space.add_mmio("dest_window", BASE, SIZE, device)
    return device
