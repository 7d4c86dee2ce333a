"""Helpers for the core tests of the RISC-V plugin (test_core_*.py).

Machines get a small RAM (1 MiB) and no echo, so tests stay fast and quiet; programs
are assembled with the plugin's assembler at the default link address 0x10000.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera_riscv import RV32IM, RV64IM

REPO = Path(__file__).resolve().parents[3]
ELFGEN_DIR = REPO / "tests" / "loaders"
if str(ELFGEN_DIR) not in sys.path:  # the core's tiny ELF writer (tests/loaders/elfgen.py)
    sys.path.insert(0, str(ELFGEN_DIR))
elfgen = importlib.import_module("elfgen")

ARCHS = {32: RV32IM, 64: RV64IM}
BASE = 0x10000
SMALL_RAM = 1 << 20
XLENS = (32, 64)


def mask(xlen: int) -> int:
    return (1 << xlen) - 1


def machine(xlen: int = 32, source: str | None = None, *, config: dict[str, Any] | None = None,
            host: Any = None, arch: Any = None) -> Machine:
    cfg = {"echo": False, "ram": SMALL_RAM}
    cfg.update(config or {})
    m = Machine(arch or ARCHS[xlen], host=host, config=cfg)
    if source is not None:
        load(m, source)
    return m


def load(m: Machine, source: str, base: int = BASE) -> dict[str, int]:
    program = assemble(m.arch, source, base=base)
    for address, blob in program.segments:
        m.space.write_bytes(address, blob, force=True)
    m.symbols.update(program.symbols)
    m.set_entry(program.entry if program.entry is not None else base)
    return program.symbols


def run(source: str, xlen: int = 32, *, config: dict[str, Any] | None = None,
        max_steps: int = 100_000, **kw: Any) -> tuple[Machine, Any]:
    m = machine(xlen, source, config=config)
    return m, m.run(max_steps=max_steps, **kw)


def hart(m: Machine) -> Any:
    return m.agent("hart0")


def reg_index(name: str) -> int:
    index = RV32IM.register_file_map["x"].index(name)
    assert index is not None, name
    return index


def execute(xlen: int, text: str, *, config: dict[str, Any] | None = None, **regs: int) -> Any:
    """Run the snippet ``text`` once with registers preset (by ABI name); return the hart.

    The run stops at the first address after the snippet (a breakpoint), so whatever the
    instructions left in the registers can be inspected.
    """
    m = machine(xlen, config=config)
    program = assemble(m.arch, text, base=BASE)
    (start, blob), = program.segments
    m.space.write_bytes(start, blob)
    m.set_entry(start)
    h = hart(m)
    for name, value in regs.items():
        h.x[reg_index(name)] = value & mask(xlen)
    result = m.run(max_steps=10_000, until_pc=[start + len(blob)])
    assert result.reason == "breakpoint", result
    return h


def value(xlen: int, text: str, result: str = "a0", **regs: int) -> int:
    """The value ``result`` holds after the snippet (unsigned XLEN bits)."""
    return execute(xlen, text, **regs).x[reg_index(result)]


def signed(v: int, xlen: int) -> int:
    return v - (1 << xlen) if v >> (xlen - 1) else v


EXIT = """
        li    a7, 93
        ecall
"""
