"""ELF loading: segments, bss, entry, symbols, and one-line refusals of bad files."""

from __future__ import annotations

import pathlib
import resource
import subprocess
import sys
import time
import types

import attrs
import pytest
from elfgen import (
    EM_RISCV,
    EM_TOY,
    PF_R,
    PF_W,
    PT_LOAD,
    PT_NOTE,
    SHN_ABS,
    STB_LOCAL,
    STT_OBJECT,
    Segment,
    Symbol,
    build_elf,
)
from toyprog import EXIT7, STAGED

import tessera
from tessera.errors import ConfigError, LoadError
from tessera.loaders import choose_architecture, elf_identity, load_elf, load_program
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_toyarch import TOY

GiB = 1 << 30


def toy_elf(**kw):
    kw.setdefault("entry", 0x100)
    kw.setdefault("segments", [(0x100, EXIT7)])
    return build_elf(**kw)


def regions(machine):
    return [(r["name"], r["start"], r["size"]) for r in machine.space.describe()]


# --------------------------------------------------------------------------- happy path


def test_load_elf_places_segments_zeroes_bss_sets_entry_and_symbols(machine, write):
    data_seg = Segment(0x1000, b"\x11\x22\x33\x44\x55\x66\x77\x88", memsz=0x40, flags=PF_R | PF_W)
    path = write("prog.elf", build_elf(
        entry=0x108,
        segments=[(0x100, STAGED), data_seg],
        symbols={"_start": 0x100, "target": 0x108, "buffer": 0x1000},
    ))
    # garbage where the bss will be: the loader must zero it, not just skip it
    machine.space.write_bytes(0x1000, b"\xaa" * 0x80)
    loaded = load_elf(machine, path)

    assert loaded.format == "elf"
    assert loaded.entry == 0x108
    assert loaded.segments == [(0x100, len(STAGED)), (0x1000, 0x40)]
    assert machine.space.read_bytes(0x100, len(STAGED)) == STAGED
    assert machine.space.read_bytes(0x1000, 8) == bytes.fromhex("1122334455667788")
    assert machine.space.read_bytes(0x1008, 0x38) == bytes(0x38)  # bss zeroed
    assert machine.space.read_bytes(0x1040, 0x40) == b"\xaa" * 0x40  # past memsz: untouched
    assert [cpu.name for cpu in machine.cpus] == ["core0", "core1"]
    assert all(cpu.pc == 0x108 for cpu in machine.cpus)
    assert loaded.symbols == {"_start": 0x100, "target": 0x108, "buffer": 0x1000}
    assert machine.symbols["target"] == 0x108
    assert machine.symbol("buffer") == 0x1000


def test_loaded_elf_runs_to_its_exit_status(machine, write):
    load_elf(machine, write("p.elf", toy_elf()))
    result = machine.run(max_steps=100)
    assert result.reason == "halted"
    assert result.exit_code == 7
    assert machine.agent("core0").regs["r"][1] == 7


def test_entry_override_wins_over_e_entry(machine, write):
    loaded = load_elf(machine, write("p.elf", toy_elf(segments=[(0x100, STAGED)])), entry=0x104)
    assert loaded.entry == 0x104
    assert {cpu.pc for cpu in machine.cpus} == {0x104}


def test_segment_into_rom_is_loaded(machine, write):
    load_elf(machine, write("rom.elf", toy_elf(entry=0x20000, segments=[(0x20000, EXIT7)])))
    assert machine.space.read_bytes(0x20000, len(EXIT7)) == EXIT7
    assert machine.run(max_steps=100).exit_code == 7


@pytest.mark.parametrize("sections", [True, False])
def test_elf_without_section_headers_or_symbols_loads(machine, write, sections):
    loaded = load_elf(machine, write("p.elf", toy_elf(sections=sections)))
    assert loaded.symbols == {}
    assert machine.space.read_bytes(0x100, 8) == EXIT7


