"""Address spaces, RAM/ROM/MMIO regions, the memory cap, snapshots of memory, watches."""

from __future__ import annotations

import pickle
import tracemalloc

import pytest

import tessera
from tessera.errors import ConfigError, MemoryFault, PluginError, UnhandledTrap
from tessera.machine import Machine
from tessera.memory import MMIO, RAM, ROM, AddressSpace, MemoryBudget, Watch
from tessera.memory.regions import Watched

from .conftest import CONSOLE, ROM_BASE, Plugin, make_host, new_machine, prog, words

# --------------------------------------------------------------------------- RAM / ROM


@pytest.mark.parametrize("endian", ["little", "big"])
def test_ram_round_trip_and_byte_order(endian):
    space = AddressSpace(endian=endian)
    space.add_ram("ram", 0x1000, 0x100)
    space.write(0x1000, 4, 0x11223344)
    raw = space.read_bytes(0x1000, 4)
    assert raw == (bytes([0x44, 0x33, 0x22, 0x11]) if endian == "little" else bytes([0x11, 0x22, 0x33, 0x44]))
    assert space.read(0x1000, 4) == 0x11223344
    assert space.read(0x1000, 2) == (0x3344 if endian == "little" else 0x1122)
    assert space.read(0x1003, 1) == (0x11 if endian == "little" else 0x44)
    space.write(0x1008, 8, 0x0102030405060708)
    assert space.read(0x1008, 8) == 0x0102030405060708


def test_write_keeps_only_the_low_bytes():
    space = AddressSpace()
    space.add_ram("ram", 0, 0x10)
    space.write(0, 4, 0xAABBCCDD)
    space.write(0, 2, 0x12345)  # 17 bits: only 0x2345 lands
    assert space.read(0, 4) == 0xAABB2345
    space.write(4, 4, -1)
    assert space.read(4, 4) == 0xFFFF_FFFF


def test_initial_data_and_too_much_data():
    space = AddressSpace()
    space.add_ram("ram", 0, 8, data=b"\x01\x02")
    assert space.read_bytes(0, 4) == b"\x01\x02\x00\x00"
    with pytest.raises(ConfigError, match="bytes of data"):
        RAM("small", 0, 2, data=b"abc")


@pytest.mark.parametrize("access", ["read", "write"])
def test_unmapped_access_faults_with_address(access):
    space = AddressSpace()
    space.add_ram("ram", 0, 0x100)
    with pytest.raises(MemoryFault) as info:
        if access == "read":
            space.read(0x5000, 4)
        else:
            space.write(0x5000, 4, 1)
    err = info.value
    assert err.address == 0x5000
    assert err.access == access
    assert err.size == 4
    assert "unmapped" in str(err) and "0x00005000" in str(err)


def test_access_straddling_region_end_faults_even_when_next_region_is_mapped():
    space = AddressSpace()
    space.add_ram("a", 0, 0x100)
    space.add_ram("b", 0x100, 0x100)
    space.write(0xFC, 4, 0x01020304)  # last word of a: fine, and primes the last-region cache
    assert space.read(0xFC, 4) == 0x01020304
    for addr in (0xFD, 0xFE, 0xFF):
        with pytest.raises(MemoryFault, match="crosses the end of region 'a'") as info:
            space.read(addr, 4)
        assert info.value.address == addr
        with pytest.raises(MemoryFault):
            space.write(addr, 4, 0)
    # the neighbour was not touched by the refused write
    assert space.read(0x100, 4) == 0
    # bulk transfers may span adjacent regions
    space.write_bytes(0xFE, b"wxyz")
    assert space.read_bytes(0xFE, 4) == b"wxyz"


def test_straddling_the_end_of_the_last_region():
    space = AddressSpace()
    space.add_ram("ram", 0, 0x10)
    with pytest.raises(MemoryFault) as info:
        space.read(0xE, 4)
    assert info.value.address == 0xE
    with pytest.raises(MemoryFault):
        space.read_bytes(0xE, 4)


def test_rom_is_readable_not_writable_but_loadable():
    space = AddressSpace()
    rom = space.add_rom("rom", 0x2000, 0x100, data=b"\xaa\xbb")
    assert space.read(0x2000, 2) == 0xBBAA
    with pytest.raises(MemoryFault, match="read-only") as info:
        space.write(0x2004, 4, 7)
    assert info.value.address == 0x2004 and info.value.access == "write"
    with pytest.raises(MemoryFault):
        space.write_bytes(0x2000, b"zz")
    assert space.read(0x2000, 2) == 0xBBAA
    space.write_bytes(0x2000, b"zz", force=True)  # loaders may
    assert space.read_bytes(0x2000, 2) == b"zz"
    assert rom.kind == "rom"
    with pytest.raises(ConfigError, match="cannot be writable"):
        ROM("bad", 0, 4, perms="rw")


