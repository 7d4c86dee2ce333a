"""Semantic functions of the toy ISA: one plain function per instruction."""

from __future__ import annotations

from tessera.control import Halt, Trap

MASK = 0xFFFF_FFFF


def _set(cpu, rd, value):
    if rd:
        cpu.r[rd] = value & MASK


def add(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] + cpu.r[ins.rs2])


def sub(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] - cpu.r[ins.rs2])


def mul(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] * cpu.r[ins.rs2])


def addi(cpu, ins):
    _set(cpu, ins.rd, cpu.r[ins.rs1] + ins.imm)


def li(cpu, ins):
    _set(cpu, ins.rd, ins.limm)


def ld(cpu, ins):
    _set(cpu, ins.rd, cpu.space.read((cpu.r[ins.rs1] + ins.imm) & MASK, 4))


def st(cpu, ins):
    cpu.space.write((cpu.r[ins.rs1] + ins.imm) & MASK, 4, cpu.r[ins.rd])


def beq(cpu, ins):
    if cpu.r[ins.rd] == cpu.r[ins.rs1]:
        return (ins.address + ins.boff) & MASK
    return None


def bne(cpu, ins):
    if cpu.r[ins.rd] != cpu.r[ins.rs1]:
        return (ins.address + ins.boff) & MASK
    return None


def jmp(cpu, ins):
    return (ins.address + ins.joff) & MASK


def cid(cpu, ins):
    _set(cpu, ins.rd, cpu.core_id)


def _semaphore(cpu, ins):
    """The semaphore an instruction names; the board has sem0..sem3, others are illegal."""
    sem = cpu.machine.sync.get(f"sem{ins.sem}")
    if sem is None:
        raise Trap(2, ins.word, name="illegal instruction (no such semaphore)", word=ins.word)
    return sem


def sem_wait(cpu, ins):
    _semaphore(cpu, ins).wait(cpu)


def sem_post(cpu, ins):
    _semaphore(cpu, ins).post(cpu)


def bar(cpu, ins):
    cpu.machine.sync["bar"].arrive(cpu)


def dma_start(cpu, ins):
    cpu.machine.sync["dma.q"].push(cpu, (cpu.r[ins.rd], cpu.r[ins.rs1], cpu.r[ins.rs2]))


def dma_wait(cpu, ins):
    cpu.machine.sync["dma.done"].wait_at_least(cpu, cpu.r[ins.rd])


def halt(cpu, ins):
    raise Halt(cpu.r[ins.rd])


def _no_such_csr(cpu, ins):
    """The 2-bit csr field names 3 registers: the 4th encoding is an illegal instruction."""
    if ins.csr >= len(cpu.c):
        raise Trap(2, ins.word, name="illegal instruction (no such csr)", word=ins.word)


def csrr(cpu, ins):
    _no_such_csr(cpu, ins)
    _set(cpu, ins.rd, cpu.c[ins.csr])


def csrw(cpu, ins):
    _no_such_csr(cpu, ins)
    cpu.c[ins.csr] = cpu.r[ins.rs1]


def eret(cpu, ins):
    return cpu.c[1]


def ecall(cpu, ins):
    raise Trap(8, ins.address, name="ecall")


def nop(cpu, ins):
    return None