def test_symbol_table_filters_undefined_and_keeps_locals_objects_and_abs(machine, write):
    syms = [
        Symbol("_start", 0x100),
        Symbol("local_label", 0x104, bind=STB_LOCAL),
        Symbol("table", 0x100, type=STT_OBJECT),
        Symbol("undefined_ref", 0, shndx=0),
        Symbol("abs_value", 0x1234, shndx=SHN_ABS),
        Symbol("a_file", 0, type=4),  # STT_FILE: not an address
    ]
    load_elf(machine, write("p.elf", toy_elf(symbols=syms)))
    assert machine.symbols == {"_start": 0x100, "local_label": 0x104, "table": 0x100,
                               "abs_value": 0x1234}


def test_load_program_detects_elf_by_magic_not_extension(machine, write):
    loaded = load_program(machine, write("firmware.bin", toy_elf()))
    assert loaded.format == "elf"
    assert machine.cpus[0].pc == 0x100


# --------------------------------------------------------------------------- malformed files


def test_wrong_magic(machine, write):
    data = bytearray(toy_elf())
    data[3] = ord("X")
    with pytest.raises(LoadError, match="not an ELF file"):
        load_elf(machine, write("bad.elf", bytes(data)))


def test_wrong_magic_via_forced_format(machine, write):
    with pytest.raises(LoadError, match="bad magic"):
        load_program(machine, write("notelf.bin", b"MZ\x90\x00" * 16), fmt="elf")


def test_truncated_header(machine, write):
    with pytest.raises(LoadError) as exc:
        load_elf(machine, write("t.elf", toy_elf()[:30]))
    assert "truncated" in str(exc.value)
    assert "30 bytes" in str(exc.value)


def test_truncated_elf64_header_between_52_and_64_bytes(write):
    toy64 = attrs.evolve(TOY, name="toy64", elf_class=64, address_bits=64)
    data = build_elf(bits=64, entry=0x100, segments=[(0x100, EXIT7)])[:60]
    with pytest.raises(LoadError, match="malformed|truncated"):
        load_elf(Machine(toy64), write("t64.elf", data))


def test_segment_data_cut_off(machine, write):
    data = toy_elf(sections=False, segments=[(0x100, STAGED)])
    cut = data[:len(data) - 6]  # mid-segment (the segment is the last thing in the file)
    with pytest.raises(LoadError) as exc:
        load_elf(machine, write("cut.elf", cut))
    msg = str(exc.value)
    assert "truncated" in msg and "segment at 0x100" in msg
    assert machine.space.read_bytes(0x100, 16) == bytes(16)  # nothing half-loaded


def test_segment_data_cut_off_with_section_headers(machine, write):
    data = toy_elf(segments=[(0x100, STAGED)], symbols={"_start": 0x100})
    start = data.index(STAGED)
    with pytest.raises(LoadError):
        load_elf(machine, write("cut.elf", data[:start + 5]))


def test_segment_file_offset_beyond_file(machine, write):
    seg = Segment(0x100, EXIT7, offset=0x7FFF_0000)
    with pytest.raises(LoadError, match="truncated"):
        load_elf(machine, write("off.elf", toy_elf(segments=[seg])))


def test_file_size_larger_than_memory_size(machine, write):
    seg = Segment(0x100, EXIT7, memsz=4)
    with pytest.raises(LoadError, match="file size 0x8 > memory size 0x4"):
        load_elf(machine, write("fs.elf", toy_elf(segments=[seg])))


def test_garbage_after_magic_is_one_load_error(machine, write):
    data = b"\x7fELF" + bytes([7, 9, 1]) + b"\xff" * 120  # invalid class and data encoding
    with pytest.raises(LoadError):
        load_elf(machine, write("junk.elf", data))


# --------------------------------------------------------------------------- wrong target


