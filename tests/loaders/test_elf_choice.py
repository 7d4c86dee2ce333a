"""Which architecture runs an ELF: machine, class, byte order, and the RISC-V build attributes.

Also the ELF machine check of ``load_elf`` (an architecture without an ELF machine runs
no ELF; ``any_machine`` forces one) and mapping symbols, which are not program labels.
The architectures here are the toy's record re-dressed as RISC-V ones, so the rules are
tested without the RISC-V plugins.
"""

from __future__ import annotations

import types

import attrs
import pytest
from elfgen import EM_RISCV, STB_LOCAL, STT_NOTYPE, STT_OBJECT, Symbol, build_elf, riscv_attributes
from toyprog import EXIT7

import tessera
from tessera.errors import ConfigError, LoadError
from tessera.loaders import choose_architecture, load_elf
from tessera.loaders.elf import label_symbols
from tessera.loaders.elfattrs import parse_isa_string, read_arch_attribute, riscv_isa
from tessera.loaders.elffile import ElfFile
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_toyarch import TOY

BASE64 = attrs.evolve(TOY, name="base64", elf_machine=EM_RISCV, elf_class=64, address_bits=64)
TILEISH = attrs.evolve(BASE64, name="tileish", elf_extensions={"xtile"})
BASE32 = attrs.evolve(BASE64, name="base32", elf_class=32, address_bits=32)


def host_with(*archs):
    host = PluginHost(only=["toy"], use_environment=False)
    module = types.ModuleType("fake_archs")
    module.TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_architectures():
        return list(archs)

    module.tessera_architectures = tessera_architectures
    host.register(module, "fake")
    return host


def rv_elf(arch: str | None = None, *, bits: int = 64, attributes: bytes | None = None, **kw) -> bytes:
    if attributes is None and arch is not None:
        attributes = riscv_attributes(arch)
    return build_elf(machine=EM_RISCV, bits=bits, entry=0x100, segments=[(0x100, EXIT7)],
                     attributes=attributes, **kw)


# --------------------------------------------------------------------------- ISA strings


@pytest.mark.parametrize(("text", "xlen", "extensions"), [
    ("rv64i2p1_m2p0_zmmul1p0", 64, {"i", "m", "zmmul"}),
    ("rv32i2p1_m2p0_zba1p0_zbb1p0", 32, {"i", "m", "zba", "zbb"}),
    ("rv64imac", 64, {"i", "m", "a", "c"}),
    ("RV64GC", 64, {"i", "m", "a", "f", "d", "c", "zicsr", "zifencei"}),
    ("rv64i2p1_m2p0_zmmul1p0_xtile1p0", 64, {"i", "m", "zmmul", "xtile"}),
    ("rv64im_xtile", 64, {"i", "m", "xtile"}),
])
def test_isa_strings_read_apart(text, xlen, extensions):
    isa = parse_isa_string(text)
    assert isa is not None and (isa.xlen, isa.extensions) == (xlen, frozenset(extensions))


@pytest.mark.parametrize("text", ["", "x86_64", "rv", "rv64i2p1_?", "rv64ixtile", "rv64i_x"])
def test_what_is_not_an_isa_string(text):
    assert parse_isa_string(text) is None  # rv64ixtile: a multi-letter extension needs its own '_'


# --------------------------------------------------------------------------- the attributes section


def test_arch_attribute_is_found_after_other_attributes_and_vendors():
    other_vendor = riscv_attributes("rv32e", vendor="gnu")[1:]  # a sub-section of another vendor first
    data = b"A" + other_vendor + riscv_attributes("rv64i2p1_m2p0", extra=bytes([6, 1, 9]) + b"x\x00")[1:]
    assert read_arch_attribute(data) == "rv64i2p1_m2p0"
    assert read_arch_attribute(riscv_attributes("rv64im", endian="big"), "big") == "rv64im"
    assert read_arch_attribute(riscv_attributes(None)) is None


@pytest.mark.parametrize("damage", ["version", "length", "truncated", "size", "empty"])
def test_a_damaged_attributes_section_reads_as_absent(damage):
    good = riscv_attributes("rv64i2p1_m2p0_xtile1p0")
    data = {"version": b"B" + good[1:],
            "length": good[:1] + (10_000).to_bytes(4, "little") + good[5:],
            "truncated": good[:-6],
            "size": good[:12] + (3).to_bytes(4, "little") + good[16:],
            "empty": b""}[damage]
    elf = rv_elf(attributes=data)
    assert riscv_isa(ElfFile(elf)) is None
    # and the choice then falls back to the base architecture, never an error
    assert choose_architecture(host_with(BASE64, TILEISH), elf, "p.elf").name == "base64"


# --------------------------------------------------------------------------- choosing


def test_a_plain_rv64_elf_runs_on_the_base_architecture_not_the_extension_one():
    host = host_with(BASE64, TILEISH, BASE32)
    assert choose_architecture(host, rv_elf("rv64i2p1_m2p0_zmmul1p0"), "p.elf").name == "base64"
    assert choose_architecture(host, rv_elf(None), "p.elf").name == "base64"  # no attributes at all
    assert choose_architecture(host, rv_elf("rv32i2p1_m2p0", bits=32), "p.elf").name == "base32"


def test_an_elf_built_for_the_extension_chooses_the_extension_architecture():
    host = host_with(BASE64, TILEISH)
    assert choose_architecture(host, rv_elf("rv64i2p1_m2p0_zmmul1p0_xtile1p0"), "p.elf").name == "tileish"


