"""Helpers for the system tests (test_sys_*.py): a small machine, real words, tiny programs.

The system tests run short programs (interrupts, threads, single step need the
engine's real scheduling), so this module carries a *minimal* encoding table for
the dozen instructions they use, with the spec's bit layouts (section 2.3).  It
depends only on the semantic registry, not on the full table, so the system tests
exercise exception entry, interrupts and threads independently of the decoder.
"""

from __future__ import annotations

import types
from typing import Any

from tessera_phoenix import exceptions
from tessera_phoenix.board import build
from tessera_phoenix.fields import FIELDS
from tessera_phoenix.registers import GPR, REG
from tessera_phoenix.semantics import load_all
from tessera_phoenix.timing import TIMING

from tessera.isa import Architecture, Encoding
from tessera.machine import Machine

OPS = load_all()
M32 = 0xFFFF_FFFF
OP6 = 0x3F
R1_MASK = OP6 | 63 << 27 | 127 << 20  # opcode, Func = 1, bit 26 + Func1


def _r1(func1: int) -> int:
    return 2 | 1 << 27 | func1 << 20


def _addi(thread: Any, ins: Any) -> Any:
    """ADDI by reference to a module-level function, so test machines can be snapshotted."""
    return OPS["addi"](thread, ins)


def _ori(thread: Any, ins: Any) -> Any:
    return OPS["ori"](thread, ins)


ENCODINGS = (
    Encoding("brk", 0, OP6, "{rt}, {ra}, {imm}", OPS["brk"], "sys"),
    Encoding("addi", 4, OP6, "{rt}, {ra}, {imm}", _addi, "alu"),
    Encoding("csr", 7, OP6, "{rt}, {ra}, {csr}", OPS["csrrd"], "csr"),
    Encoding("ori", 9, OP6, "{rt}, {ra}, {imm}", _ori, "alu"),
    Encoding("nop", 11, OP6, "", OPS["nop"], "nop"),
    Encoding("bra", 25, OP6 | 3 << 6, "{reltarget}", OPS["bra"], "branch"),
    Encoding("bcc", 28, OP6, "{bra}, {brb}, {bdisp}", OPS["bcc"], "branch"),
    Encoding("store", 40, OP6, "{rt}, {imm}, {ra}", OPS["store"], "mem"),
    Encoding("load", 44, OP6, "{rt}, {imm}, {ra}", OPS["load"], "mem"),
    Encoding("rti", _r1(25), R1_MASK, "", OPS["rti"], "sys"),
    Encoding("rex", _r1(26), R1_MASK, "{ra}", OPS["rex"], "rex"),
    Encoding("popq", _r1(9), R1_MASK, "{rt}", OPS["popq"], "sys"),
)


def refine(ins: Any, peek: Any) -> None:
    """The table's contract: ``ins.value`` = the sign-extended immediate (no postfixes here)."""
    for name in ("imm", "bdisp", "reltarget"):
        if hasattr(ins, name):
            ins.value = getattr(ins, name)


ARCH = Architecture("phoenix-sys-test", 48, (GPR, REG), FIELDS, ENCODINGS, build=build,
                    timing=TIMING, take_trap=exceptions.take_trap, illegal=exceptions.illegal,
                    reset_pc=0xFFFD0000, quantum=1, solo_quantum=1024, refine=refine)

CODE = 0x1000        # programs go here (DRAM)
HANDLER = 0x8000     # TVEC3 in the tests that take exceptions


def machine(**config: Any) -> Machine:
    return Machine(ARCH, host=None, config={"dram": 1 << 20, **config})


def thread(**config: Any) -> Any:
    return machine(**config).agents[0]


def load(m: Machine, address: int, words: list[int]) -> int:
    """Write instruction words at ``address``; returns the address after them."""
    for w in words:
        m.space.write_bytes(address, w.to_bytes(6, "little"), force=True)
        address += 6
    return address


def ins(word: int, address: int = CODE, **fields: Any) -> types.SimpleNamespace:
    """A decoded-like instruction for calling a semantic function directly."""
    base = dict(word=word, address=address, next=address + 6, value=0, rt=(word >> 6) & 127,
                ra=(word >> 13) & 127, rb=(word >> 20) & 127)
    base.update(fields)
    return types.SimpleNamespace(**base)


# ---------------------------------------------------------------------------- words


def ri(opcode: int, rt: int, ra: int, imm: int, *, sz: int = 2, mask: int = 0) -> int:
    return mask << 42 | sz << 39 | (imm & 0x7FFFF) << 20 | (ra & 127) << 13 | (rt & 127) << 6 | opcode


def addi(rt: int, ra: int, imm: int) -> int:
    return ri(4, rt, ra, imm)


def ldi(rt: int, imm: int) -> int:
    return ri(9, rt, 0, imm)


def nop() -> int:
    return 11


def brk(rt: int = 0, imm: int = 0) -> int:
    return ri(0, rt, 0, imm)


def csr(op: int, rt: int, ra: int, number: int) -> int:
    """CSR format: CsrOp 37:36 (0 RD, 1 RW, 2 RC, 3 RS), CSR number 33:20."""
    return 2 << 39 | op << 36 | (number & 0x3FFF) << 20 | (ra & 127) << 13 | (rt & 127) << 6 | 7


def r1(func1: int, rt: int = 0, ra: int = 0, *, extra: int = 0) -> int:
    return 2 << 39 | extra | 1 << 27 | func1 << 20 | (ra & 127) << 13 | (rt & 127) << 6 | 2


def rti() -> int:
    return r1(25)


def rex(tm: int, ra: int = 0, *, irq4: int = 0, v: int = 1) -> int:
    """REX: Tm bits 7:6, Irq4 bits 11:8 (the Rt slot), v bit 33, PL from Ra."""
    return 2 << 39 | v << 33 | 1 << 27 | 26 << 20 | (ra & 127) << 13 | irq4 << 8 | tm << 6 | 2


def queue_op(func1: int, rt: int, q: int) -> int:
    return r1(func1, rt, q & 15)


def pushq_word(q: int, rb: int) -> int:
    """PUSHQ: R2 func 23, queue number in the Ra slot, value in Rb."""
    return 2 << 39 | 23 << 27 | (rb & 127) << 20 | (q & 15) << 13 | 2


def bra(disp: int) -> int:
    return (disp & ((1 << 40) - 1)) << 8 | 25


def bcc(cnd: int, ra: int, rb: int, disp: int) -> int:
    return cnd << 45 | 2 << 39 | (disp & 0x1FFFF) << 22 | (ra & 63) << 13 | (rb & 63) << 6 | 28


def bne(ra: int, rb: int, disp: int) -> int:
    return bcc(7, ra, rb, disp)


def ld(rt: int, ra: int, disp: int) -> int:
    return ri(44, rt, ra, disp)


def st(rs: int, ra: int, disp: int) -> int:
    return ri(40, rs, ra, disp)


def status_with(mode: int = 3, *, mie: bool = False, ipl: int = 0, pl: int = 0xFF,
                extra: int = 0) -> int:
    return pl << 24 | mode << 10 | ipl << 5 | (8 if mie else 0) | extra