def test_elf_for_another_machine_names_the_machine(machine, write):
    with pytest.raises(LoadError) as exc:
        load_elf(machine, write("rv.elf", toy_elf(machine=EM_RISCV)))
    msg = str(exc.value)
    assert "0xf3" in msg and "toy" in msg and "0x7a01" in msg


def test_wrong_class(machine, write):
    with pytest.raises(LoadError) as exc:
        load_elf(machine, write("c64.elf", toy_elf(bits=64)))
    assert "64-bit" in str(exc.value) and "32-bit" in str(exc.value)


def test_wrong_endianness(machine, write):
    with pytest.raises(LoadError) as exc:
        load_elf(machine, write("be.elf", toy_elf(endian="big")))
    assert "big-endian" in str(exc.value) and "little-endian" in str(exc.value)


def test_elf_identity_reports_number_class_and_byte_order():
    assert elf_identity(toy_elf(), "x") == (EM_TOY, 32, "little")
    assert elf_identity(toy_elf(machine=EM_RISCV, bits=64, endian="big"), "x") == (EM_RISCV, 64, "big")


# --------------------------------------------------------------------------- memory


def test_segment_outside_mapped_memory(machine, write):
    with pytest.raises(LoadError) as exc:
        load_elf(machine, write("far.elf", toy_elf(entry=0x50000, segments=[(0x50000, EXIT7)])))
    msg = str(exc.value)
    assert "outside mapped memory" in msg and "0x50000" in msg
    assert "ram 0x0-0x10000" in msg  # says what *is* mapped


def test_segment_straddling_the_end_of_ram(machine, write):
    with pytest.raises(LoadError, match="outside mapped memory"):
        load_elf(machine, write("edge.elf", toy_elf(segments=[(0xFFFC, EXIT7)])))


def test_segment_over_the_mmio_console_is_refused(machine, write):
    with pytest.raises(LoadError, match="outside mapped memory"):
        load_elf(machine, write("mmio.elf", toy_elf(segments=[(0x30000, EXIT7)])))


def test_segment_beyond_the_address_space(machine, write):
    seg = Segment(0xFFFF_FF00, EXIT7, memsz=0x200)
    with pytest.raises(LoadError, match="32-bit address space"):
        load_elf(machine, write("wrap.elf", toy_elf(segments=[seg])))


def _maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _assert_refused_without_allocating(machine, path, match, **kw):
    before_regions = regions(machine)
    before_used = machine.budget.used
    rss0 = _maxrss_bytes()
    t0 = time.perf_counter()
    with pytest.raises(LoadError, match=match):
        load_elf(machine, path, **kw)
    elapsed = time.perf_counter() - t0
    assert elapsed < 0.5, f"refusal took {elapsed:.2f}s"
    assert _maxrss_bytes() - rss0 < 50 << 20
    assert regions(machine) == before_regions
    assert machine.budget.used == before_used


def test_segment_claiming_2_gib_is_refused_quickly_without_allocating(machine, write):
    seg = Segment(0x100, EXIT7, memsz=0x7FFF_FFFF)
    path = write("huge.elf", toy_elf(segments=[seg]))
    _assert_refused_without_allocating(machine, path, "memory cap", auto_map=True)


def test_segment_claiming_16_gib_elf64_is_refused_quickly_without_allocating(write):
    toy64 = attrs.evolve(TOY, name="toy64", elf_class=64, address_bits=64)
    machine = Machine(toy64)
    seg = Segment(0x100, EXIT7, memsz=16 * GiB)
    path = write("huge64.elf", build_elf(bits=64, entry=0x100, segments=[seg]))
    _assert_refused_without_allocating(machine, path, "claims 0x400000000 bytes", auto_map=True)


def test_elf64_claiming_16_gib_for_32_bit_toy_is_refused_on_class(machine, write):
    seg = Segment(0x100, EXIT7, memsz=16 * GiB)
    path = write("huge64.elf", build_elf(bits=64, entry=0x100, segments=[seg]))
    _assert_refused_without_allocating(machine, path, "64-bit ELF")