def test_the_most_specific_extension_architecture_wins_and_a_tie_asks_for_arch():
    both = attrs.evolve(BASE64, name="tilevec", elf_extensions={"xtile", "xvec"})
    twin = attrs.evolve(TILEISH, name="tiletwin")
    host = host_with(BASE64, TILEISH, both)
    assert choose_architecture(host, rv_elf("rv64im_xtile1p0_xvec1p0"), "p.elf").name == "tilevec"
    assert choose_architecture(host, rv_elf("rv64im_xtile1p0"), "p.elf").name == "tileish"
    with pytest.raises(ConfigError, match="tileish, tiletwin"):
        choose_architecture(host_with(BASE64, TILEISH, twin), rv_elf("rv64im_xtile1p0"), "p.elf")


def test_only_an_extension_architecture_installed_asks_for_arch_for_a_plain_elf():
    with pytest.raises(ConfigError) as exc:
        choose_architecture(host_with(TILEISH), rv_elf("rv64im"), "p.elf")
    msg = str(exc.value)
    assert "tileish" in msg and "xtile" in msg and "--arch" in msg


def test_two_base_architectures_still_ask_for_arch():
    host = host_with(BASE64, attrs.evolve(BASE64, name="other64"))
    with pytest.raises(ConfigError, match="several architectures run this ELF .base64, other64."):
        choose_architecture(host, rv_elf("rv64im"), "p.elf")


def test_an_em_none_elf_never_chooses_an_architecture():
    none = attrs.evolve(TOY, name="nomachine", elf_machine=0)
    with pytest.raises(ConfigError, match="EM_NONE.*--arch"):
        choose_architecture(host_with(none), build_elf(machine=0, entry=0x100, segments=[(0x100, EXIT7)]),
                            "p.elf")


def test_elf_extensions_must_be_lower_case_names():
    with pytest.raises(ConfigError, match="elf_extensions"):
        attrs.evolve(BASE64, elf_extensions={"XTile"})


# --------------------------------------------------------------------------- the machine check


def test_an_architecture_without_an_elf_machine_runs_no_elf(write):
    machine = Machine(attrs.evolve(TOY, elf_machine=None))
    with pytest.raises(LoadError) as exc:
        load_elf(machine, write("x.elf", build_elf(machine=62, entry=0x100, segments=[(0x100, EXIT7)])))
    msg = str(exc.value)
    assert "0x3e (x86-64)" in msg and "runs no ELF files" in msg and "--any-elf-machine" in msg


def test_any_machine_loads_a_foreign_elf_but_still_checks_class_and_byte_order(write):
    machine = Machine(TOY)
    foreign = write("rv.elf", build_elf(machine=EM_RISCV, entry=0x100, segments=[(0x100, EXIT7)]))
    with pytest.raises(LoadError, match="0xf3 \\(RISC-V\\).*0x7a01.*--any-elf-machine"):
        load_elf(machine, foreign)
    loaded = load_elf(machine, foreign, any_machine=True)
    assert loaded.entry == 0x100 and machine.run(max_steps=100).exit_code == 7
    wide = write("rv64.elf", build_elf(machine=EM_RISCV, bits=64, entry=0x100, segments=[(0x100, EXIT7)]))
    with pytest.raises(LoadError, match="64-bit"):
        load_elf(Machine(TOY), wide, any_machine=True)


# --------------------------------------------------------------------------- mapping symbols


MAPPED = [Symbol("$xrv32i2p1_m2p0", 0x100, STT_NOTYPE, STB_LOCAL), Symbol("$d", 0x108, STT_NOTYPE, STB_LOCAL),
          Symbol("$x", 0x10C, STT_NOTYPE, STB_LOCAL), Symbol("$t.1", 0x10C, STT_NOTYPE, STB_LOCAL),
          Symbol("local_obj", 0x108, STT_OBJECT, STB_LOCAL), Symbol("main", 0x100),
          Symbol("table", 0x108, STT_OBJECT), Symbol("tail", 0x10C, STT_NOTYPE, STB_LOCAL)]


def test_mapping_symbols_are_neither_machine_symbols_nor_labels(write):
    data = build_elf(entry=0x100, segments=[(0x100, EXIT7 + bytes(16))], symbols=MAPPED)
    machine = Machine(TOY)
    loaded = load_elf(machine, write("m.elf", data))
    assert not [name for name in machine.symbols if name.startswith("$")]
    assert {"main", "table", "local_obj", "tail"} <= set(loaded.symbols)
    labels = label_symbols(ElfFile(data))
    # a function before anything else, a global object before a local one
    assert labels == {0x100: "main", 0x108: "table", 0x10C: "tail"}


def test_the_installed_riscv_and_tile_plugins_follow_the_rule():
    pytest.importorskip("tessera_riscv")
    pytest.importorskip("tessera_tile")
    host = PluginHost(only=["riscv", "tile"], use_environment=False)
    assert host.architecture("tile").elf_extensions == {"xtile"}
    assert choose_architecture(host, rv_elf("rv64i2p1_m2p0_zmmul1p0"), "p.elf").name == "rv64im"
    assert choose_architecture(host, rv_elf(None), "p.elf").name == "rv64im"
    assert choose_architecture(host, rv_elf("rv64i2p1_m2p0_zmmul1p0_xtile1p0"), "p.elf").name == "tile"
    assert choose_architecture(host, rv_elf("rv32i2p1_m2p0", bits=32), "p.elf").name == "rv32im"
