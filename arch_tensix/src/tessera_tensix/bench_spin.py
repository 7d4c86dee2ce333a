"""The ``spin`` tile program of the ``llk-matmul`` workload: one core computes, three wait.

The issue asks that the baby RISC-V cores keep at least half of the ``rv32`` loop's rate
while they spin on semaphores and mailboxes.  A kernel run is too short and too cold to
show that (it measures first executions), so this hand-written Blackhole tile program
isolates it:

* RISCV B releases T0..T2 from soft reset (they start at their fixed pcs 0x6000, 0xA000,
  0xE000) and then polls an L1 flag;
* TRISC0 runs the ``rv32`` workload's loop body (``add`` / ``addi`` / ``bnez``, summing
  ``iterations`` .. 1), stores the sum to L1 and then releases the others: it stores the
  flag, posts Tensix semaphore 0 (a RISC-V ``sw`` of 0 to ``PC_BUF_BASE + 0x20``) and
  pushes a value into the mailbox from T0 to T2;
* TRISC1 polls its Tensix semaphore 0 (loads of ``PC_BUF_BASE + 0x20``);
* TRISC2 polls the status word of the mailbox from T0 (bit 2 set in T0's window), then pops.

Each waiter exits with what it read (ecall 93), TRISC0 with 0, so a run's exit codes
prove every release arrived; :func:`check` turns anything else into a
:class:`~tessera.bench.model.BenchFailure`.  With ``park_polls`` (the default) the three
waiters park after a few hundred instructions (:mod:`tessera_tensix.tile.polls`) and
TRISC0 runs alone; without it every poll is executed.
"""

from __future__ import annotations

from typing import Any

from tessera.bench.model import BenchFailure

#: L1 words the program uses (far above the code)
FLAG = 0x2_0000
RESULT = 0x2_0004
#: what TRISC0 stores to the flag and pushes into the mailbox: the waiters' exit codes
FLAG_VALUE = 7
MAIL_VALUE = 9
#: the exit code of each core when everything arrived (TRISC1 exits with semaphore 0's value)
EXITS = {"brisc": FLAG_VALUE, "trisc0": 0, "trisc1": 1, "trisc2": MAIL_VALUE}
MASK32 = 0xFFFF_FFFF


def source(iterations: int) -> str:
    """The tile program, assembly for the ``tensix-tile`` cores (code from address 0)."""
    return f"""
# RISCV B: release T0..T2 from soft reset, then poll the flag in L1
    li t0, 0xFFB12000              # RISCV_DEBUG_REG_SOFT_RESET_0 at +0x1B0
    sw zero, 0x1B0(t0)
    li t0, {FLAG:#x}
1:  lw a0, 0(t0)
    beqz a0, 1b
    li a7, 93
    ecall

# RISCV T0: the rv32 loop, then release the others
.org 0x6000
    li a5, {iterations}
    li a4, 0
1:  add a4, a4, a5
    addi a5, a5, -1
    bnez a5, 1b
    li t0, {RESULT:#x}
    sw a4, 0(t0)
    li t0, {FLAG:#x}
    li t1, {FLAG_VALUE}
    sw t1, 0(t0)                   # RISCV B's flag
    li t0, 0xFFE80020              # PC_BUF_BASE + 0x20: Tensix semaphore 0
    sw zero, 0(t0)                 # a store of 0 posts it (+1)
    li t0, 0xFFEC3000              # mailbox window of T2: a store pushes T0 -> T2
    li t1, {MAIL_VALUE}
    sw t1, 0(t0)
    li a7, 93
    li a0, 0
    ecall

# RISCV T1: poll Tensix semaphore 0, exit with its value
.org 0xA000
    li t0, 0xFFE80020
1:  lw a0, 0(t0)
    beqz a0, 1b
    li a7, 93
    ecall

# RISCV T2: poll the status of the mailbox from T0 (window of T0, bit 2), then pop it
.org 0xE000
    li t0, 0xFFEC1004
1:  lw a1, 0(t0)
    beqz a1, 1b
    lw a0, -4(t0)
    li a7, 93
    ecall
"""


class SpinProgram:
    """The assembled program for one iteration count, and the machines that run it."""

    def __init__(self, arch: Any, host: Any, iterations: int) -> None:
        from tessera.isa.asm import assemble

        self.arch = arch
        self.host = host
        self.iterations = iterations
        self.program = assemble(arch, source(iterations), file="<bench:llk-matmul spin>", base=0)
        self.expected_sum = iterations * (iterations + 1) // 2 & MASK32

    def machine(self, *, park_polls: bool) -> Any:
        """A fresh Blackhole tile with the program in L1, nothing run yet."""
        from tessera.loaders import place
        from tessera.machine import Machine

        machine = Machine(self.arch, host=self.host, config={"park_polls": park_polls})
        for address, blob in self.program.segments:
            place(machine, address, blob, what="the spin program")
        machine.set_entry(0)
        return machine

    def check(self, machine: Any, result: Any) -> None:
        """:class:`BenchFailure` unless the run halted with every core's expected exit code
        and TRISC0's sum in L1."""
        if result.reason != "halted":
            raise BenchFailure(f"the run ended {result.reason} ({result.detail}), not halted")
        got = {a.name: a.exit_code for a in machine.agents if a.name in EXITS}
        if got != EXITS:
            wrong = ", ".join(f"{name} {got.get(name)} (expected {code})"
                              for name, code in EXITS.items() if got.get(name) != code)
            raise BenchFailure(f"wrong exit codes: {wrong}")
        total = int.from_bytes(machine.space.read_bytes(RESULT, 4), "little")
        if total != self.expected_sum:
            raise BenchFailure(f"TRISC0's sum at {RESULT:#x} is {total:#x}, expected {self.expected_sum:#x}")