def test_toy_rom_write_from_a_program_faults():
    m = new_machine(prog(("li", dict(rd=1, limm=ROM_BASE)), ("st", dict(rd=1, rs1=1, imm=0)),
                         ("halt", dict(rd=0))), cores=1)
    with pytest.raises(UnhandledTrap) as info:  # the toy turns faults into traps; no tvec set
        m.run()
    assert info.value.pc == 4
    assert info.value.cause == 7  # store fault
    assert m.space.read(ROM_BASE, 4) == 0


def test_unreadable_region():
    space = AddressSpace()
    space.add_ram("wo", 0, 0x10, perms="w")
    space.write(0, 4, 5)
    with pytest.raises(MemoryFault, match="unreadable"):
        space.read(0, 4)
    with pytest.raises(MemoryFault):
        space.read_bytes(0, 4)


def test_fetch_needs_execute_permission():
    space = AddressSpace()
    space.add_ram("code", 0, 0x100, perms="rwx")
    space.add_ram("data", 0x100, 0x100, perms="rw")
    space.write(0x10, 4, 0x1234)
    assert space.fetch(0x10, 4)[0] == 0x1234
    with pytest.raises(MemoryFault, match="non-executable region 'data'") as info:
        space.fetch(0x104, 4)
    assert info.value.access == "fetch" and info.value.address == 0x104
    with pytest.raises(MemoryFault, match="unmapped") as info:
        space.fetch(0x4_0000, 4)
    assert info.value.access == "fetch"
    with pytest.raises(MemoryFault):  # a fetch may not straddle either
        space.fetch(0xFE, 4)


def test_program_jumping_into_non_executable_memory_takes_the_fetch_trap():
    class Data(Plugin):
        @tessera.hookimpl
        def tessera_memory_regions(self, space):
            return [RAM("data", 0x5_0000, 0x100, perms="rw")]

    m = new_machine(prog(("li", dict(rd=1, limm=0x5_0000)), ("jmp", dict(joff=0x5_0000 - 4))),
                    cores=1, plugins=(Data(),))
    with pytest.raises(UnhandledTrap) as info:
        m.run()
    assert info.value.cause == 1 and info.value.pc == 0x5_0000


# --------------------------------------------------------------------------- map checks


def test_overlapping_regions_are_refused():
    space = AddressSpace()
    space.add_ram("a", 0x1000, 0x1000)
    for start, size in ((0x1000, 0x10), (0x800, 0x900), (0x1FFF, 1), (0x0, 0x10000)):
        with pytest.raises(ConfigError, match="overlaps 'a'"):
            space.add_ram(f"r{start:x}", start, size)
    space.add_ram("below", 0x800, 0x800)  # touching is fine
    space.add_ram("above", 0x2000, 0x10)
    with pytest.raises(ConfigError, match="already mapped"):
        space.add_ram("a", 0x4_0000, 0x10)
    assert [r.name for r in space.regions] == ["below", "a", "above"]


def test_regions_outside_the_address_space_are_refused():
    space = AddressSpace(address_bits=16)
    space.add_ram("top", 0xFF00, 0x100)  # ends exactly at the limit
    with pytest.raises(ConfigError, match="outside the 16-bit address space"):
        space.add_mmio("dev", 0xFFFF_0000, 0x10, object())
    with pytest.raises(ConfigError, match="outside"):
        AddressSpace(address_bits=16).add_ram("x", 0xFFF0, 0x20)


@pytest.mark.parametrize("start,size,perms", [(0, 0, "rw"), (-4, 4, "rw"), (0, 4, "rwz")])
def test_bad_region_parameters(start, size, perms):
    with pytest.raises(ConfigError):
        RAM("r", start, size, perms)


def test_memory_cap_refuses_before_allocating():
    space = AddressSpace(budget=MemoryBudget(1 << 20))
    with pytest.raises(ConfigError, match="memory cap"):
        space.add_ram("big", 0, 2 << 20)
    assert space.budget.used == 0 and space.regions == []
    space.add_ram("fits", 0, 1 << 19)
    space.add_rom("rom", 1 << 20, 1 << 19)
    assert space.budget.used == 1 << 20
    with pytest.raises(ConfigError, match="memory cap"):
        space.add_ram("one-more", 2 << 20, 1)
    # devices are not memory the machine allocates
    space.add_mmio("dev", 4 << 20, 1 << 30, object())


