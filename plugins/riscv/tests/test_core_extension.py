"""The extension point: custom instructions, blocking on sync objects, MMIO windows, clashes."""

from __future__ import annotations

import pytest
from rvcore_support import hart, load, machine, reg_index

import tessera
from tessera.engine import EngineAgent
from tessera.errors import ConfigError, SnapshotError, UnhandledTrap
from tessera.isa import Disassembler, Encoding, Field, Instruction
from tessera.machine import Machine
from tessera.machine.snapshot import allow_package
from tessera.plugins import PluginHost
from tessera.sync import Counter, Fifo
from tessera_riscv import RV32IM, RiscvExtension, make_arch
from tessera_riscv.encoding import CUSTOM_0, CUSTOM_1, F3, F7, OPCODE

ACC_BASE = 0x4000_0000

# ------------------------------------------------------------------ an accelerator extension
#
# acc.push rs1   (custom-0, funct3 0): queue x[rs1] for the accumulator engine; blocks when full
# acc.wait rs1   (custom-0, funct3 1): wait until the engine has processed x[rs1] values
# MMIO at ACC_BASE: +0 reads the running total, a write there resets it


def acc_push(hart, ins):
    hart.machine.sync["acc.q"].push(hart, hart.x[ins.rs1])


def acc_wait(hart, ins):
    hart.machine.sync["acc.done"].wait_at_least(hart, hart.x[ins.rs1])


class Accumulator(EngineAgent):
    def __init__(self, name, inbox, completed):
        super().__init__(name, inbox, completed)
        self.total = 0

    def process(self, value):
        self.total += value
        return 4                       # cycles per value


class AccRegisters:
    """The accumulator's MMIO window (created per machine by the factory below)."""

    def __init__(self, machine):
        self.machine = machine

    def read(self, offset, size):
        return self.machine.agent("acc").total & 0xFFFF_FFFF

    def write(self, offset, size, value):
        self.machine.agent("acc").total = value


def acc_build(machine):
    depth = int(machine.config.get("acc.depth", 2))
    inbox = machine.add_sync(Fifo("acc.q", depth))
    done = machine.add_sync(Counter("acc.done"))
    machine.add_agent(Accumulator("acc", inbox, done))


ONE_REG = OPCODE | F3 | F7 | 0x1F << 20 | 0x1F << 7          # only rs1 is an operand
ACC = RiscvExtension(
    "acc",
    encodings=(
        Encoding("acc.push", CUSTOM_0, ONE_REG, "{rs1}", acc_push, "acc", {"sync"}),
        Encoding("acc.wait", CUSTOM_0 | 1 << 12, ONE_REG, "{rs1}", acc_wait, "acc", {"sync"}),
    ),
    build=acc_build,
    devices=(("acc.regs", ACC_BASE, 0x1000, AccRegisters),),
    timing={"acc": 2},
)
RV32ACC = make_arch("rv32im-acc", 32, extensions=[ACC])
RV64ACC = make_arch("rv64im-acc", 64, extensions=[ACC])

PROGRAM = """
        li    s0, 1               # push 1..10
        li    s1, 11
push:   acc.push s0
        addi  s0, s0, 1
        bne   s0, s1, push
        li    t0, 10
        acc.wait t0               # all ten processed
        li    t1, 0x40000000
        lw    a0, 0(t1)           # the total, through the MMIO window
        li    a7, 93
        ecall
"""


class WaitLog:
    TESSERA_API_VERSION = 1

    def __init__(self):
        self.waits = []

    @tessera.hookimpl
    def tessera_sync_event(self, event):
        if event.kind == "wait":
            self.waits.append((event.agent, event.obj))


@pytest.mark.parametrize("arch", [RV32ACC, RV64ACC], ids=["rv32", "rv64"])
def test_custom_instructions_feed_an_engine_and_block_when_full(arch):
    log = WaitLog()
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(log, "waitlog")
    m = machine(arch=arch, host=host)
    load(m, PROGRAM)
    result = m.run(max_steps=10_000)
    assert result.exit_code == 55
    assert m.agent("acc").instret == 10
    assert ("hart0", "acc.q") in log.waits                 # the FIFO was full at least once
    assert ("hart0", "acc.done") in log.waits              # acc.wait parked the hart too
    assert m.sync["acc.q"].state()["items"] == []


