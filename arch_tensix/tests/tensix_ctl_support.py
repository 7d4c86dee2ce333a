"""Test helpers of the ctl tests (predication, integer, cross-lane, config, scalar unit).

* ``Thread`` — a stand-in Tensix thread (core, GPRs, RWCs, arch name) that semantic
  functions accept; ``execute(thread, word)`` decodes one instruction word with the
  chip's table and runs the function its row names, as the engine does.
* An independent encoder: one function per instruction, arguments in the order of
  the vendor's ``TT_OP_*`` macros (spec tensix-sfpu.md §1, tensix.md §5.2).
* ``RefSfpu`` — a per-lane, loop-per-lane reference model written from the spec text
  (§3, §11, §13–§15, §17.1), used by the hypothesis properties to check the
  vectorised implementation.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from tessera.isa import Decoder
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.config import TensixConfig
from tessera_tensix.core import TensixCore

M32 = 0xFFFF_FFFF

OPCODES = {
    0x76: "SFPDIVP2", 0x77: "SFPEXEXP", 0x78: "SFPEXMAN", 0x79: "SFPIADD", 0x7A: "SFPSHFT",
    0x7B: "SFPSETCC", 0x7D: "SFPABS", 0x7E: "SFPAND", 0x7F: "SFPOR", 0x80: "SFPNOT",
    0x81: "SFPLZ", 0x82: "SFPSETEXP", 0x83: "SFPSETMAN", 0x87: "SFPPUSHC", 0x88: "SFPPOPC",
    0x89: "SFPSETSGN", 0x8A: "SFPENCC", 0x8B: "SFPCOMPC", 0x8C: "SFPTRANSP", 0x8D: "SFPXOR",
    0x91: "SFPCONFIG", 0x92: "SFPSWAP", 0x93: "SFPLOADMACRO", 0x94: "SFPSHFT2", 0x96: "SFPLE",
    0x97: "SFPGT", 0x58: "ADDDMAREG", 0x59: "SUBDMAREG", 0x5A: "MULDMAREG",
    0x5B: "BITWOPDMAREG", 0x5C: "SHIFTDMAREG", 0x5D: "CMPDMAREG", 0x45: "SETDMAREG",
    0x46: "FLUSHDMA",
}


class Thread:
    """The parts of a TensixThread the semantics use."""

    def __init__(self, *, lenient: bool = False, chip: str = "bh", **config: Any) -> None:
        self.core = TensixCore(TensixConfig(lenient=lenient, **config))
        self.arch = SimpleNamespace(name="tensix" if chip == "bh" else "tensix-wh")
        self.tid = 0
        self.gpr = [0] * 64
        self.rwc = {"dst": 0, "srca": 0, "srcb": 0, "sp": 0}

    @property
    def sfpu(self) -> Any:
        return self.core.sfpu


#: The chips' decoders, by the thread's architecture name
_DECODERS = {"tensix": Decoder(TENSIX_BH), "tensix-wh": Decoder(TENSIX_WH)}


def execute(thread: Thread, word: int, address: int = 0x40) -> None:
    """Run one instruction word as the engine does: decoded by the chip's table, then the
    function its row names (a word with reserved bits set goes through the rule-breaking row)."""
    ins = _DECODERS[thread.arch.name].decode(word, address)
    ins.run(thread, ins)


def run(thread: Thread, *words: int) -> None:
    for i, w in enumerate(words):
        execute(thread, w, 4 * i)


# ---------------------------------------------------------------- independent encoder
def _op(opcode: int, params: int) -> int:
    assert 0 <= params < (1 << 24)
    return (opcode << 24) | params


def _vcvd(opcode: int, imm12: int, vc: int, vd: int, mod1: int) -> int:
    return _op(opcode, ((imm12 & 0xFFF) << 12) | (vc << 8) | (vd << 4) | mod1)


def SFPIADD(imm12, vc, vd, mod1): return _vcvd(0x79, imm12, vc, vd, mod1)
def SFPSHFT(imm12, vc, vd, mod1): return _vcvd(0x7A, imm12, vc, vd, mod1)
def SFPSETCC(imm1, vc, vd, mod1): return _vcvd(0x7B, imm1, vc, vd, mod1)
def SFPABS(vc, vd, mod1): return _vcvd(0x7D, 0, vc, vd, mod1)
def SFPAND(vb, vc, vd, mod1): return _vcvd(0x7E, vb, vc, vd, mod1)
def SFPOR(vb, vc, vd, mod1): return _vcvd(0x7F, vb, vc, vd, mod1)
def SFPNOT(vc, vd): return _vcvd(0x80, 0, vc, vd, 0)
def SFPLZ(vc, vd, mod1): return _vcvd(0x81, 0, vc, vd, mod1)
def SFPSETEXP(imm8, vc, vd, mod1): return _vcvd(0x82, imm8, vc, vd, mod1)
def SFPSETMAN(imm12, vc, vd, mod1): return _vcvd(0x83, imm12, vc, vd, mod1)
def SFPSETSGN(imm1, vc, vd, mod1): return _vcvd(0x89, imm1, vc, vd, mod1)
def SFPDIVP2(imm8, vc, vd, mod1): return _vcvd(0x76, imm8, vc, vd, mod1)
def SFPEXEXP(vc, vd, mod1): return _vcvd(0x77, 0, vc, vd, mod1)
def SFPEXMAN(vc, vd, mod1): return _vcvd(0x78, 0, vc, vd, mod1)
def SFPXOR(vc, vd): return _vcvd(0x8D, 0, vc, vd, 0)
def SFPENCC(imm2, vd, mod1): return _vcvd(0x8A, imm2, 0, vd, mod1)
def SFPPUSHC(vd=0, mod1=0): return _vcvd(0x87, 0, 0, vd, mod1)
def SFPPOPC(vd=0, mod1=0): return _vcvd(0x88, 0, 0, vd, mod1)
def SFPCOMPC(vd=0): return _vcvd(0x8B, 0, 0, vd, 0)
def SFPTRANSP(vd=0): return _vcvd(0x8C, 0, 0, vd, 0)
def SFPGT(vc, vd, mod1): return _vcvd(0x97, 0, vc, vd, mod1)
def SFPLE(vc, vd, mod1): return _vcvd(0x96, 0, vc, vd, mod1)
def SFPSWAP(vc, vd, mod1): return _vcvd(0x92, 0, vc, vd, mod1)
def SFPSHFT2(vb, vc, vd, mod1): return _vcvd(0x94, vb, vc, vd, mod1)
def SFPSHFT2_IMM(imm12, vd): return _vcvd(0x94, imm12, 0, vd, 6)
def SFPCONFIG(imm16, vd, mod1): return _op(0x91, (imm16 << 8) | (vd << 4) | mod1)


def SFPLOADMACRO(macro, vdlo, mod0, addrmod, imm9, vdhi):
    return _op(0x93, (macro << 22) | (vdlo << 20) | (mod0 << 16) | (addrmod << 13)
               | (imm9 << 1) | vdhi)


def _dmareg(opcode, b_const, mode, result, opb, opa):
    return _op(opcode, (b_const << 23) | (mode << 18) | (result << 12) | (opb << 6) | opa)


def ADDDMAREG(c, res, b, a): return _dmareg(0x58, c, 0, res, b, a)
def SUBDMAREG(c, res, b, a): return _dmareg(0x59, c, 0, res, b, a)
def MULDMAREG(c, res, b, a): return _dmareg(0x5A, c, 0, res, b, a)
def BITWOPDMAREG(c, mode, res, b, a): return _dmareg(0x5B, c, mode, res, b, a)
def SHIFTDMAREG(c, mode, res, b, a): return _dmareg(0x5C, c, mode, res, b, a)
def CMPDMAREG(c, mode, res, b, a): return _dmareg(0x5D, c, mode, res, b, a)
def SETDMAREG(special, value16, half): return _op(0x45, (value16 << 8) | (special << 7) | half)
def FLUSHDMA(mask): return _op(0x46, mask)


# ---------------------------------------------------------------- state helpers
def lanes_of(values) -> np.ndarray:
    """A (32,) uint32 row from a list / scalar."""
    if isinstance(values, int):
        values = [values] * 32
    return np.array([int(v) & M32 for v in values], dtype=np.uint32)


def set_lreg(thread: Thread, index: int, values) -> None:
    thread.sfpu.lreg[index] = lanes_of(values)


def lreg(thread: Thread, index: int) -> list[int]:
    return [int(x) for x in thread.sfpu.lreg[index]]


def flags(thread: Thread) -> list[bool]:
    return [bool(x) for x in thread.sfpu.lane_flags]


def enable_predication(thread: Thread) -> None:
    """SFPENCC Imm2=3, EI_RI: predication on, every lane active."""
    execute(thread, SFPENCC(3, 0, 10))


def s32(v: int) -> int:
    v &= M32
    return v - (1 << 32) if v & 0x8000_0000 else v


def sext12(v: int) -> int:
    v &= 0xFFF
    return v - 0x1000 if v & 0x800 else v


def sm_key(v: int) -> int:
    """Sign-magnitude order key (spec §13) written independently of the implementation."""
    v &= M32
    if v & 0x8000_0000:
        return -(v & 0x7FFF_FFFF) - 1
    return v


# ---------------------------------------------------------------- per-lane reference model
class RefSfpu:
    """Lane-by-lane model of the ctl instructions, written from the spec's prose.

    Leniency is assumed (the property tests run with ``lenient=True``): dropped writes
    to LReg[8..15] and the documented lenient choices for the flag stack.
    """

    def __init__(self, thread: Thread) -> None:
        s = thread.sfpu
        self.lreg = [[int(x) for x in row] for row in s.lreg]
        self.flags = [bool(x) for x in s.lane_flags]
        self.use = [bool(x) for x in s.use_lane_flags]
        self.stack = [[(bool(f[L]), bool(u[L])) for f, u in s.flag_stack] for L in range(32)]
        self.lane_config = [int(x) for x in s.lane_config]
        self.template = [[int(x) for x in row] for row in s.template]
        self.sequence = [[int(x) for x in row] for row in s.sequence]
        self.misc = [int(x) for x in s.misc]

    # -- helpers
    def en(self, L: int) -> bool:
        if (self.lane_config[L & 7] >> (12 + (L >> 3))) & 1:
            return False
        return self.flags[L] if self.use[L] else True

    def cfg(self, L: int, bit: int) -> bool:
        return bool((self.lane_config[L] >> bit) & 1)

    def backdoor(self, word: int, vd: int) -> bool:
        """§3.4 rule 1: True if the template load replaced the instruction in every lane.

        Lanes whose DISABLE_BACKDOOR_LOAD bits differ (possible after an SFPCONFIG) are a
        rule violation; leniently (lanes.guard_vd) the template is stored in the lanes with
        the backdoor open and the instruction executes with its LReg write dropped.
        """
        if vd < 12:
            return False
        open_lanes = [L for L in range(32) if not self.cfg(L, 1)]
        for L in open_lanes:
            self.template[vd - 12][L] = word
        return len(open_lanes) == 32

    def put(self, vd: int, L: int, value: int) -> None:
        if vd < 8:
            self.lreg[vd][L] = value & M32

    # -- the instructions
    def step(self, word: int) -> None:
        opcode = word >> 24
        vd, vc, mod1 = (word >> 4) & 15, (word >> 8) & 15, word & 15
        imm12 = (word >> 12) & 0xFFF
        name = OPCODES[opcode]
        if name == "SFPCONFIG":
            return self.sfpconfig(word)
        if self.backdoor(word, vd):
            return
        getattr(self, name.lower())(word, vd, vc, mod1, imm12)

    def lanewise(self, vd, fn) -> list:
        """Compute fn(L) in every lane first (sources sampled before writes), write the EN lanes."""
        ens = [self.en(L) for L in range(32)]
        vals = [fn(L) for L in range(32)]
        for L in range(32):
            if ens[L]:
                self.put(vd, L, vals[L])
        return ens

    def sfpiadd(self, word, vd, vc, mod1, imm12):
        r = self.lreg
        def fn(L):
            if mod1 & 1:
                return (r[vc][L] + sext12(imm12)) & M32
            if mod1 & 2:
                return (r[vc][L] - r[vd][L]) & M32
            return (r[vc][L] + r[vd][L]) & M32
        vals = [fn(L) for L in range(32)]
        ens = self.lanewise(vd, lambda L: vals[L])
        if vd < 8:
            for L in range(32):
                if ens[L]:
                    if not mod1 & 4:
                        self.flags[L] = bool(vals[L] & 0x8000_0000)
                    if mod1 & 8:
                        self.flags[L] = not self.flags[L]

    def sfpshft(self, word, vd, vc, mod1, imm12):
        r = self.lreg
        def fn(L):
            x = r[vd][L]
            amount = s32(r[vc][L])
            if mod1 & 1:
                if mod1 & 4:
                    x = r[vc][L]
                amount = sext12(imm12)
            if amount >= 0:
                return (x << (amount & 31)) & M32
            if mod1 & 2:
                return (s32(x) >> ((-amount) & 31)) & M32
            return x >> ((-amount) & 31)
        self.lanewise(vd, fn)

    def sfpand(self, word, vd, vc, mod1, imm12):
        vb = imm12 & 15 if mod1 & 1 else vd
        self.lanewise(vd, lambda L: self.lreg[vb][L] & self.lreg[vc][L])

    def sfpor(self, word, vd, vc, mod1, imm12):
        vb = imm12 & 15 if mod1 & 1 else vd
        self.lanewise(vd, lambda L: self.lreg[vb][L] | self.lreg[vc][L])

    def sfpxor(self, word, vd, vc, mod1, imm12):
        self.lanewise(vd, lambda L: self.lreg[vd][L] ^ self.lreg[vc][L])

    def sfpnot(self, word, vd, vc, mod1, imm12):
        self.lanewise(vd, lambda L: ~self.lreg[vc][L] & M32)

    def sfpabs(self, word, vd, vc, mod1, imm12):
        def fn(L):
            x = self.lreg[vc][L]
            if not x & 0x8000_0000:
                return x
            if mod1 & 1:
                exp, man = (x >> 23) & 0xFF, x & 0x7FFFFF
                return x if (exp == 255 and man) else x & 0x7FFF_FFFF
            return (-x) & M32
        self.lanewise(vd, fn)

    def sfplz(self, word, vd, vc, mod1, imm12):
        cs = [self.lreg[vc][L] & (0x7FFF_FFFF if mod1 & 4 else M32) for L in range(32)]
        ens = self.lanewise(vd, lambda L: 32 - cs[L].bit_length())
        if vd < 8:
            for L in range(32):
                if ens[L]:
                    if mod1 & 2:
                        self.flags[L] = cs[L] != 0
                    if mod1 & 8:
                        self.flags[L] = not self.flags[L]

    def sfpexexp(self, word, vd, vc, mod1, imm12):
        es = [((self.lreg[vc][L] >> 23) & 0xFF) - (0 if mod1 & 1 else 127) for L in range(32)]
        ens = self.lanewise(vd, lambda L: es[L] & M32)
        if vd < 8:
            for L in range(32):
                if ens[L]:
                    if mod1 & 2:
                        self.flags[L] = es[L] < 0
                    if mod1 & 8:
                        self.flags[L] = not self.flags[L]

    def sfpexman(self, word, vd, vc, mod1, imm12):
        self.lanewise(vd, lambda L: (self.lreg[vc][L] & 0x7FFFFF) + (0 if mod1 & 1 else 1 << 23))

    def sfpsetexp(self, word, vd, vc, mod1, imm12):
        def fn(L):
            c = self.lreg[vc][L]
            if mod1 & 1:
                e = imm12 & 0xFF
            elif mod1 & 2:
                e = (self.lreg[vd][L] >> 23) & 0xFF
            else:
                e = self.lreg[vd][L] & 0xFF
            return (c & 0x807F_FFFF) | (e << 23)
        self.lanewise(vd, fn)

    def sfpsetman(self, word, vd, vc, mod1, imm12):
        def fn(L):
            m = (imm12 << 11) if mod1 & 1 else self.lreg[vd][L] & 0x7FFFFF
            return (self.lreg[vc][L] & 0xFF80_0000) | m
        self.lanewise(vd, fn)

    def sfpsetsgn(self, word, vd, vc, mod1, imm12):
        def fn(L):
            s = (imm12 & 1) if mod1 & 1 else self.lreg[vd][L] >> 31
            return (self.lreg[vc][L] & 0x7FFF_FFFF) | (s << 31)
        self.lanewise(vd, fn)

    def sfpdivp2(self, word, vd, vc, mod1, imm12):
        imm8 = imm12 & 0xFF
        def fn(L):
            x = self.lreg[vc][L]
            e = (x >> 23) & 0xFF
            if mod1 & 1:
                if e == 255:
                    return x
                e = (e + imm8) & 0xFF
            else:
                e = imm8
            return (x & 0x807F_FFFF) | (e << 23)
        self.lanewise(vd, fn)

    def sfpsetcc(self, word, vd, vc, mod1, imm12):
        for L in range(32):
            if not self.en(L):
                continue
            if not self.use[L]:
                self.flags[L] = False
            elif mod1 & 8:
                self.flags[L] = False
            elif mod1 & 1:
                self.flags[L] = bool(imm12 & 1)
            else:
                c = s32(self.lreg[vc][L])
                self.flags[L] = {0: c < 0, 2: c != 0, 4: c >= 0, 6: c == 0}[mod1 & 7]

    def sfpencc(self, word, vd, vc, mod1, imm12):
        imm2 = imm12 & 3
        for L in range(32):
            if mod1 & 2:
                self.use[L] = bool(imm2 & 1)
            elif mod1 & 1:
                self.use[L] = not self.use[L]
            self.flags[L] = bool(imm2 & 2) if mod1 & 8 else True

    @staticmethod
    def boolean(k, a, b):
        return {1: b, 2: not b, 3: a and b, 4: a or b, 5: a and not b, 6: a or not b,
                7: (not a) and b, 8: (not a) or b, 9: (not a) and (not b), 10: (not a) or (not b),
                11: a != b, 12: a == b}[k]

    def sfppushc(self, word, vd, vc, mod1, imm12):
        for L in range(32):
            st = self.stack[L]
            if mod1 == 0:
                if len(st) >= 8:
                    del st[0]
                st.append((self.flags[L], self.use[L]))
                continue
            if not st:
                if mod1 == 13:
                    self.flags[L] = not self.flags[L]
                continue
            tf, tu = st[-1]
            if mod1 <= 12:
                st[-1] = (self.boolean(mod1, tf, self.flags[L]), self.use[L])
            elif mod1 == 13:
                self.flags[L] = not self.flags[L]
                st[-1] = (self.flags[L], self.use[L])
            elif mod1 == 14:
                st[-1] = (True, True)
            else:
                st[-1] = (False, True)

    def sfppopc(self, word, vd, vc, mod1, imm12):
        for L in range(32):
            st = self.stack[L]
            tf, tu = st[-1] if st else (False, False)
            if mod1 == 0:
                if st:
                    st.pop()
                self.use[L], self.flags[L] = tu, tf
            elif mod1 <= 12:
                self.use[L] = tu
                self.flags[L] = self.boolean(mod1, self.flags[L], tf)
            elif mod1 == 13:
                self.flags[L] = not self.flags[L]
            elif mod1 == 14:
                self.use[L], self.flags[L] = True, True
            else:
                self.use[L], self.flags[L] = True, False

    def sfpcompc(self, word, vd, vc, mod1, imm12):
        for L in range(32):
            st = self.stack[L]
            tf, tu = st[-1] if st else (True, True)
            self.flags[L] = (tf and not self.flags[L]) if (tu and self.use[L]) else False

    def _cmp(self, vd, vc, mod1, greater):
        ts = [sm_key(self.lreg[vc][L]) < sm_key(self.lreg[vd][L]) for L in range(32)]
        if not greater:
            ts = [not t for t in ts]
        ens = [self.en(L) for L in range(32)]
        for L in range(32):
            if ens[L]:
                if mod1 & 8:
                    self.put(vd, L, M32 if ts[L] else 0)
                if mod1 & 1:
                    self.flags[L] = ts[L]
            if mod1 & 2 and self.stack[L]:
                tf, tu = self.stack[L][-1]
                self.stack[L][-1] = ((tf or ts[L]) if mod1 & 4 else (tf and ts[L]), tu)

    def sfpgt(self, word, vd, vc, mod1, imm12):
        self._cmp(vd, vc, mod1, True)

    def sfple(self, word, vd, vc, mod1, imm12):
        self._cmp(vd, vc, mod1, False)

    def sfpswap(self, word, vd, vc, mod1, imm12):
        masks = {1: 0xFFFFFFFF, 2: 0x0000FFFF, 3: 0x00FF00FF, 4: 0xFF0000FF, 5: 0x000000FF,
                 6: 0x0000FF00, 7: 0x00FF0000, 8: 0xFF000000}
        vd_min = masks.get(mod1, 0)
        for L in range(32):
            if not self.en(L):
                continue
            cv, dv = self.lreg[vc][L], self.lreg[vd][L]
            if mod1 == 0:
                swap = True
            else:
                less = sm_key(cv) < sm_key(dv)
                swap = less if (vd_min >> L) & 1 else not less
                if self.cfg(L, 8):
                    swap = not swap
            if not swap:
                continue
            if self.cfg(L, 2):
                if vc < 4:
                    self.lreg[vc][L] = dv
                if vd < 4:
                    self.lreg[vd][L] = cv
                a, b = 4 + (vc & 3), 4 + (vd & 3)
                self.lreg[a][L], self.lreg[b][L] = self.lreg[b][L], self.lreg[a][L]
            else:
                if vc < 8:
                    self.lreg[vc][L] = dv
                if vd < 8:
                    self.lreg[vd][L] = cv

    def sfptransp(self, word, vd, vc, mod1, imm12):
        old = [row[:] for row in self.lreg]
        for base in (0, 4):
            for i in range(4):
                for r in range(4):
                    for c in range(8):
                        L = 8 * r + c
                        if self.en(L):
                            self.lreg[base + i][L] = old[base + r][8 * i + c]

    def sfpshft2(self, word, vd, vc, mod1, imm12):
        old = [row[:] for row in self.lreg]
        ens = [self.en(L) for L in range(32)]
        ror = [old[vc][L - 1] if L & 7 else old[vc][L + 7] for L in range(32)]
        if mod1 <= 2:
            for L in range(32):
                if not ens[L]:
                    continue
                self.lreg[0][L], self.lreg[1][L], self.lreg[2][L] = old[1][L], old[2][L], old[3][L]
                if mod1 == 0:
                    self.lreg[3][L] = 0
                elif mod1 == 1:
                    self.lreg[3][L] = old[0][L + 8] if L < 24 else 0
                else:
                    self.lreg[3][L] = ror[L]
            return
        for L in range(32):
            if not ens[L]:
                continue
            if mod1 == 3:
                v = ror[L]
            elif mod1 == 4:
                v = old[vc][L - 1] if L & 7 else 0
            elif mod1 == 5:
                s = s32(old[vc][L])
                x = old[imm12 & 15][L]
                v = (x << (s & 31)) & M32 if s >= 0 else x >> ((-s) & 31)
            elif mod1 == 6:
                s = sext12(imm12)
                x = old[s & 15][L]
                v = (x << (s & 31)) & M32 if s >= 0 else x >> ((-s) & 31)
            else:
                return
            self.put(vd, L, v)

    def sfpconfig(self, word):
        vd, mod1, imm16 = (word >> 4) & 15, word & 15, (word >> 8) & 0xFFFF
        defaults = {11: 0xBF800000, 12: 0x37800000, 13: 0xBF2CC4C7, 14: 0xBEB08FF9}
        op = (mod1 >> 1) & 3
        def combine(old, v):
            return [v, old | v, old & v, old ^ v][op]
        l0 = [self.lreg[0][L] for L in range(8)]
        for L in range(32):
            if mod1 & 8 and not (imm16 >> (2 * (L & 7))) & 1:
                continue
            if self.use[L & 7] and not self.flags[L & 7]:
                continue
            v = imm16 if mod1 & 1 else l0[L & 7]
            if vd <= 3:
                self.template[vd][L] = l0[L & 7]
            elif vd <= 7:
                self.sequence[vd - 4][L] = v
            elif vd == 8:
                self.misc[L] = combine(self.misc[L], v & 0xFFF) & 0xFFF
            elif vd in (9, 10):
                pass
            elif vd <= 14:
                self.lreg[vd][L] = defaults[vd] if mod1 & 1 else l0[L & 7]
            else:
                old = self.lane_config[L]
                new = combine(old, v) & 0x3FFFF
                if mod1 & 1:
                    new |= old & 0x30000
                self.lane_config[L] = new

    # -- comparison with the implementation
    def mismatches(self, thread: Thread) -> list[str]:
        s = thread.sfpu
        out = []
        for i in range(17):
            got = [int(x) for x in s.lreg[i]]
            if got != self.lreg[i]:
                out.append(f"LReg[{i}]: got {[hex(x) for x in got]} want {[hex(x) for x in self.lreg[i]]}")
        if [bool(x) for x in s.lane_flags] != self.flags:
            out.append(f"LaneFlags: got {list(map(int, s.lane_flags))} want {list(map(int, self.flags))}")
        if [bool(x) for x in s.use_lane_flags] != self.use:
            out.append("UseLaneFlags differ")
        depth = len(s.flag_stack)
        for L in range(32):
            if len(self.stack[L]) != depth:
                out.append(f"stack depth lane {L}: got {depth} want {len(self.stack[L])}")
                break
            got = [(bool(f[L]), bool(u[L])) for f, u in s.flag_stack]
            if got != self.stack[L]:
                out.append(f"stack lane {L}: got {got} want {self.stack[L]}")
                break
        if [int(x) for x in s.lane_config] != self.lane_config:
            out.append("LaneConfig differs")
        if [[int(x) for x in r] for r in s.template] != self.template:
            out.append("InstructionTemplate differs")
        if [[int(x) for x in r] for r in s.sequence] != self.sequence:
            out.append("Sequence differs")
        if [int(x) for x in s.misc] != self.misc:
            out.append("Misc differs")
        return out
