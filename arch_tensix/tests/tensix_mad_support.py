"""Test helpers of the mad tests (arithmetic, LUT, conversion and move instructions).

* ``Thread`` — a stand-in Tensix thread (core, arch name, config) the semantic
  functions accept; ``execute(thread, word)`` decodes one instruction word with the
  chip's table and runs the function its row names, as the engine does.
* An independent encoder of the instructions under test, one function per
  instruction, from the field layouts of spec tensix-sfpu.md §1.
* Loading of the differential vectors in ``shared/reference/vectors`` (the tests
  skip when ``shared/`` is not beside the repository) and 32-lane chunking.
* ``fma_ref`` — FMA_BH on Python ints, one value at a time, written from the step
  list of §4.2 independently of ``tessera_tensix.fma`` (for hypothesis properties).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from tessera.isa import Decoder
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.config import ConfigSpace, TensixConfig
from tessera_tensix.core import TensixCore

M32 = 0xFFFF_FFFF
LANES = 32

OPCODES = {
    0x71: "SFPLOADI", 0x73: "SFPLUT", 0x74: "SFPMULI", 0x75: "SFPADDI", 0x7C: "SFPMOV",
    0x84: "SFPMAD", 0x85: "SFPADD", 0x86: "SFPMUL", 0x8E: "SFP_STOCH_RND", 0x8F: "SFPNOP",
    0x90: "SFPCAST", 0x95: "SFPLUTFP32", 0x98: "SFPMUL24", 0x99: "SFPARECIP",
    0x8A: "SFPENCC", 0x91: "SFPCONFIG",
}


class Thread:
    """The parts of a TensixThread the semantics use."""

    def __init__(self, *, lenient: bool = False, chip: str = "bh", **config: Any) -> None:
        self.core = TensixCore(TensixConfig(lenient=lenient, **config))
        self.arch = SimpleNamespace(name="tensix" if chip == "bh" else "tensix-wh")
        self.tid = 0
        self.gpr = [0] * 64
        self.rwc = {"dst": 0, "srca": 0, "srcb": 0, "sp": 0}
        self.tcfg = ConfigSpace()

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


# ---------------------------------------------------------------- independent encoder (§1)
def _op(opcode: int, params: int) -> int:
    assert 0 <= params < (1 << 24), hex(params)
    return (opcode << 24) | params


def _abcd(opcode: int, va: int, vb: int, vc: int, vd: int, mod1: int) -> int:
    return _op(opcode, (va << 16) | (vb << 12) | (vc << 8) | (vd << 4) | mod1)


def SFPMAD(va, vb, vc, vd, mod1): return _abcd(0x84, va, vb, vc, vd, mod1)
def SFPADD(va, vb, vc, vd, mod1): return _abcd(0x85, va, vb, vc, vd, mod1)
def SFPMUL(va, vb, vc, vd, mod1): return _abcd(0x86, va, vb, vc, vd, mod1)
def SFPMUL24(va, vb, vc, vd, mod1): return _abcd(0x98, va, vb, vc, vd, mod1)
def SFPADDI(imm16, vd, mod1): return _op(0x75, (imm16 << 8) | (vd << 4) | mod1)
def SFPMULI(imm16, vd, mod1): return _op(0x74, (imm16 << 8) | (vd << 4) | mod1)
def SFPLUT(vd, mod0): return _op(0x73, (vd << 20) | (mod0 << 16))
def SFPLUTFP32(vd, mod1, mirror=None):
    return _op(0x95, ((mod1 if mirror is None else mirror) << 16) | (vd << 4) | mod1)
def SFPARECIP(vb, vc, vd, mod1): return _abcd(0x99, 0, vb, vc, vd, mod1)
def SFPCAST(vc, vd, mod1): return _abcd(0x90, 0, 0, vc, vd, mod1)
def SFPMOV(vc, vd, mod1): return _abcd(0x7C, 0, 0, vc, vd, mod1)
def SFPNOP(): return _op(0x8F, 0)
def SFPLOADI(vd, mod0, imm16): return _op(0x71, (vd << 20) | (mod0 << 16) | imm16)


def SFP_STOCH_RND(rnd_mode, imm5, vb, vc, vd, mod1):
    """``mod1`` is [3:0] as in tt-llk's TT_OP_SFP_STOCH_RND (bit 3 = UseImm5)."""
    return _op(0x8E, (rnd_mode << 21) | (imm5 << 16) | (vb << 12) | (vc << 8) | (vd << 4) | mod1)


