"""Helpers for the trace plugin's tests: machines of two architectures, traces to strings.

Machines are built on a host holding only the architecture plugins and the trace
plugin (no entry points, no environment), so the tests see exactly these hooks.
RISC-V programs are assembled at 0x10000 with the plugin's assembler; toy programs
are built with the table-generated encoder, as in docs/hooks.md.
"""

from __future__ import annotations

import io
import json
from typing import Any

import tessera_riscv.plugin
import tessera_toyarch.plugin
import tessera_trace
from tessera.isa import Encoder
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_riscv import RV32IM
from tessera_toyarch import TOY

BASE = 0x10000
ENGINES = ("fast", "step")

# a0 = 5, stored and loaded back through memory, doubled, then exit(a0)
RV_TINY = """
    li   a0, 5
    li   t1, 0x100
    sw   a0, 0(t1)
    lw   a1, 0(t1)
    add  a2, a0, a1
    li   a7, 93
    ecall
"""

RV_TINY_TEXT = [
    "hart0  00010000  00500513  addi a0, zero, 5                  a0=0x00000005",
    "hart0  00010004  10000313  addi t1, zero, 0x100              t1=0x00000100",
    "hart0  00010008  00a32023  sw a0, 0(t1)                      mem[0x00000100]<-0x00000005",
    "hart0  0001000c  00032583  lw a1, 0(t1)                      a1=0x00000005 mem[0x00000100]->0x00000005",
    "hart0  00010010  00b50633  add a2, a0, a1                    a2=0x0000000a",
    "hart0  00010014  05d00893  addi a7, zero, 93                 a7=0x0000005d",
    "hart0  00010018  00000073  ecall",
]

# a loop: a0 = 10 + 9 + ... + 1, with a store and a load per iteration
RV_LOOP = """
    li   a0, 0
    li   a1, 10
    li   sp, 0x8000
loop:
    add  a0, a0, a1
    sw   a0, -4(sp)
    lw   t0, -4(sp)
    addi a1, a1, -1
    bne  a1, zero, loop
    li   a7, 93
    ecall
"""

# long enough for the fast engine to translate the loop into a block at its default
# threshold (tessera.engine.blocks.HOT, TESSERA_BLOCK_HOT), with iterations to spare
RV_HOT = RV_LOOP.replace("li   a1, 10", "li   a1, 600")


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    h.register(tessera_toyarch.plugin, "toy")
    h.register(tessera_trace.plugin, "trace")
    return h


def rv_machine(source: str, *, engine: str = "step", h: PluginHost | None = None) -> Machine:
    m = Machine(RV32IM, host=h or host(), config={"echo": False, "ram": 1 << 20}, engine=engine)
    program = assemble(m.arch, source, base=BASE)
    for address, blob in program.segments:
        m.space.write_bytes(address, bytes(blob))
    m.symbols.update(program.symbols)
    m.set_entry(BASE)
    return m


_ENC = Encoder(TOY)


def word(mnemonic: str, **operands: int) -> int:
    (form,) = TOY.encodings_named(mnemonic)
    return _ENC.encode(form, operands)


def toy_machine(*words: int, cores: int = 1, engine: str = "step", quantum: int | None = None,
                h: PluginHost | None = None) -> Machine:
    m = Machine(TOY, host=h or host(), config={"echo": False, "cores": cores}, quantum=quantum,
                engine=engine)
    m.space.write_bytes(0, b"".join(_ENC.to_bytes(w) for w in words))
    return m


# core0 computes 6 * 7, stores it at 0x100, loads it back and halts with it
TOY_TINY = (
    word("li", rd=1, limm=0x100),
    word("li", rd=2, limm=6),
    word("li", rd=3, limm=7),
    word("mul", rd=4, rs1=2, rs2=3),
    word("st", rd=4, rs1=1, imm=0),
    word("ld", rd=5, rs1=1, imm=0),
    word("halt", rd=5),
)

# two cores: core1 waits on sem0 until core0 (a little later) posts it
TOY_SEM = (
    word("cid", rd=1),
    word("beq", rd=1, rs1=0, boff=12),   # core0 -> producer at 0x10
    word("sem.wait", sem=0),             # core1 waits here
    word("halt", rd=0),
    word("nop"),                         # producer: a little late
    word("nop"),
    word("sem.post", sem=0),
    word("halt", rd=0),
)


def trace(machine: Machine, fmt: str, *, max_steps: int = 100_000, **kw: Any) -> str:
    """Run ``machine`` with a tracer writing to a string; the trace text."""
    out = io.StringIO()
    tracer = tessera_trace.attach(machine, fmt, out, **kw)
    machine.run(max_steps=max_steps, raise_on_budget=False)
    tracer.close()
    return out.getvalue()


def records(jsonl: str) -> list[dict[str, Any]]:
    """The instruction records of a JSON-lines trace (notes left out)."""
    rows = [json.loads(line) for line in jsonl.splitlines()]
    return [r for r in rows if "note" not in r]


def instructions(text: str) -> list[str]:
    """The instruction lines of a text trace (notes left out)."""
    return [line for line in text.splitlines() if not line.startswith("#")]


def retired(machine: Machine) -> int:
    return sum(a.instret for a in machine.cpus)