def test_huge_region_with_small_cap_never_allocates():
    space = AddressSpace(address_bits=48, budget=MemoryBudget(1 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="memory cap"):
            space.add_ram("huge", 0, 1 << 40)
        with pytest.raises(ConfigError, match="memory cap"):
            space.add_rom("huge-rom", 0, 1 << 40)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_memory_cap_is_shared_by_the_machine():
    with pytest.raises(ConfigError, match="memory cap"):
        new_machine(memory_cap=32 << 10)  # the toy needs 64 KiB RAM + 4 KiB ROM
    m = new_machine(memory_cap=(64 + 4 + 8) << 10)
    aux = m.add_space("aux")
    aux.add_ram("aux", 0, 8 << 10)
    with pytest.raises(ConfigError, match="memory cap"):
        aux.add_ram("more", 0x10000, 1)
    with pytest.raises(ConfigError):
        MemoryBudget(0)


def test_plugin_region_over_the_cap_is_a_plugin_error_naming_it():
    class Big(Plugin):
        @tessera.hookimpl
        def tessera_memory_regions(self, machine, space):
            return [RAM("big", 0x10_0000, 1 << 20)]

    with pytest.raises(PluginError, match="memory cap") as info:
        new_machine(memory_cap=1 << 20, plugins=(("bigmem", Big()),))
    assert info.value.plugin == "bigmem"


def test_snapshot_of_mostly_zero_ram_is_small():
    class Big(Plugin):
        @tessera.hookimpl
        def tessera_memory_regions(self, machine, space):
            return [RAM("big", 0x100_0000, 32 << 20)]

    m = new_machine(prog(("halt", dict(rd=0))), plugins=(Big(),))
    m.space.write(0x100_0000 + (17 << 20), 4, 0xCAFEF00D)
    m.space.write(0x100_0000 + (32 << 20) - 4, 4, 0x12345678)
    data = m.snapshot()
    assert len(data) < 512 << 10  # two 64 KiB chunks at most, not 32 MiB
    m2 = Machine.restore(data)
    assert m2.space.read(0x100_0000 + (17 << 20), 4) == 0xCAFEF00D
    assert m2.space.read(0x100_0000 + (32 << 20) - 4, 4) == 0x12345678
    assert m2.space.read(0x100_0000, 4) == 0
    assert len(m2.space.region_named("big").data) == 32 << 20
    assert m2.state_hash() == m.state_hash()


def test_pickled_address_space_round_trips():
    space = AddressSpace(endian="big")
    space.add_ram("ram", 0, 1 << 20)
    space.write(0x8_0000, 4, 0xDEADBEEF)
    data = pickle.dumps(space)
    assert len(data) < 100 << 10
    back = pickle.loads(data)
    assert back.read(0x8_0000, 4) == 0xDEADBEEF
    assert back.read_bytes(0x8_0000, 1) == b"\xde"


# --------------------------------------------------------------------------- MMIO


class Recorder:
    def __init__(self, value=0x5A5A5A5A):
        self.log = []
        self.value = value

    def read(self, offset, size):
        self.log.append(("r", offset, size))
        return self.value

    def write(self, offset, size, value):
        self.log.append(("w", offset, size, value))


class Broken:
    def read(self, offset, size):
        raise ZeroDivisionError("bad register")

    def write(self, offset, size, value):
        raise KeyError(offset)


def test_mmio_calls_device_with_offsets_and_masked_values():
    space = AddressSpace()
    dev = Recorder()
    space.add_mmio("dev", 0x4000, 0x100, dev)
    assert space.read(0x4010, 4) == 0x5A5A5A5A
    space.write(0x4020, 2, 0x12345)
    space.write(0x4021, 1, -1)
    assert dev.log == [("r", 0x10, 4), ("w", 0x20, 2, 0x2345), ("w", 0x21, 1, 0xFF)]


def test_mmio_device_errors_are_memory_faults_naming_the_device():
    space = AddressSpace()
    space.add_mmio("uart7", 0x4000, 0x100, Broken())
    with pytest.raises(MemoryFault, match="device 'uart7' read failed: ZeroDivisionError") as info:
        space.read(0x4008, 4)
    assert info.value.address == 0x4008 and info.value.access == "read"
    with pytest.raises(MemoryFault, match="device 'uart7' write failed: KeyError") as info:
        space.write(0x400C, 4, 1)
    assert info.value.address == 0x400C and info.value.access == "write"


def test_mmio_permissions_and_bulk_access():
    space = AddressSpace()
    dev = Recorder()
    space.add_mmio("ro", 0x4000, 0x10, dev, perms="r")
    space.read(0x4000, 4)
    with pytest.raises(MemoryFault, match="read-only"):
        space.write(0x4000, 4, 1)
    with pytest.raises(MemoryFault, match="bulk read"):
        space.read_bytes(0x4000, 4)
    with pytest.raises(MemoryFault, match="bulk write"):
        space.write_bytes(0x4000, b"abcd", force=True)
    assert dev.log == [("r", 0, 4)]


def test_bulk_write_to_a_device_is_a_memory_fault():
    # DmaEngine and loaders use write_bytes; a device window must fault, not crash.
    m = new_machine()
    with pytest.raises(MemoryFault, match="console") as info:
        m.space.write_bytes(CONSOLE, b"hi")
    assert info.value.address == CONSOLE
    assert m.space.region_named("console").device.text == bytearray()


def test_console_mmio_from_a_program():
    m = new_machine(prog(
        ("li", dict(rd=1, limm=CONSOLE)),
        ("li", dict(rd=2, limm=ord("h"))),
        ("st", dict(rd=2, rs1=1, imm=0)),
        ("li", dict(rd=2, limm=ord("i"))),
        ("st", dict(rd=2, rs1=1, imm=0)),
        ("ld", dict(rd=3, rs1=1, imm=0)),
        ("halt", dict(rd=3)),
    ), cores=1)
    r = m.run()
    assert m.space.region_named("console").device.text == bytearray(b"hi")
    assert r.exit_code == 2


def test_code_in_a_device_window_is_fetched_every_time():
    class CodeDevice:
        def __init__(self, words):
            self.words = words
            self.reads = 0

        def read(self, offset, size):
            self.reads += 1
            return self.words[offset // 4]

        def write(self, offset, size, value):
            self.words[offset // 4] = value

    # 0x40000: addi r1, r1, 1 ; 0x40004: jmp 0x40000
    dev = CodeDevice(words(("addi", dict(rd=1, rs1=1, imm=1)), ("jmp", dict(joff=-4)), 0, 0))

    class Win(Plugin):
        @tessera.hookimpl
        def tessera_memory_regions(self, space):
            return [MMIO("win", 0x4_0000, 0x10, dev, perms="rwx")]

    m = new_machine(prog(("jmp", dict(joff=0x4_0000))), cores=1, plugins=(Win(),))
    r = m.run(max_steps=101, raise_on_budget=False)
    assert r.reason == "budget"
    assert m.cpus[0].r[1] == 50
    assert dev.reads == 100  # never cached as code
    assert 0x4_0000 not in m.space.decode_cache("toy")


# --------------------------------------------------------------------------- watches


class Watcher(Plugin):
    """Watches given at construction; every call is logged."""

    def __init__(self, *specs):
        self.specs = specs
        self.log = []

    @tessera.hookimpl
    def tessera_memory_watches(self, machine, space):
        out = []
        for start, end, read_value, write_value in self.specs:
            def on_read(agent, address, size, value, _rv=read_value, _s=start):
                self.log.append(("r", _s, agent.name, address, size, value))
                return _rv

            def on_write(agent, address, size, value, _wv=write_value, _s=start):
                self.log.append(("w", _s, agent.name, address, size, value))
                return _wv

            out.append(Watch(start, end, on_read=on_read, on_write=on_write))
        return out


def _ldst_program():
    return prog(
        ("li", dict(rd=1, limm=0x8000)),
        ("li", dict(rd=2, limm=0x1234)),
        ("st", dict(rd=2, rs1=1, imm=0)),    # write 0x8000..0x8003
        ("ld", dict(rd=3, rs1=1, imm=0)),    # read  0x8000..0x8003
        ("ld", dict(rd=4, rs1=1, imm=4)),    # read  0x8004..0x8007
        ("st", dict(rd=2, rs1=1, imm=8)),    # write 0x8008..0x800B
        ("halt", dict(rd=3)),
    )


def test_watch_fires_once_per_overlapping_access():
    w = Watcher((0x8002, 0x8003, None, None))  # one byte inside the first word
    m = new_machine(_ldst_program(), cores=1, plugins=(w,))
    m.run()
    assert w.log == [("w", 0x8002, "core0", 0x8000, 4, 0x1234),
                     ("r", 0x8002, "core0", 0x8000, 4, 0x1234)]


def test_watches_are_not_triggered_by_instruction_fetch():
    w = Watcher((0, 0x40, None, None))  # covers the code
    m = new_machine(_ldst_program(), cores=1, plugins=(w,))
    m.run()
    assert w.log == []


def test_two_watches_each_fire_once_and_see_agent():
    w = Watcher((0x8000, 0x8008, None, None), (0x8004, 0x8010, None, None))
    m = new_machine(_ldst_program(), cores=2, quantum=1000, plugins=(w,))
    m.run()
    per_core = [e for e in w.log if e[2] == "core0"]
    assert per_core == [
        ("w", 0x8000, "core0", 0x8000, 4, 0x1234),
        ("r", 0x8000, "core0", 0x8000, 4, 0x1234),
        ("r", 0x8000, "core0", 0x8004, 4, 0),
        ("r", 0x8004, "core0", 0x8004, 4, 0),
        ("w", 0x8004, "core0", 0x8008, 4, 0x1234),
    ]
    assert [e[2] for e in w.log] == ["core0"] * 5 + ["core1"] * 5


def test_watch_can_replace_read_and_written_values():
    w = Watcher((0x8000, 0x8004, 0x777, 0x99), (0x8008, 0x800C, None, 0xABCD))
    m = new_machine(_ldst_program(), cores=1, plugins=(w,))
    r = m.run()
    assert r.exit_code == 0x777  # the read was replaced
    ram = m.space.region_named("ram")  # the unwrapped region: no watch on this read
    assert ram.read(0x8000, 4) == 0x99  # the write was replaced
    assert ram.read(0x8008, 4) == 0xABCD
    assert m.space.read(0x8000, 4) == 0x777  # a debugger read through the space is watched too
    assert m.cpus[0].r[4] == 0  # unwatched word untouched


def test_only_watched_regions_are_wrapped():
    w = Watcher((0x8000, 0x8004, None, None))
    m = new_machine(plugins=(w,))
    m.prepare()
    ram = m.space.region_at(0x8000)
    assert isinstance(ram, Watched) and ram.inner is m.space.region_named("ram")
    assert m.space.region_at(ROM_BASE) is m.space.region_named("rom")
    assert m.space.region_at(CONSOLE) is m.space.region_named("console")
    assert not any(isinstance(r, Watched) for r in m.space.regions if r.name != "ram")
    plain = new_machine()
    plain.prepare()
    assert not any(isinstance(r, Watched) for r in plain.space.regions)


def test_watch_on_device_window():
    w = Watcher((CONSOLE, CONSOLE + 1, None, ord("X")))
    m = new_machine(prog(("li", dict(rd=1, limm=CONSOLE)), ("li", dict(rd=2, limm=ord("a"))),
                         ("st", dict(rd=2, rs1=1, imm=0)), ("halt", dict(rd=0))),
                    cores=1, plugins=(w,))
    m.run()
    assert m.space.region_named("console").device.text == bytearray(b"X")
    assert len(w.log) == 1


def test_raising_watch_is_a_plugin_error_naming_the_plugin():
    class Bad(Plugin):
        @tessera.hookimpl
        def tessera_memory_watches(self):
            def on_read(agent, address, size, value):
                raise RuntimeError("watch bug")
            return [Watch(0x8000, 0x8004, on_read=on_read)]

    m = new_machine(_ldst_program(), cores=1, plugins=(("badwatch", Bad()),))
    with pytest.raises(PluginError, match="memory watch raised RuntimeError: watch bug") as info:
        m.run()
    assert info.value.plugin == "badwatch"
    assert info.value.agent == "core0" and info.value.pc == 12


def test_watches_apply_to_a_restored_machine():
    m = new_machine(_ldst_program(), cores=1)
    m.run(max_steps=2, raise_on_budget=False)
    w = Watcher((0x8000, 0x8004, 5, None))
    m2 = Machine.restore(m.snapshot(), host=make_host(w))
    assert m2.run().exit_code == 5
    assert len(w.log) == 2


def test_large_ram_is_allocated_lazily_and_snapshots_exactly():
    # A big region is an anonymous mapping: building it touches no pages.
    from tessera.memory import AddressSpace, MemoryBudget
    from tessera.memory.regions import LAZY_RAM_THRESHOLD

    def rss_mb() -> float:  # resident now (not the high-water mark)
        with open("/proc/self/status") as fh:
            return int(fh.read().split("VmRSS:")[1].split()[0]) / 1024

    before = rss_mb()
    space = AddressSpace(budget=MemoryBudget(1 << 30))
    ram = space.add_ram("big", 0, 256 << 20)
    assert 256 << 20 >= LAZY_RAM_THRESHOLD and not isinstance(ram.data, bytearray)
    assert rss_mb() - before < 64
    space.write(0x0FF0_0000, 4, 0xDEADBEEF)
    import pickle

    copy = pickle.loads(pickle.dumps(space))
    assert copy.read(0x0FF0_0000, 4) == 0xDEADBEEF and copy.read(0, 4) == 0
