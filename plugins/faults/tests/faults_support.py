"""Helpers of the faults plugin's tests: machines on a host with exactly the plugins used.

RISC-V programs are assembled at 0x10000 with the plugin's assembler (the hart starts
there); toy programs are built with the table-generated encoder, as in docs/hooks.md.
``outcome`` runs a machine to its end and says how it ended, so a fault that makes a
program crash can be compared like one that changes its exit status.
"""

from __future__ import annotations

from typing import Any

import tessera_faults
import tessera_faults.plugin
import tessera_phoenix.plugin
import tessera_riscv.plugin
import tessera_tensix.plugin
import tessera_toyarch.plugin
from tessera.errors import TesseraError
from tessera.isa import Encoder
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_faults import conformance
from tessera_riscv import RV32IM
from tessera_toyarch import TOY

BASE = 0x10000
ENGINES = ("step", "fast")

#: a0 = 5 + 5 through memory, exit(a0) = 10; and 1 + ... + 20 in a loop, exit(210): the
#: programs of the plugin's own conformance cases
SUM, LOOP = conformance.SUM, conformance.LOOP

#: a longer loop (400 iterations): enough for the fast engine to run translated blocks
LONG = """
    li   a0, 0
    li   t0, 400
loop:
    add  a0, a0, t0
    xori a1, a0, 0x55
    addi t0, t0, -1
    bnez t0, loop
    andi a0, a0, 0xff
    li   a7, 93
    ecall
"""


def host(*extra: Any) -> PluginHost:
    """A host with the architectures of the tests and the faults plugin (no entry points)."""
    h = PluginHost(load_entry_points=False, use_environment=False)
    for module, name in ((tessera_riscv.plugin, "riscv"), (tessera_toyarch.plugin, "toy"),
                         (tessera_phoenix.plugin, "phoenix"), (tessera_tensix.plugin, "tensix"),
                         (tessera_faults.plugin, "faults")):
        h.register(module, name)
    for i, plugin in enumerate(extra):
        h.register(plugin, f"extra{i}")
    return h


def rv_machine(source: str, engine: str = "fast", **kw: Any) -> Machine:
    machine = Machine(RV32IM, host=kw.pop("host", None) or host(), config={"ram": 0x100000}, engine=engine)
    program = assemble(RV32IM, source, base=BASE)
    for address, data in program.segments:
        machine.space.write_bytes(address, data)
    machine.symbols.update(program.symbols)
    machine.set_entry(BASE)
    return machine


def toy_word(mnemonic: str, **operands: int) -> int:
    (form,) = TOY.encodings_named(mnemonic)
    return Encoder(TOY).encode(form, operands)


def toy_machine(words: list[int], engine: str = "fast", cores: int = 1, quantum: int | None = None) -> Machine:
    machine = Machine(TOY, host=host(), config={"echo": False, "cores": cores}, engine=engine, quantum=quantum)
    enc = Encoder(TOY)
    machine.space.write_bytes(0, b"".join(enc.to_bytes(w) for w in words))
    return machine


def outcome(machine: Machine, max_steps: int = 100_000) -> tuple[Any, ...]:
    """``(how it ended, exit code or error kind, steps)`` — a crash is an outcome too."""
    try:
        result = machine.run(max_steps=max_steps)
    except TesseraError as error:
        return ("error", type(error).__name__, machine.total_steps)
    return (result.reason, result.exit_code, result.steps)


def registers(machine: Machine) -> dict[str, list[int]]:
    """Every register file of every CPU agent, copied, by ``agent.file``."""
    return {f"{a.name}.{name}": list(regs) for a in machine.cpus for name, regs in a.regs.items()}


def differences(before: dict[str, list[int]], after: dict[str, list[int]]) -> list[tuple[str, int, int, int]]:
    """``(file, index, old, new)`` of every register that differs."""
    return [(name, i, old, new) for name in before for i, (old, new) in enumerate(zip(before[name], after[name]))
            if old != new]


def inject(machine: Machine, spec: str) -> dict[str, Any]:
    return tessera_faults.inject(machine, spec)
