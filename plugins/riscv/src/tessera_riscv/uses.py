"""Which ``x`` registers an instruction of the base table reads and writes (``register_uses``).

:attr:`tessera.isa.Architecture.register_uses` for every architecture
:func:`~tessera_riscv.extension.make_arch` builds.  The base table's rows name their
register operands by the standard fields (The RISC-V Instruction Set Manual, Volume I,
2.2 "Base Instruction Formats"): ``rs1`` and ``rs2`` are sources, ``rd`` the destination.
So for a row of the base table (flag ``rv32``/``rv64``: RV32I/RV64I, M, Zicsr, Zba, Zbb,
Zaamo) the answer is exact from the decoded operands:

* reads: the ``rs1`` and ``rs2`` registers (``x0`` left out: it is no state);
* writes: the ``rd`` register (not ``x0``).  A row writes ``rd`` whenever it completes:
  loads, ``jal``/``jalr`` (the link), AMOs (the old memory word), the CSR instructions
  (the CSR's old value, 2.8 / Zicsr chapter: ``csrrw`` with ``rd`` = x0 does not read the
  CSR, and writes nothing either).  An instruction that traps writes nothing — callers
  must count writes only for completed executions, as the docs of ``register_uses`` say.

The ``system`` rows name no register but ``ecall``: with system calls on (the default) it
is a Linux-numbered call taking its number in ``a7``, so which registers it uses depends on
that number — its answer is :func:`tessera_riscv.syscalls.uses`, asked after each call
(``exit`` reads ``a0`` and ``a7`` and halts; ``write`` reads ``a0``–``a2`` and ``a7`` and
writes ``a0``; any other number reads ``a7`` and writes ``a0``).  With system calls off it
traps, and a trap is the tool's business (the faults plugin counts it as reading every
register).  ``ebreak``, ``mret``, ``wfi`` and the fences read and write no ``x`` register.

``None`` — "may touch any register" — for every row an extension adds: its semantic
function may use ``hart.x`` in ways its fields do not tell.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera.isa import RegisterUses
from tessera_riscv import syscalls

__all__ = ["register_uses"]

_BASE = frozenset({"rv32", "rv64"})



def register_uses(ins: Any) -> RegisterUses | Callable[[Any], RegisterUses] | None:
    """``(reads, writes)`` of ``ins`` as ``("x", n)`` pairs, or ``None`` (the module doc)."""
    flags = ins.encoding.flags
    if not flags & _BASE:
        return None
    if ins.mnemonic == "ecall":
        return syscalls.uses
    ops = ins.operands
    names = ins.encoding.operand_names
    reads = tuple(("x", ops[f]) for f in ("rs1", "rs2") if f in names and ops.get(f))
    rd = ops.get("rd") if "rd" in names else None
    return reads, ((("x", rd),) if rd else ())
