"""Helpers for the MMU tests (test_mmu_*.py): machines, modes, TLB entries, page tables.

The MMU-support semantics are called directly with decoded-like objects whose
words use the R2/R1 layout of spec 2.3, so the tests do not depend on the encoding
table.  The decode-cache test needs instructions that really run through the
engine; :data:`RUN_ARCH` is a two-instruction test architecture (``ldi`` on the RI
layout of ORI, ``halt`` on the NOP opcode) for that.
"""

from __future__ import annotations

from typing import Any

from phoenix_support import (  # noqa: F401 - re-exported for the test_mmu_* modules
    M32,
    OPS,
    ins,
    machine,
    make_arch,
    r2,
    ri,
    thread,
    trap_of,
    v,
)
from phoenix_support import vget as vec_words  # noqa: F401
from phoenix_support import vset as set_vec  # noqa: F401

from tessera.control import Halt
from tessera.isa import Encoding

PAGE = 1 << 14

USER, SUPERVISOR, MACHINE = 0, 1, 3
MPRV = 1 << 17
R, W, X = 0x10, 0x08, 0x04
G, C, A, M = 0x40, 0x20, 0x80, 0x100

# PTBR fields
S_BIT = 1 << 4
TREE = 1


def ptbr(base: int = 0, *, levels: int = 0, al: int = 0, s: bool = False, tree: bool = False) -> int:
    return (base & 0xFFFF_E000) | levels << 8 | al << 6 | (S_BIT if s else 0) | (TREE if tree else 0)


def _ldi(t: Any, ins: Any) -> None:
    t.wr(ins.rt & 63, ins.imm & M32)


def _halt(t: Any, ins: Any) -> None:
    raise Halt(0)


def _refine(ins: Any, peek: Any) -> None:
    """Look at the next word the way the postfix merger does (it must never trap)."""
    ins.peeked = peek(ins.address + 6)


RUN_ENCODINGS = (
    Encoding("ldi", 9, 0x3F, "{rt}, {ra}, {imm}", semantics=_ldi),
    Encoding("halt", 11, 0x3F, "", semantics=_halt),
)


RUN_ARCH = make_arch("phoenix-mmu-run", RUN_ENCODINGS, refine=_refine)


def set_mode(t: Any, mode: int, *, mprv: bool = False, previous: int | None = None) -> None:
    """Put ``t`` in ``mode`` (status stack entry 0), optionally with MPRV and a previous mode."""
    t.status_stack[0] = (t.status_stack[0] & ~(0xC00 | MPRV)) | mode << 10 | (MPRV if mprv else 0)
    if previous is not None:
        t.status_stack[1] = (t.status_stack[1] & ~0xC00) | previous << 10


def tlb_entry(va: int, pa: int, rights: int = R | W | X, *, asid: int = 0, g: bool = False,
              extra: int = 0) -> list[int]:
    """The 12 words of a TLB entry mapping the 16 KiB page of ``va`` to that of ``pa``."""
    e = [0] * 12
    e[0] = ((pa >> 14) & 0x3F_FFFF) << 10 | (G if g else 0) | rights | extra
    e[1] = (va >> 24) << 24 | (asid & 0x3FF) << 12 | (pa >> 36) & 0xFFF
    return e


def set_of(va: int) -> int:
    return (va >> 14) & 0x3FF


def put(t: Any, way: int, va: int, pa: int, rights: int = R | W | X, **kw: Any) -> None:
    """Write a TLB entry straight into the TLB (bypassing policy), as a test fixture."""
    t.shared.mmu.tlb.write(way, set_of(va), tlb_entry(va, pa, rights, **kw))


def phys_write(t: Any, pa: int, size: int, value: int) -> None:
    t.shared.machine.space.write(pa, size, value)


def phys_read(t: Any, pa: int, size: int) -> int:
    return t.shared.machine.space.read(pa, size)


# ---------------------------------------------------------------------------- instruction words


def tlb_ins(op2: int, rt: int, ra: int, rb: int = 0, *, mask: int = 0) -> Any:
    return ins(r2(7, rt, ra, rb, op2=op2, mask=mask))


def selector(way: int, s: int) -> int:
    """The Ra value of TLBRD/TLBRW for (way, set)."""
    return (s & 0x3FF) << 5 | (way & 7)


def ldi(rt: int, imm: int) -> int:
    return ri(9, rt, 0, imm)


HALT = 11


def put_code(t: Any, pa: int, words: list[int]) -> None:
    for i, w in enumerate(words):
        phys_write(t, pa + 6 * i, 6, w)


# ---------------------------------------------------------------------------- page tables in memory


INVALID_PTP = 0xFFFF_C000


class Tree:
    """A two-level hierarchical page table built in physical memory (spec 5.5)."""

    def __init__(self, t: Any, base: int = 0x8_0000, tables: int = 0x8_4000) -> None:
        self.t = t
        self.base = base
        self.next_table = tables
        self.leaf: dict[int, int] = {}
        for i in range(64):
            phys_write(t, base + 4 * i, 4, INVALID_PTP)

    def ptbr(self, **kw: Any) -> int:
        return ptbr(self.base, levels=2, tree=True, **kw)

    def map(self, va: int, pa: int, rights: int = R | W | X, *, g: bool = False, extra: int = 0,
            ppnx: int = 0) -> int:
        """Map the 16 KiB page of ``va``; returns the PTE's physical address."""
        top = va >> 26
        if top not in self.leaf:
            self.leaf[top] = self.next_table
            self.next_table += PAGE
            phys_write(self.t, self.base + 4 * top, 4, self.leaf[top] | (ppnx & 0xFFF) << 2 | 1)
        pte_addr = self.leaf[top] + 4 * ((va >> 14) & 0xFFF)
        phys_write(self.t, pte_addr, 4, ((pa >> 14) & 0x3F_FFFF) << 10 | (G if g else 0) | rights | extra)
        return pte_addr


def shpte(vpn: int, ppn: int, rights: int = 7, *, asid: int = 0, g: bool = False, valid: bool = True,
          a: bool = False, c: bool = False, m: bool = False) -> tuple[int, int]:
    """Words 0 and 1 of a small hash PTE (64 KiB page numbers; rights = R<<2|W<<1|X)."""
    w0 = ((1 << 31) if valid else 0) | ((ppn >> 16) & 7) << 22 | (1 << 21 if m else 0) \
        | (rights & 7) << 18 | (1 << 17 if a else 0) | (1 << 16 if c else 0) | (ppn & 0xFFFF)
    w1 = (asid & 0x3FF) << 22 | (1 << 21 if g else 0) | (vpn & 0xFFFF)
    return w0, w1


def put_shpte(t: Any, base: int, group: int, slot: int, words: tuple[int, int]) -> int:
    addr = base + 64 * group + 8 * slot
    phys_write(t, addr, 4, words[0])
    phys_write(t, addr + 4, 4, words[1])
    return addr