def test_huge_segment_under_a_raised_cap_is_still_refused_when_unmapped(write):
    machine = Machine(TOY, memory_cap=4 * GiB)
    seg = Segment(0x1000_0000, EXIT7, memsz=0x7FFF_FFFF)
    path = write("huge.elf", toy_elf(entry=0x1000_0000, segments=[seg]))
    _assert_refused_without_allocating(machine, path, "outside mapped memory")


def test_auto_map_maps_ram_for_an_unmapped_segment_within_the_cap(write):
    machine = Machine(TOY, memory_cap=1 << 20)
    seg = Segment(0x10_0000, EXIT7, memsz=0x8_0000)
    loaded = load_elf(machine, write("far.elf", toy_elf(entry=0x10_0000, segments=[seg])),
                      auto_map=True)
    assert ("load@0x100000", 0x10_0000, 0x8_0000) in regions(machine)
    assert machine.space.read_bytes(0x10_0000, 8) == EXIT7
    assert machine.space.read_bytes(0x17_FFF0, 0x10) == bytes(0x10)
    assert loaded.segments == [(0x10_0000, 0x8_0000)]
    assert machine.run(max_steps=100).exit_code == 7


def test_auto_map_refuses_a_segment_larger_than_the_cap(write):
    machine = Machine(TOY, memory_cap=1 << 20)
    seg = Segment(0x10_0000, EXIT7, memsz=0x20_0000)
    path = write("far.elf", toy_elf(entry=0x10_0000, segments=[seg]))
    _assert_refused_without_allocating(machine, path, "memory cap", auto_map=True)


def test_auto_map_refuses_when_the_rest_of_the_cap_is_too_small(write):
    machine = Machine(TOY, memory_cap=1 << 20)  # RAM + ROM already use 0x11000
    seg = Segment(0x10_0000, EXIT7, memsz=0xF_8000)  # below the cap, above what remains
    path = write("far.elf", toy_elf(entry=0x10_0000, segments=[seg]))
    _assert_refused_without_allocating(machine, path, "memory cap", auto_map=True)


def test_without_auto_map_the_same_segment_is_refused(write):
    machine = Machine(TOY, memory_cap=1 << 20)
    seg = Segment(0x10_0000, EXIT7, memsz=0x8_0000)
    path = write("far.elf", toy_elf(entry=0x10_0000, segments=[seg]))
    _assert_refused_without_allocating(machine, path, "outside mapped memory")


# --------------------------------------------------------------------------- no segments


def test_elf_without_program_headers(machine, write):
    with pytest.raises(LoadError, match="no loadable segments"):
        load_elf(machine, write("none.elf", build_elf(entry=0x100, segments=[])))


def test_elf_with_only_non_load_segments(machine, write):
    note = Segment(0x100, b"NOTE" * 4, type=PT_NOTE)
    with pytest.raises(LoadError, match="no loadable segments"):
        load_elf(machine, write("note.elf", toy_elf(segments=[note])))


def test_elf_whose_only_load_segment_is_empty(machine, write):
    empty = Segment(0x100, b"", memsz=0, type=PT_LOAD)
    with pytest.raises(LoadError, match="no loadable segments"):
        load_elf(machine, write("empty.elf", toy_elf(segments=[empty])))


# --------------------------------------------------------------------------- files


def test_missing_file(machine, tmp_path):
    with pytest.raises(LoadError, match="cannot open .*nope.elf"):
        load_elf(machine, str(tmp_path / "nope.elf"))


def test_directory_as_program(machine, tmp_path):
    with pytest.raises(LoadError, match="is a directory"):
        load_program(machine, str(tmp_path))


def test_load_address_is_refused_for_elf(machine, write):
    with pytest.raises(LoadError, match="--load"):
        load_program(machine, write("p.elf", toy_elf()), load=0x200)