def test_extension_setting_changes_the_fifo_depth():
    m = machine(arch=RV32ACC, config={"acc.depth": 16})
    assert m.sync["acc.q"].capacity == 16
    with pytest.raises(ConfigError, match=r"unknown RISC-V setting\(s\): depth"):
        machine(arch=RV32ACC, config={"depth": 16})


def test_custom_rows_assemble_and_disassemble():
    from tessera.isa.asm import assemble

    (_, blob), = assemble(RV32ACC, "acc.push a0\nacc.wait t1").segments
    words = [int.from_bytes(blob[i:i + 4], "little") for i in (0, 4)]
    assert words == [CUSTOM_0 | 10 << 15, CUSTOM_0 | 1 << 12 | 6 << 15]
    dis = Disassembler(RV32IM)
    assert dis.word(words[0]) == ".word 0x0005000b"           # the plain rv32im does not know it
    assert Disassembler(RV32ACC).word(words[0]) == "acc.push a0"


def test_without_the_extension_the_custom_word_is_illegal():
    m = machine(32, "acc_push: .word 0x0005000b")
    with pytest.raises(UnhandledTrap, match="illegal instruction"):
        m.run(max_steps=10)


def test_mmio_window_claimed_by_the_extension():
    m = machine(arch=RV32ACC)
    load(m, """
        li    t1, 0x40000000
        li    t0, 1000
        sw    t0, 0(t1)           # reset the total to 1000
        li    s0, 5
        acc.push s0
        li    t0, 1
        acc.wait t0
        lw    a0, 0(t1)
        li    a7, 93
        ecall
""")
    m.run(max_steps=1000)
    assert hart(m).x[reg_index("a0")] == 1005
    region = m.space.region_named("acc.regs")
    assert isinstance(region.device, AccRegisters) and region.device.machine is m


def test_device_objects_are_copied_per_machine():
    class Scratch:
        def __init__(self):
            self.value = 0

        def read(self, offset, size):
            return self.value

        def write(self, offset, size, value):
            self.value = value

    template = Scratch()
    arch = make_arch("rv32im-scratch", 32, extensions=[RiscvExtension("scr", devices=(
        ("scratch", 0x5000_0000, 16, template),))])
    a, b = machine(arch=arch), machine(arch=arch)
    a.space.write(0x5000_0000, 4, 7)
    assert a.space.read(0x5000_0000, 4) == 7
    assert b.space.read(0x5000_0000, 4) == 0 and template.value == 0


def test_device_overlapping_ram_is_refused():
    arch = make_arch("rv32im-bad-dev", 32, extensions=[RiscvExtension("bad", devices=(
        ("low", 0x1000, 16, AccRegisters),))])
    with pytest.raises(ConfigError, match="overlaps"):
        machine(arch=arch)


def test_extended_machine_snapshots():
    m = machine(arch=RV32ACC)
    load(m, PROGRAM)
    m.run(max_steps=20, raise_on_budget=False)
    data = m.snapshot()
    # the extension's classes live in this test module, and no plugin provides RV32ACC:
    # both must be named explicitly before the snapshot is read
    with pytest.raises(SnapshotError, match="test_core_extension"):
        Machine.restore(data)
    allow_package(__name__)
    with pytest.raises(SnapshotError, match="rv32im-acc.*architectures="):
        Machine.restore(data)
    again = Machine.restore(data, architectures=[RV32ACC])
    assert again.run(max_steps=10_000).exit_code == 55


# ------------------------------------------------------------------ Tensix-style words


def tt_op(hart, ins):
    hart.machine.tt_log.append(ins.payload)


def tt_build(machine):
    machine.tt_log = []


TENSIX = RiscvExtension(
    "tt",
    fields=(Field("payload", "31:2", kind="uimm"),),
    encodings=(Encoding("tt.op", 0b00, 0b11, "{payload}", tt_op),
               Encoding("tt.op2", 0b10, 0b11, "{payload}", tt_op)),
    build=tt_build,
)


