"""The architecture records, the plugin entry point, ELF selection, configuration, demos."""

from __future__ import annotations

import pytest
from rvcore_support import ARCHS, XLENS, elfgen, hart, machine

from tessera.cli.demo import run_example
from tessera.errors import ConfigError, LoadError
from tessera.isa import Decoder
from tessera.loaders import choose_architecture, load_elf
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_riscv import RV32IM, RV64IM, RiscvHart

EM_RISCV, EM_TOY, build_elf, words_le = elfgen.EM_RISCV, elfgen.EM_TOY, elfgen.build_elf, elfgen.words_le

EXIT_42 = words_le([0x02A0_0513, 0x05D0_0893, 0x0000_0073])      # li a0, 42; li a7, 93; ecall


@pytest.fixture
def write(tmp_path):
    def _write(name, data):
        path = tmp_path / name
        path.write_bytes(data)
        return str(path)

    return _write


def host() -> PluginHost:
    return PluginHost(only=["riscv"], use_environment=False)


def test_the_plugin_registers_both_architectures():
    h = host()
    assert h.records["riscv"].status == "active"
    assert h.architecture("rv32im") is RV32IM and h.architecture("rv64im") is RV64IM
    assert h.plugin_of("rv64im") == "riscv"


@pytest.mark.parametrize("xlen", XLENS)
def test_architecture_record(xlen):
    arch = ARCHS[xlen]
    assert (arch.elf_machine, arch.elf_class, arch.endian) == (0xF3, xlen, "little")
    assert arch.address_bits == xlen and arch.word_bits == 32 and arch.reset_pc == 0x10000
    assert arch.register_file_map["x"].width == xlen
    Decoder(arch)                                   # no two rows with the same match/mask
    names = {e.mnemonic for e in arch.encodings}
    assert {"mul", "csrrw", "sh1add", "rev8", "amoadd.w", "fence.i", "mret", "wfi"} <= names
    assert ("ld" in names) == (xlen == 64) and ("amoadd.d" in names) == (xlen == 64)


@pytest.mark.parametrize("xlen", XLENS)
def test_board(xlen):
    m = machine(xlen)
    (h,) = m.agents
    assert isinstance(h, RiscvHart) and h.name == "hart0" and len(h.x) == 32
    assert h.xlen == xlen and h.pc == 0x10000


@pytest.mark.parametrize(("bits", "name"), [(32, "rv32im"), (64, "rv64im")])
def test_elf_chooses_the_architecture(write, bits, name):
    data = build_elf(machine=EM_RISCV, bits=bits, entry=0x10000, segments=[(0x10000, EXIT_42)],
                     symbols={"_start": 0x10000})
    assert choose_architecture(host(), data, "p.elf").name == name
    m = machine(bits)
    loaded = load_elf(m, write("p.elf", data))
    assert loaded.entry == 0x10000 and m.symbols["_start"] == 0x10000
    assert m.run(max_steps=10).exit_code == 42


def test_elf_for_another_machine_or_class_is_refused(write):
    toy = write("toy.elf", build_elf(machine=EM_TOY, bits=32, entry=0x10000, segments=[(0x10000, EXIT_42)]))
    with pytest.raises(LoadError, match="0x7a01, not rv32im"):
        load_elf(machine(32), toy)
    rv64 = write("rv64.elf", build_elf(machine=EM_RISCV, bits=64, entry=0x10000,
                                       segments=[(0x10000, EXIT_42)]))
    with pytest.raises(LoadError, match="64-bit ELF; rv32im takes 32-bit"):
        load_elf(machine(32), rv64)
    big = build_elf(machine=EM_RISCV, bits=32, endian="big", entry=0x10000, segments=[(0x10000, EXIT_42)])
    with pytest.raises(LoadError, match="no installed architecture"):
        choose_architecture(host(), big, "big.elf")


def test_elf_outside_ram_is_refused(write):
    path = write("far.elf", build_elf(machine=EM_RISCV, bits=32, entry=0x8000_0000,
                                      segments=[(0x8000_0000, EXIT_42)]))
    with pytest.raises(LoadError, match="outside mapped memory"):
        load_elf(machine(32), path)


@pytest.mark.parametrize(("config", "message"), [
    ({"bogus": 1}, r"unknown RISC-V setting\(s\): bogus"),
    ({"misaligned": "sometimes"}, "misaligned must be one of allow, trap"),
    ({"ram": 0}, r"ram=0 is out of range \(16\.\.4G: the 32-bit address space\)"),
    ({"ram": 24}, "ram must be a multiple of 16 bytes"),
    ({"ram": "lots"}, "ram must be a number"),
    ({"ram": 1 << 33}, r"ram=8G is out of range \(16\.\.4G: the 32-bit address space\)"),
    ({"ram": 1 << 20, "stack_top": 1 << 21}, "stack_top=0x200000 must lie in RAM"),
    ({"syscalls": "maybe"}, "syscalls must be true or false"),
])
def test_bad_settings(config, message):
    with pytest.raises(ConfigError, match=message):
        Machine(RV32IM, config=config)


def test_settings_as_the_command_line_gives_them():
    m = Machine(RV64IM, config={"ram": "2M", "misaligned": "TRAP", "echo": "off", "stack_top": "0x100000",
                                "hartid": "5"})
    h = hart(m)
    assert m.space.describe()[0]["size"] == 2 << 20
    assert h.trap_misaligned and not m.riscv_io.echo and h.hartid == 5
    assert h.x[2] == 0x100000 - 48


@pytest.mark.parametrize("xlen", XLENS)
def test_bundled_example_passes(xlen, capfd):
    arch = ARCHS[xlen]
    (example,) = arch.examples
    ok, summary = run_example(None, arch, example)
    assert ok, summary
    assert capfd.readouterr().out == ("5050\n" if xlen == 32 else "21689584844800\n")


def test_cli_flags_map_to_settings():
    for arch in (RV32IM, RV64IM):
        assert arch.cli_flags["trap-misaligned"][:2] == ("misaligned", "trap")
        assert arch.cli_flags["no-syscalls"][:2] == ("syscalls", False)
        assert arch.cli_flags["no-echo"][:2] == ("echo", False)


@pytest.mark.parametrize("xlen", XLENS)
def test_snapshot_mid_run_continues_exactly(xlen):
    from rvcore_support import load

    source = ARCHS[xlen].examples[0].source

    def build():
        m = machine(xlen)
        load(m, source)
        return m

    reference = build()
    reference.run(max_steps=10_000)
    first = build()
    first.run(max_steps=123, raise_on_budget=False)
    again = Machine.restore(first.snapshot())
    result = again.run(max_steps=10_000)
    assert result.exit_code == 0
    assert again.state_hash() == reference.state_hash()
    assert bytes(again.riscv_io.stdout) == bytes(reference.riscv_io.stdout)


def test_every_base_row_is_tagged_with_its_xlen():
    for xlen, arch in ARCHS.items():
        for row in arch.encodings:
            assert f"rv{xlen}" in row.flags and row.semantics is not None, row.mnemonic
