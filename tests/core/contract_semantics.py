"""Semantic functions that break the naive "bake everything in" translation (for
tests/core/test_engine_contract.py).  They live in a real module so the fast engine
can read their source and inline them."""

from __future__ import annotations

MASK = 0xFFFF_FFFF
SCALE = 1   # rebound from outside (a test) between machines or runs
STEP = 1    # rebound by this module's own function, while a machine runs


def add_scaled(cpu, ins):
    """``add`` whose second operand is multiplied by the module global SCALE."""
    if ins.rd:
        cpu.r[ins.rd] = (cpu.r[ins.rs1] + cpu.r[ins.rs2] * SCALE) & MASK


def add_stepped(cpu, ins):
    """``add`` adding STEP as well: STEP changes while the program runs."""
    if ins.rd:
        cpu.r[ins.rd] = (cpu.r[ins.rs1] + cpu.r[ins.rs2] + STEP) & MASK


def next_step():
    global STEP
    STEP += 1


def nop_stepping(cpu, ins):
    """``nop`` that moves STEP on (module state changed by the program itself)."""
    next_step()


def make_add(scale):
    """A closure-built ``add`` (as RISC-V's factory builds its semantics) and a rebinder."""

    def add_closure(cpu, ins):
        if ins.rd:
            cpu.r[ins.rd] = (cpu.r[ins.rs1] + cpu.r[ins.rs2] * scale) & MASK

    def rescale(value):
        nonlocal scale
        scale = value

    return add_closure, rescale


def _bump(ins):
    ins.imm = ins.imm - 1


def addi_mutating(cpu, ins):
    """``addi`` that changes its own decoded immediate through a helper (not allowed)."""
    _bump(ins)
    if ins.rd:
        cpu.r[ins.rd] = (cpu.r[ins.rs1] + ins.imm) & MASK