def test_words_with_low_bits_other_than_11_can_be_claimed():
    arch = make_arch("rv32im-tt", 32, extensions=[TENSIX])
    m = machine(arch=arch)
    load(m, """
        .word 0x00000010          # low bits 00: tt.op, payload 4
        addi  a0, zero, 3
        .word 0x0000000e          # low bits 10: tt.op2, payload 3
        .word 0x00000001          # low bits 01: nobody claims it
""")
    with pytest.raises(UnhandledTrap, match="illegal instruction"):
        m.run(max_steps=10)
    assert m.tt_log == [4, 3]
    assert hart(m).x[reg_index("a0")] == 3


# ------------------------------------------------------------------ conflicts


def test_a_row_overlapping_a_base_row_is_refused():
    bad = RiscvExtension("bad", encodings=(Encoding("bad.addi", 0x8000_0013, OPCODE | F3 | 1 << 31, "",
                                                    acc_push),))
    with pytest.raises(ConfigError) as info:
        make_arch("x", 32, extensions=[bad])
    message = str(info.value)
    assert "extension bad row 'bad.addi'" in message and "base table row 'addi'" in message
    assert "both match word 0x80000013" in message


def test_two_extensions_claiming_the_same_word_are_refused():
    one = RiscvExtension("one", encodings=(Encoding("one.op", CUSTOM_1, OPCODE, "", acc_push),))
    two = RiscvExtension("two", encodings=(Encoding("two.op", CUSTOM_1 | 1 << 12, OPCODE | F3, "",
                                                    acc_push),))
    with pytest.raises(ConfigError, match="extension two row 'two.op'.*extension one row 'one.op'"):
        make_arch("x", 64, extensions=[one, two])
    # disjoint funct3 values are fine
    three = RiscvExtension("three", encodings=(Encoding("three.op", CUSTOM_1 | 2 << 12, OPCODE | F3, "",
                                                        acc_push),))
    make_arch("x", 64, extensions=[two, three])


def test_field_clashes_and_bad_arguments():
    clash = RiscvExtension("clash", fields=(Field("rd", "31:27", kind="uimm"),))
    with pytest.raises(ConfigError, match="field 'rd' differs"):
        make_arch("x", 32, extensions=[clash])
    same = RiscvExtension("same", fields=(Field("rd", "11:7", kind="reg", regfile="x"),))
    make_arch("x", 32, extensions=[same])                       # redefining identically is fine
    with pytest.raises(ConfigError, match="given twice"):
        make_arch("x", 32, extensions=[ACC, ACC])
    with pytest.raises(ConfigError, match="xlen"):
        make_arch("x", 16)
    with pytest.raises(ConfigError, match="unknown Architecture field"):
        make_arch("x", 32, colour="red")
    with pytest.raises(ConfigError, match="alphanumeric"):
        RiscvExtension("a b")
    arch = make_arch("x", 32, description="mine", quantum=7)
    assert (arch.description, arch.quantum) == ("mine", 7)


# ------------------------------------------------------------------ claiming words at run time


def square(hart, ins):
    x = hart.x
    if ins.rd:
        x[ins.rd] = (x[ins.rs1] * x[ins.rs1]) & hart.mask


SQUARE = Encoding("sq", CUSTOM_1, OPCODE | F3 | F7 | 0x1F << 20, "{rd}, {rs1}", square)


class Squarer:
    """Claims custom-1 words of rv32im/rv64im through the core's tessera_decode hook."""

    TESSERA_API_VERSION = 1

    def __init__(self):
        self.decoded = 0

    @tessera.hookimpl
    def tessera_decode(self, arch, word, address):
        if arch.name in ("rv32im", "rv64im") and word & SQUARE.mask == SQUARE.match:
            self.decoded += 1
            operands = {"rd": word >> 7 & 31, "rs1": word >> 15 & 31}
            return Instruction(SQUARE, word, address, 4, operands)
        return None


def test_a_plugin_can_claim_words_at_run_time():
    plugin = Squarer()
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(plugin, "squarer")
    m = machine(64, host=host)
    load(m, """
        li    a1, 12
        li    t0, 3
loop:   .word 0x0005852b          # sq a0, a1
        addi  t0, t0, -1
        bnez  t0, loop
        li    a7, 93
        ecall
""")
    result = m.run(max_steps=100)
    assert result.exit_code == 144
    assert plugin.decoded == 1                                  # decoded once, run three times
