"""Helpers for the system tests (test_sys_*.py): a small machine, real words, tiny programs.

The system tests run short programs (interrupts, threads, single step need the
engine's real scheduling), so this module carries a *minimal* encoding table for
the dozen instructions they use, with the spec's bit layouts (section 2.3).  It
depends only on the semantic registry, not on the full table, so the system tests
exercise exception entry, interrupts and threads independently of the decoder.
"""

from __future__ import annotations

from typing import Any

from phoenix_support import (  # noqa: F401 - re-exported for the test_sys_* modules
    OPS,
    bcc_word,
    csr_word,
    image,
    j_word,
    make_arch,
    r1,
    r2,
    ri,
    thread,
)
from phoenix_support import ins as _ins
from phoenix_support import machine as _machine

from tessera.isa import Encoding
from tessera.machine import Machine
from tessera_phoenix.semantics import REGISTRY

OP6 = 0x3F
R1_MASK = OP6 | 63 << 27 | 127 << 20  # opcode, Func = 1, bit 26 + Func1


#: rows name their operations in the plugin's registry, as the real table does (they
#: pickle by name, so test machines can be snapshotted)
SEM = REGISTRY.ref
ENCODINGS = (
    Encoding("brk", 0, OP6, "{rt}, {ra}, {imm}", SEM("brk"), "sys"),
    Encoding("addi", 4, OP6, "{rt}, {ra}, {imm}", SEM("addi"), "alu"),
    Encoding("csr", 7, OP6, "{rt}, {ra}, {csr}", SEM("csrrd"), "csr"),
    Encoding("ori", 9, OP6, "{rt}, {ra}, {imm}", SEM("ori"), "alu"),
    Encoding("nop", 11, OP6, "", SEM("nop"), "nop"),
    Encoding("bra", 25, OP6 | 3 << 6, "{reltarget}", SEM("bra"), "branch"),
    Encoding("bcc", 28, OP6, "{bra}, {brb}, {bdisp}", SEM("bcc"), "branch"),
    Encoding("store", 40, OP6, "{rt}, {imm}, {ra}", SEM("store"), "mem"),
    Encoding("load", 44, OP6, "{rt}, {imm}, {ra}", SEM("load"), "mem"),
    Encoding("rti", r1(25) & R1_MASK, R1_MASK, "", SEM("rti"), "sys"),
    Encoding("rex", r1(26) & R1_MASK, R1_MASK, "{ra}", SEM("rex"), "rex"),
    Encoding("popq", r1(9) & R1_MASK, R1_MASK, "{rt}", SEM("popq"), "sys"),
)


def refine(ins: Any, peek: Any) -> None:
    """The table's contract: ``ins.value`` = the sign-extended immediate (no postfixes here)."""
    for name in ("imm", "bdisp", "reltarget"):
        if hasattr(ins, name):
            ins.value = getattr(ins, name)


ARCH = make_arch("phoenix-sys-test", ENCODINGS, refine=refine)

CODE = 0x1000        # programs go here (DRAM)
HANDLER = 0x8000     # TVEC3 in the tests that take exceptions


def machine(**config: Any) -> Machine:
    return _machine(arch=ARCH, **config)


def load(m: Machine, address: int, words: list[int]) -> int:
    """Write instruction words at ``address``; returns the address after them."""
    m.space.write_bytes(address, image(words), force=True)
    return address + 6 * len(words)


def ins(word: int, address: int = CODE, **fields: Any) -> Any:
    """A decoded-like instruction for calling a semantic function directly (``value`` 0)."""
    fields.setdefault("value", 0)
    return _ins(word, address=address, **fields)


# ---------------------------------------------------------------------------- words


def addi(rt: int, ra: int, imm: int) -> int:
    return ri(4, rt, ra, imm)


def ldi(rt: int, imm: int) -> int:
    return ri(9, rt, 0, imm)


def nop() -> int:
    return 11


def brk(rt: int = 0, imm: int = 0) -> int:
    return ri(0, rt, 0, imm)


csr = csr_word


def rti() -> int:
    return r1(25)


def rex(tm: int, ra: int = 0, *, irq4: int = 0, v: int = 1) -> int:
    """REX: Tm bits 7:6, Irq4 bits 11:8 (the Rt slot), v bit 33, PL from Ra."""
    return r1(26, irq4 << 2 | tm, ra, f=v)


def queue_op(func1: int, rt: int, q: int) -> int:
    return r1(func1, rt, q & 15)


def pushq_word(q: int, rb: int) -> int:
    """PUSHQ: R2 func 23, queue number in the Ra slot, value in Rb."""
    return r2(23, 0, q & 15, rb)


def bra(disp: int) -> int:
    return j_word(25, disp)


def bne(ra: int, rb: int, disp: int) -> int:
    return bcc_word(7, ra, rb, disp)


def ld(rt: int, ra: int, disp: int) -> int:
    return ri(44, rt, ra, disp)


def st(rs: int, ra: int, disp: int) -> int:
    return ri(40, rs, ra, disp)


def status_with(mode: int = 3, *, mie: bool = False, ipl: int = 0, pl: int = 0xFF,
                extra: int = 0) -> int:
    return pl << 24 | mode << 10 | ipl << 5 | (8 if mie else 0) | extra
