"""Helpers of the SrcA/SrcB tests (test_srcmoves.py, test_rwc.py).

* An independent encoder of the matrix unit's movement and RWC instructions, written
  from spec tensix.md §5.2 (Blackhole bit positions; Wormhole's AddrMod is [16:15] and
  MOVB2D's mode bits [14:12]) — not from the package's tables.
* ``machine(chip, programs)`` — a direct-mode machine with one thread per program
  (tensix_sync_support.threads), and ``core(m)``.
* Reference conversions written from the pages' layouts with Python ints.
"""

from __future__ import annotations

from typing import Any

from tensix_sync_support import threads

CHIPS = ("bh", "wh")


def _am(chip: str, addr_mod: int) -> int:
    return (addr_mod & 7) << 14 if chip == "bh" else (addr_mod & 3) << 15


def _mov(opcode: int, chip: str, lo: int, src: int, addr_mod: int, mode: int, dst: int) -> int:
    return (opcode << 24 | lo << 23 | (src & 0x3F) << 17 | _am(chip, addr_mod) | mode << 13
            | (dst & 0x3FF))


def mova2d(chip: str, src: int, dst: int, move8: int = 0, addr_mod: int = 0, lo: int = 0) -> int:
    return _mov(0x12, chip, lo, src, addr_mod, move8, dst)


def movdbga2d(chip: str, src: int, dst: int, move8: int = 0, addr_mod: int = 0) -> int:
    return _mov(0x09, chip, 0, src, addr_mod, move8, dst)


def movd2a(chip: str, src: int, dst: int, move4: int = 0, addr_mod: int = 0, lo: int = 0) -> int:
    return _mov(0x08, chip, lo, src, addr_mod, move4, dst)


def movd2b(chip: str, src: int, dst: int, move4: int = 0, addr_mod: int = 0, lo: int = 0) -> int:
    return _mov(0x0A, chip, lo, src, addr_mod, move4, dst)


def movb2d(chip: str, src: int, dst: int, *, move4: int = 0, bcast8: int = 0, col0: int = 0,
           addr_mod: int = 0, lo: int = 0) -> int:
    shift = 11 if chip == "bh" else 12
    return (0x13 << 24 | lo << 23 | (src & 0x3F) << 17 | _am(chip, addr_mod)
            | (move4 << 2 | bcast8 << 1 | col0) << shift | (dst & 0x3FF))


def movb2a(chip: str, srca: int, srcb: int, move4: int = 0, addr_mod: int = 0) -> int:
    return 0x0B << 24 | (srca & 0x3F) << 17 | _am(chip, addr_mod) | move4 << 13 | (srcb & 0x3F)


def setdvalid(flip_a: int, flip_b: int = 0) -> int:
    return 0x57 << 24 | flip_b << 1 | flip_a


def cleardvalid(flip_a: int, flip_b: int = 0, keep: int = 0, reset: int = 0) -> int:
    return 0x36 << 24 | flip_b << 23 | flip_a << 22 | keep << 1 | reset


def zerosrc(clear_a: int, clear_b: int = 0, both: int = 0, single: int = 0, neginf: int = 0) -> int:
    return 0x11 << 24 | neginf << 4 | single << 3 | both << 2 | clear_b << 1 | clear_a


TRNSPSRCB = 0x16 << 24


def shiftxa(direction: int) -> int:
    return 0x17 << 24 | direction


def shiftxb(chip: str, row: int, zero: int = 0, addr_mod: int = 0) -> int:
    return 0x18 << 24 | _am(chip, addr_mod) | zero << 10 | (row & 0x3F)


def setrwc(*, flip_a: int = 0, flip_b: int = 0, dst_ctocr: int = 0, dst_cr: int = 0, srcb_cr: int = 0,
           srca_cr: int = 0, dst: int = 0, srcb: int = 0, srca: int = 0, set_fid: int = 0,
           set_dst: int = 0, set_b: int = 0, set_a: int = 0) -> int:
    return (0x37 << 24 | flip_b << 23 | flip_a << 22 | dst_ctocr << 21 | dst_cr << 20 | srcb_cr << 19
            | srca_cr << 18 | dst << 14 | srcb << 10 | srca << 6 | set_fid << 3 | set_dst << 2
            | set_b << 1 | set_a)


def incrwc(*, dst_cr: int = 0, srcb_cr: int = 0, srca_cr: int = 0, dst: int = 0, srcb: int = 0,
           srca: int = 0) -> int:
    return (0x38 << 24 | dst_cr << 20 | srcb_cr << 19 | srca_cr << 18 | dst << 14 | srcb << 10
            | srca << 6)


def machine(chip: str, programs: list[list[int]], **config: Any) -> Any:
    return threads(chip, programs, **config)


def core(m: Any) -> Any:
    return m.agent("t0").core


# ------------------------------------------------------------------ reference layouts
def ref_src_from_bf16(b: int) -> int:
    """IEEE BF16 -> Src cell: sign [18], mantissa7 at [17:11] ([10:8] zero), exponent [7:0]."""
    return (b >> 15) << 18 | (b & 0x7F) << 11 | (b >> 7) & 0xFF


def ref_dst_bf16(b: int) -> int:
    """IEEE BF16 -> Dst16b cell: sign [15], mantissa [14:8], exponent [7:0]."""
    return (b & 0x8000) | (b & 0x7F) << 8 | (b >> 7) & 0xFF


def ref_src_from_fp16(h: int) -> int:
    """IEEE FP16 -> Src cell: sign [18], mantissa10 [17:8], exponent5 [4:0]."""
    return (h >> 15) << 18 | (h & 0x3FF) << 8 | (h >> 10) & 0x1F


def ref_dst_fp16(h: int) -> int:
    """IEEE FP16 -> Dst16b cell: sign [15], mantissa [14:5], exponent [4:0]."""
    return (h & 0x8000) | (h & 0x3FF) << 5 | (h >> 10) & 0x1F


def ref_src_from_fp32(f: int) -> int:
    """IEEE FP32 -> Src TF32 cell (top 10 mantissa bits)."""
    return (f >> 31) << 18 | ((f >> 13) & 0x3FF) << 8 | (f >> 23) & 0xFF


def ref_dst32(f: int) -> int:
    """IEEE FP32 -> Dst32b value: high half the Dst BF16 cell of f >> 16, low half f's bits."""
    return ref_dst_bf16(f >> 16) << 16 | (f & 0xFFFF)