def SFPENCC(imm2, vd, mod1): return _op(0x8A, (imm2 << 12) | (vd << 4) | mod1)
def SFPCONFIG(imm16, vd, mod1): return _op(0x91, (imm16 << 8) | (vd << 4) | mod1)


# ---------------------------------------------------------------- state helpers
def lanes_of(values) -> np.ndarray:
    if isinstance(values, int):
        values = [values] * LANES
    values = list(values) + [0] * (LANES - len(values))
    return np.array([int(v) & M32 for v in values], dtype=np.uint32)


def set_lreg(thread: Thread, index: int, values) -> None:
    thread.sfpu.lreg[index] = lanes_of(values)


def lreg(thread: Thread, index: int) -> list[int]:
    return [int(x) for x in thread.sfpu.lreg[index]]


def f2u(x: float) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def u2f(u: int) -> float:
    return float(np.array([u], dtype=np.uint32).view(np.float32)[0])


# ---------------------------------------------------------------- reference vectors
def shared_reference() -> Path:
    """``shared/reference`` beside the repository (skip the test when absent)."""
    path = Path(__file__).resolve().parents[2].parent / "shared" / "reference"
    if not path.is_dir():
        pytest.skip("shared/reference is not beside the repository")
    return path


@cache
def _load(name: str) -> tuple[dict, ...]:
    path = shared_reference() / "vectors" / name
    with path.open() as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def vectors(name: str) -> tuple[dict, ...]:
    return _load(name)


def h(text: str) -> int:
    return int(text, 16)


def chunks(records, size: int = LANES) -> Iterator[list[dict]]:
    records = list(records)
    for start in range(0, len(records), size):
        yield records[start:start + size]


def group_by(records, *keys: str) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for r in records:
        out.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    return out


class Tally:
    """Counts records and mismatching bits for the report line of a vector test."""

    def __init__(self) -> None:
        self.records = 0
        self.bad: list[str] = []

    def check(self, got: int, want: int, what: Any) -> None:
        self.records += 1
        if got != want:
            self.bad.append(f"{what}: got {got:#010x} want {want:#010x}")

    def assert_clean(self) -> None:
        assert not self.bad, f"{len(self.bad)} of {self.records} mismatch; first: {self.bad[:5]}"


# ---------------------------------------------------------------- scalar FMA_BH (§4.2)
def _sticky(v: int, k: int) -> int:
    w = v >> k
    if w and (w << k) != v:
        w |= 1
    return w


def fma_ref(x: int, y: int, z: int) -> int:
    """FMA_BH of three FP32 bit patterns, one lane, straight from the spec's steps."""
    sx, ex, fx = x >> 31, (x >> 23) & 255, x & 0x7FFFFF
    sy, ey, fy = y >> 31, (y >> 23) & 255, y & 0x7FFFFF
    sz, ez, fz = z >> 31, (z >> 23) & 255, z & 0x7FFFFF
    mx = fx | 0x800000 if ex else 0
    my = fy | 0x800000 if ey else 0
    mz = fz | 0x800000 if ez else 0
    sp = sx ^ sy
    big = 8 * mx * my
    mp = (big >> 23) | (1 if big & 0x7FFFFF else 0)
    ep = ex + ey - 127
    if ex == 255 or ey == 255 or ez == 255 or ep >= 255:
        xnan, ynan, znan = ex == 255 and fx, ey == 255 and fy, ez == 255 and fz
        xinf, yinf, zinf = ex == 255 and not fx, ey == 255 and not fy, ez == 255 and not fz
        if (xnan or ynan or znan or (xinf and my == 0) or (yinf and mx == 0)
                or (zinf and (xinf or yinf) and sz != sp)):
            return 0x7FC00000
        if zinf:
            return z
        return (sp << 31) | 0x7F800000
    if mp == 0 or ep < 0:
        return z if mz else (sz & sp) << 31
    e = max(ep, ez)
    a = _sticky(mp, e - ep)
    b = _sticky(8 * mz, e - ez)
    sr = sp if a >= b else sz
    r = a + b if sp == sz else abs(a - b)
    if r == 0:
        return (sz & sp) << 31
    n = r.bit_length() - 1 - 26
    e2 = e + n
    if e2 >= 255:
        return (sr << 31) | 0x7F800000
    if e2 <= 0:
        n += 1
        e2 = 0
    r = r << -n if n <= 0 else _sticky(r, n)
    out = e2 * (1 << 23) + ((r >> 3) & 0x7FFFFF)
    if (r & 7) + (out & 1) > 4:
        out += 1
    if out < (1 << 23):
        out = 0
    return (sr << 31) | out
