"""Zicsr: the CSR read-modify-write instructions.

The hart does the work (:meth:`tessera_riscv.hart.RiscvHart.csr_instruction`: access
checks, side effects, the illegal-instruction trap); these pass the operation
(0 write, 1 set, 2 clear), the source value and whether the CSR is written at all —
``csrrs``/``csrrc`` with ``x0`` or a zero immediate only read.
"""

from __future__ import annotations

from typing import Any

from tessera_riscv.formats import BOTH, CSR, CSRI, SYSTEM, Row, bits
from tessera_riscv.semantics import REGISTRY

op = REGISTRY.op
REF = REGISTRY.ref

_C = frozenset({"csr", "system"})

ROWS = (
    Row("csrrw", bits(SYSTEM, 1), CSR, "csr", BOTH, _C, REF("csrrw")),
    Row("csrrs", bits(SYSTEM, 2), CSR, "csr", BOTH, _C, REF("csrrs")),
    Row("csrrc", bits(SYSTEM, 3), CSR, "csr", BOTH, _C, REF("csrrc")),
    Row("csrrwi", bits(SYSTEM, 5), CSRI, "csr", BOTH, _C, REF("csrrwi")),
    Row("csrrsi", bits(SYSTEM, 6), CSRI, "csr", BOTH, _C, REF("csrrsi")),
    Row("csrrci", bits(SYSTEM, 7), CSRI, "csr", BOTH, _C, REF("csrrci")),
)


@op("csrrw")
def csrrw(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 0, h.x[ins.rs1], True)


@op("csrrs")
def csrrs(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 1, h.x[ins.rs1], ins.rs1 != 0)


@op("csrrc")
def csrrc(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 2, h.x[ins.rs1], ins.rs1 != 0)


@op("csrrwi")
def csrrwi(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 0, ins.zimm, True)


@op("csrrsi")
def csrrsi(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 1, ins.zimm, ins.zimm != 0)


@op("csrrci")
def csrrci(h: Any, ins: Any) -> None:
    h.csr_instruction(ins, 2, ins.zimm, ins.zimm != 0)
