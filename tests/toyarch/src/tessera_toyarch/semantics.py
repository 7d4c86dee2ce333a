"""Semantic functions of the toy ISA: one plain function per instruction.

Each registers itself by name in :data:`REGISTRY`; the encoding table
(:mod:`tessera_toyarch.isa`) names them with ``REGISTRY.ref(name)``, the way every
architecture binds its rows (:mod:`tessera.isa.registry`).
"""

from __future__ import annotations

from tessera.control import Halt, Trap
from tessera.isa import SemanticsRegistry

#: every toy semantic function by name (a module, not a package: nothing to import)
REGISTRY = SemanticsRegistry(__name__)
op = REGISTRY.op

MASK = 0xFFFF_FFFF


def _set(cpu, rd, value):
    if rd:
        cpu.r[rd] = value & MASK


@op("add")
def add(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] + cpu.r[ins.rs2])


@op("sub")
def sub(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] - cpu.r[ins.rs2])


@op("mul")
def mul(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] * cpu.r[ins.rs2])


@op("addi")
def addi(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] + ins.imm)


@op("li")
def li(cpu, ins):
    _set(cpu, ins.rd, ins.limm)


@op("ld")
def ld(cpu, ins):
    _set(cpu, ins.rd, cpu.space.read((cpu.r[ins.rs1] + ins.imm) & MASK, 4))


@op("st")
def st(cpu, ins):
    cpu.space.write((cpu.r[ins.rs1] + ins.imm) & MASK, 4, cpu.r[ins.rd])


@op("beq")
def beq(cpu, ins):
    if cpu.r[ins.rd] == cpu.r[ins.rs1]:
        return (ins.address + ins.boff) & MASK
    return None


@op("bne")
def bne(cpu, ins):
    if cpu.r[ins.rd] != cpu.r[ins.rs1]:
        return (ins.address + ins.boff) & MASK
    return None


@op("jmp")
def jmp(cpu, ins):
    return (ins.address + ins.joff) & MASK


@op("cid")
def cid(cpu, ins):
    _set(cpu, ins.rd, cpu.core_id)


def _semaphore(cpu, ins):
    """The semaphore an instruction names; the board has sem0..sem3, others are illegal."""
    sem = cpu.machine.sync.get(f"sem{ins.sem}")
    if sem is None:
        raise Trap(2, ins.word, name="illegal instruction (no such semaphore)", word=ins.word)
    return sem


@op("sem_wait")
def sem_wait(cpu, ins):
    _semaphore(cpu, ins).wait(cpu)


@op("sem_post")
def sem_post(cpu, ins):
    _semaphore(cpu, ins).post(cpu)


@op("bar")
def bar(cpu, ins):
    cpu.machine.sync["bar"].arrive(cpu)


@op("dma_start")
def dma_start(cpu, ins):
    cpu.machine.sync["dma.q"].push(cpu, (cpu.r[ins.rd], cpu.r[ins.rs1], cpu.r[ins.rs2]))


@op("dma_wait")
def dma_wait(cpu, ins):
    cpu.machine.sync["dma.done"].wait_at_least(cpu, cpu.r[ins.rd])


@op("halt")
def halt(cpu, ins):
    raise Halt(cpu.r[ins.rd])


def _no_such_csr(cpu, ins):
    """The 2-bit csr field names 3 registers: the 4th encoding is an illegal instruction."""
    if ins.csr >= len(cpu.c):
        raise Trap(2, ins.word, name="illegal instruction (no such csr)", word=ins.word)


@op("csrr")
def csrr(cpu, ins):
    _no_such_csr(cpu, ins)
    _set(cpu, ins.rd, cpu.c[ins.csr])


@op("csrw")
def csrw(cpu, ins):
    _no_such_csr(cpu, ins)
    cpu.c[ins.csr] = cpu.r[ins.rs1]


@op("eret")
def eret(cpu, ins):
    return cpu.c[1]


@op("ecall")
def ecall(cpu, ins):
    raise Trap(8, ins.address, name="ecall")


@op("nop")
def nop(cpu, ins):
    return None
