"""Zaamo: atomic memory operations — ``amo<op>.w`` on both XLENs, ``amo<op>.d`` on RV64.

Every AMO is one body, :func:`amo`: read the old value, write ``COMBINE(old, rs2)``,
return the old value sign-extended into ``rd``.  Each instruction's copy replaces the
access width (``SIZE``, ``ALIGN``, ``WSIGN``, ``WMASK``), the combining function
(:data:`COMBINE`, itself a copy specialised to the width) and the XLEN constants.
A single hart makes the read-modify-write atomic; ``aq``/``rl`` are an accepted
mnemonic suffix with no further effect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera.errors import MemoryFault
from tessera_riscv import traps
from tessera_riscv.formats import AMO, AMO_SYNTAX, BOTH, RV64, Row, bits
from tessera_riscv.semantics import REGISTRY
from tessera_riscv.semantics.xlen import XMASK, XlenFunctions, placeholder, specialise

PER_XLEN = XlenFunctions(REGISTRY)

#: funct5 of each operation, in table order
FUNCT5 = (("amoswap", 0x01), ("amoadd", 0x00), ("amoxor", 0x04), ("amoand", 0x0C),
          ("amoor", 0x08), ("amomin", 0x10), ("amomax", 0x14), ("amominu", 0x18),
          ("amomaxu", 0x1C))
#: mnemonic suffix, funct3, access size in bytes, the XLENs it exists for
WIDTHS = ((".w", 2, 4, BOTH), (".d", 3, 8, RV64))

_A = frozenset({"amo", "sync"})

ROWS = tuple(Row(name + suffix, bits(AMO, f3, f5=f5), AMO_SYNTAX, "amo", xlens, _A,
                 PER_XLEN.ref(name + suffix))
             for suffix, f3, _, xlens in WIDTHS for name, f5 in FUNCT5)

# replaced in each copy: the access width and what the operation writes back
SIZE: int = placeholder("SIZE")
ALIGN: int = placeholder("ALIGN")
WSIGN: int = placeholder("WSIGN")
WMASK: int = placeholder("WMASK")
COMBINE: Callable[[int, int], int] = placeholder("COMBINE")


def amo(h: Any, ins: Any) -> None:
    x = h.x
    a = x[ins.rs1]
    if a & ALIGN:  # AMOs must be naturally aligned, whatever the misaligned policy
        raise traps.trap(traps.STORE_MISALIGNED, a)
    space = h.space
    try:
        old = space.read(a, SIZE)
    except MemoryFault as fault:
        fault.access = "write"  # an AMO's access fault is a store/AMO access fault
        raise
    space.write(a, SIZE, COMBINE(old, x[ins.rs2]))
    if ins.rd:
        x[ins.rd] = ((old ^ WSIGN) - WSIGN) & XMASK


# ---------------------------------------------------------------- what each operation writes


def swap(old: int, src: int) -> int:
    return src


def add(old: int, src: int) -> int:
    return old + src


def xor(old: int, src: int) -> int:
    return old ^ src


def and_(old: int, src: int) -> int:
    return old & src


def or_(old: int, src: int) -> int:
    return old | src


def min_(old: int, src: int) -> int:
    return old if old ^ WSIGN < (src & WMASK) ^ WSIGN else src


def max_(old: int, src: int) -> int:
    return old if old ^ WSIGN > (src & WMASK) ^ WSIGN else src


def minu(old: int, src: int) -> int:
    return old if old < src & WMASK else src


def maxu(old: int, src: int) -> int:
    return old if old > src & WMASK else src


OPERATIONS = {"amoswap": swap, "amoadd": add, "amoxor": xor, "amoand": and_, "amoor": or_,
              "amomin": min_, "amomax": max_, "amominu": minu, "amomaxu": maxu}


def _register() -> None:
    """One copy of :func:`amo` per operation, width and XLEN, with the operation specialised to the width."""
    for suffix, _, size, xlens in WIDTHS:
        signs = {"WSIGN": 1 << (8 * size - 1), "WMASK": (1 << 8 * size) - 1}
        for name, combine in OPERATIONS.items():
            mnemonic = name + suffix
            writes = specialise(combine, mnemonic.replace(".", "_") + "_combine", **signs)
            PER_XLEN.add(mnemonic, amo, xlens, COMBINE=writes, SIZE=size, ALIGN=size - 1, **signs)
    PER_XLEN.register()


_register()
