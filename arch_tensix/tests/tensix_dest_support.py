"""Test helpers of the Dest tests (SFPLOAD/SFPSTORE, addressing, ZEROACC, debug window).

* ``Thread`` — a stand-in Tensix thread (core, thread config, RWCs, arch name) that the
  semantic functions accept; ``execute(thread, word)`` decodes one word with the chip's
  table and runs the function its row names, as the engine does.
* An independent encoder of the three instructions, written from tensix.md §5.2 /
  5.1 #8 (not from the package's tables).
* ``shared_reference()`` — the ``shared/reference`` directory beside the repository,
  or a pytest skip when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from tessera.isa import Decoder
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.config import ConfigSpace, TensixConfig
from tessera_tensix.core import TensixCore

OPCODES = {0x70: "SFPLOAD", 0x72: "SFPSTORE", 0x10: "ZEROACC"}


class Thread:
    """The parts of a TensixThread the Dest semantics use."""

    def __init__(self, *, lenient: bool = False, chip: str = "bh", tid: int = 0) -> None:
        self.core = TensixCore(TensixConfig(lenient=lenient))
        self.arch = SimpleNamespace(name="tensix" if chip == "bh" else "tensix-wh")
        self.tid = tid
        self.gpr = [0] * 64
        self.rwc = {"dst": 0, "srca": 0, "srcb": 0, "sp": 0, "fidelity": 0,
                    "dst_cr": 0, "srca_cr": 0, "srcb_cr": 0}
        self.tcfg = ConfigSpace()

    @property
    def sfpu(self) -> Any:
        return self.core.sfpu

    @property
    def dest(self) -> Any:
        return self.core.dest


#: The chips' decoders, by the thread's architecture name
_DECODERS = {"tensix": Decoder(TENSIX_BH), "tensix-wh": Decoder(TENSIX_WH)}


def execute(thread: Thread, word: int, address: int = 0x40) -> None:
    """Run one instruction word as the engine does: decoded by the chip's table, then the
    function its row names (a word with reserved bits set goes through the rule-breaking row)."""
    ins = _DECODERS[thread.arch.name].decode(word, address)
    ins.run(thread, ins)


# ------------------------------------------------------------------ independent encoder
def sfpload(vd: int, mod0: int, addr_mod: int, imm10: int, *, chip: str = "bh") -> int:
    am = (addr_mod & 7) << 13 if chip == "bh" else (addr_mod & 3) << 14
    return (0x70 << 24) | (vd << 20) | (mod0 << 16) | am | (imm10 & 0x3FF)


def sfpstore(vd: int, mod0: int, addr_mod: int, imm10: int, *, chip: str = "bh") -> int:
    return sfpload(vd, mod0, addr_mod, imm10, chip=chip) & 0x00FF_FFFF | (0x72 << 24)


def zeroacc(clear_mode: int, use_32_bit_mode: int = 0, clear_zero_flags: int = 0,
            addr_mode: int = 0, where: int = 0) -> int:
    """Blackhole ZEROACC (tensix.md 5.1 #8)."""
    return ((0x10 << 24) | (clear_mode << 19) | (use_32_bit_mode << 18) | (clear_zero_flags << 17)
            | (addr_mode << 14) | (where & 0x3FF))


def zeroacc_wh(clear_mode: int, addr_mode: int = 0, where: int = 0, revert: int = 0) -> int:
    """Wormhole ZEROACC: clear_mode [21:19] (bit 2 = 32-bit), Revert [18], AddrMod [16:15]."""
    return (0x10 << 24) | (clear_mode << 19) | (revert << 18) | (addr_mode << 15) | (where & 0x3FF)


# ------------------------------------------------------------------ reference model bits
def adj16_ref(r: int, remap: bool) -> int:
    """Adj16 from the spec's prose (§10.1): new b5 = old b3, new b4 = old b5, new b3 = old b4."""
    if not remap:
        return r
    b3, b4, b5 = (r >> 3) & 1, (r >> 4) & 1, (r >> 5) & 1
    return (r & ~0x38) | (b3 << 5) | (b5 << 4) | (b4 << 3)


def adj32_ref(r: int, remap: bool, swizzle: bool) -> int:
    r = adj16_ref(r, remap)
    if swizzle:
        b2, b3, b4 = (r >> 2) & 1, (r >> 3) & 1, (r >> 4) & 1
        r = (r & ~0xC) | ((b4 ^ b2) << 3) | (b3 << 2)
    return (((r >> 3) & 0x3F) << 4) | (r & 0x207)


def lane_row_col(addr: int, lane: int, odd: bool = False) -> tuple[int, int]:
    """Row and column of lane ``lane`` at 10-bit address ``addr`` (§10.2)."""
    row = (addr & ~3) + (lane >> 3)
    col = 2 * (lane & 7) + (1 if (addr & 2) or odd else 0)
    return row, col


def shared_reference() -> Path:
    ref = Path(__file__).resolve().parents[2].parent / "shared" / "reference"
    if not ref.is_dir():
        pytest.skip("shared/reference is not beside the repository")
    return ref


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def u32(values: Any) -> np.ndarray:
    return np.array(values, dtype=np.uint32)


# ------------------------------------------------------------------ per-lane reference model
# Written from the spec text (§10.2–§10.4, §3.2), one lane at a time with Python ints; the
# hypothesis properties compare the vectorised semantics against it.
def ref_load_value(mod0: int, h: int, w: int, old: int, inf: bool) -> int:
    if mod0 == 1:
        s, m, e = h >> 15, (h >> 5) & 0x3FF, h & 0x1F
        if inf and e == 31 and m == 0x3FF:
            return (s << 31) | 0x7F800000
        return (s << 31) | (((e + 112) << 23) if e else 0) | (m << 13)
    if mod0 == 2:
        return ((h & 0x8000) | ((h & 0xFF) << 7) | ((h >> 8) & 0x7F)) << 16
    if mod0 in (3, 4, 10, 12):
        hi = w >> 16
        return (((hi & 0x8000) | ((hi & 0xFF) << 7) | ((hi >> 8) & 0x7F)) << 16) | (w & 0xFFFF)
    if mod0 == 5:
        return ((h >> 15) << 31) | ((h >> 5) & 0xFF)
    if mod0 == 13:
        return ((h >> 15) << 31) | ((h >> 5) & 0x3FF)
    if mod0 in (6, 9):
        return h
    if mod0 == 7:
        return h << 16
    if mod0 == 8:
        return ((h >> 15) << 31) | (h & 0x7FFF)
    if mod0 == 11:
        return 0
    if mod0 == 14:
        return (old & 0xFFFF0000) | h
    return (h << 16) | (old & 0xFFFF)                           # 15


def ref_store_value(mod0: int, x: int) -> int:
    def sh(b: int) -> int:
        return (b & 0x8000) | ((b & 0x7F) << 8) | ((b >> 7) & 0xFF)
    if mod0 == 1:
        s, k, f = x >> 31, ((x >> 23) & 0xFF) - 112, x & 0x7FFFFF
        if k <= 0:
            k, f = 0, 0
        elif k > 31:
            k, f = 31, 0x7FFFFF
        return (s << 15) | ((f >> 13) << 5) | k
    if mod0 in (2, 3):
        if (x >> 23) & 0xFF == 0:
            x &= 0x80000000
        return sh(x >> 16) if mod0 == 2 else (sh(x >> 16) << 16) | (x & 0xFFFF)
    if mod0 in (4, 10, 12):
        return (sh(x >> 16) << 16) | (x & 0xFFFF)
    if mod0 in (5, 13):
        return ((x >> 31) << 15) | ((x & 0x3FF) << 5) | 16
    if mod0 in (6, 14):
        return x & 0xFFFF
    if mod0 == 15:
        return x >> 16
    if mod0 == 8:
        return ((x >> 31) << 15) | (x & 0x7FFF)
    if mod0 == 9:
        return ((x << 16) | (x >> 16)) & 0xFFFFFFFF
    if mod0 == 7:
        return x
    return 0                                                    # 11


class RefState:
    """A snapshot of everything SFPLOAD/SFPSTORE read or write, and the reference behaviour."""

    def __init__(self, t: Thread) -> None:
        self.bits = [[int(v) for v in row] for row in t.dest.bits]
        self.lreg = [[int(v) for v in row] for row in t.sfpu.lreg]
        self.lc = [int(v) for v in t.sfpu.lane_config]
        self.flags = [bool(v) for v in t.sfpu.lane_flags]
        self.use = [bool(v) for v in t.sfpu.use_lane_flags]
        self.rwc = dict(t.rwc)
        self.tcfg = dict(t.tcfg.fields)
        self.cfg = dict(t.core.cfg.fields)

    def en(self, lane: int) -> bool:
        if (self.lc[lane & 7] >> (12 + (lane >> 3))) & 1:
            return False
        return self.flags[lane] if self.use[lane] else True

    def addr(self, imm10: int, mod0: int, load: bool) -> int:
        a = imm10 + self.tcfg.get("DEST_TARGET_REG_CFG_MATH_Offset", 0)
        dst = self.rwc["dst"] + self.cfg.get("DEST_REGW_BASE_Base", 0)
        base = self.cfg.get("DEST_SP_BASE_Base", 0)
        incr = self.tcfg.get("SFPU_STACK_Incr", 0)
        if mod0 == 10:
            if load and self.rwc["sp"] != 0:
                self.rwc["sp"] = (self.rwc["sp"] - incr) & 0x3FF
            a += self.rwc["sp"] + base + (dst & 3)
            if not load:
                self.rwc["sp"] = (self.rwc["sp"] + incr) & 0x3FF
        else:
            a += dst + ((self.rwc["sp"] + base) & 3)
        return a & 0x3FF

    def cell(self, addr: int, lane: int, exch_bit: int) -> tuple[int, int]:
        row = (addr & ~3) + (lane >> 3)
        col = 2 * (lane & 7) + (1 if (addr & 2) or (self.lc[lane & 7] >> exch_bit) & 1 else 0)
        return row, col

    def phys16(self, row: int) -> int:
        return adj16_ref(row, bool(self.cfg.get("DEST_ACCESS_CFG_remap_addrs", 0)))

    def phys32(self, row: int) -> int:
        return adj32_ref(row, bool(self.cfg.get("DEST_ACCESS_CFG_remap_addrs", 0)),
                         bool(self.cfg.get("DEST_ACCESS_CFG_swizzle_32b", 0)))

    def load(self, vd: int, mod0: int, imm10: int) -> None:
        addr = self.addr(imm10, mod0, True)
        for lane in range(32):
            if (self.lc[lane] >> 5) & 1:
                continue
            if not (self.en(lane) or mod0 == 10):
                continue
            row, col = self.cell(addr, lane, 6)
            h = self.bits[self.phys16(row)][col]
            p = self.phys32(row)
            w = (self.bits[p][col] << 16) | self.bits[p + 8][col]
            self.lreg[vd][lane] = ref_load_value(mod0, h, w, self.lreg[vd][lane], bool(self.lc[lane] & 1))
            if vd < 4 and (self.lc[lane] >> 2) & 1 and (self.lc[lane] >> 3) & 1:
                self.lreg[vd + 4][lane] = (row << 4) | col

    def store(self, vd: int, mod0: int, imm10: int) -> None:
        addr = self.addr(imm10, mod0, False)
        for lane in range(32):
            if (self.lc[lane] >> 4) & 1:
                continue
            if not (self.en(lane) or mod0 == 10):
                continue
            row, col = self.cell(addr, lane, 7)
            v = ref_store_value(mod0, self.lreg[vd][lane])
            if mod0 in (3, 4, 7, 9, 10, 12):
                p = self.phys32(row)
                self.bits[p][col] = v >> 16
                self.bits[p + 8][col] = v & 0xFFFF
            else:
                self.bits[self.phys16(row)][col] = v