def test_unknown_format_name(machine, write):
    with pytest.raises(LoadError, match="unknown program format"):
        load_program(machine, write("p.elf", toy_elf()), fmt="srec")


# --------------------------------------------------------------------------- choosing the arch


def test_choose_architecture_picks_toy_from_the_header(host):
    arch = choose_architecture(host, toy_elf(), "p.elf")
    assert arch.name == "toy"


@pytest.mark.parametrize("kw", [
    {"machine": EM_RISCV},
    {"endian": "big"},
    {"bits": 64},
], ids=["other-machine", "other-endianness", "other-class"])
def test_choose_architecture_reports_no_installed_architecture(host, kw):
    with pytest.raises(LoadError) as exc:
        choose_architecture(host, toy_elf(**kw), "p.elf")
    msg = str(exc.value)
    assert "no installed architecture" in msg and "--arch" in msg
    assert f"{kw.get('machine', EM_TOY):#x}" in msg


def test_choose_architecture_with_the_plugin_disabled():
    host = PluginHost(disabled=["toy"], use_environment=False)
    with pytest.raises(LoadError, match="no installed architecture runs ELF machine 0x7a01"):
        choose_architecture(host, toy_elf(), "p.elf")


def test_choose_architecture_with_two_candidates_asks_for_arch(host):
    twin = types.ModuleType("twin_plugin")
    twin.TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_architectures():
        return [attrs.evolve(TOY, name="toytwin")]

    twin.tessera_architectures = tessera_architectures
    host.register(twin, "twin")
    assert "toytwin" in host.architectures()
    with pytest.raises(ConfigError, match="toy, toytwin"):
        choose_architecture(host, toy_elf(), "p.elf")


def test_choose_architecture_on_a_truncated_file(host):
    with pytest.raises(LoadError, match="truncated"):
        choose_architecture(host, toy_elf()[:30], "p.elf")


_BSS_PROBE = """
import resource, sys
sys.path.insert(0, {here!r})
import attrs
from elfgen import Segment, build_elf
from tessera.isa import MemoryRegionSpec
from tessera.loaders import load_elf
from tessera.machine import Machine
from tessera_toyarch import TOY

MiB = 1 << 20
mode = sys.argv[1]
if mode == "mapped":  # zero a bss inside RAM that is already mapped (and already touched)
    big = MemoryRegionSpec("big", 0x100_0000, 80 * MiB, "ram", "rwx")
    arch = attrs.evolve(TOY, name="bigram", memory_map=(*TOY.memory_map, big))
    machine, base = Machine(arch), 0x100_0000
    machine.space.write_bytes(base + 64 * MiB - 4, b"junk", force=True)
else:  # auto-map fresh RAM for it
    machine, base = Machine(TOY), 0x100_0000
with open(sys.argv[2], "wb") as fh:
    fh.write(build_elf(entry=base, segments=[Segment(base, b"\\x01" * 16, memsz=64 * MiB)]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
load_elf(machine, sys.argv[2], auto_map=mode == "fresh")
assert machine.space.read_bytes(base + 64 * MiB - 4, 4) == bytes(4)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
"""


@pytest.mark.parametrize(("mode", "limit_mib"), [("mapped", 16), ("fresh", 96)])
def test_large_bss_costs_no_more_than_its_memory(tmp_path, mode, limit_mib):
    # a 64 MiB bss: zeroing must not build a 64 MiB temporary (plus a copy of it) on the side;
    # freshly auto-mapped RAM (64 MiB by itself) is already zero.  Measured in a fresh process.
    here = str(pathlib.Path(__file__).resolve().parent)
    proc = subprocess.run([sys.executable, "-c", _BSS_PROBE.format(here=here), mode,
                           str(tmp_path / "bss.elf")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    grew_mib = int(proc.stdout.strip())
    assert grew_mib < limit_mib, f"loading a 64 MiB bss grew the peak RSS by {grew_mib} MiB"
