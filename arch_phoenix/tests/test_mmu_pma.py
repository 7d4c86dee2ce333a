"""The PMA region table: default map, faults, pma=False, and the register window."""

from __future__ import annotations

import pytest
from mmu_support import USER, machine, phys_read, put, set_mode, thread, trap_of

from tessera.machine import Machine
from tessera_phoenix import causes, exceptions
from tessera_phoenix.mmu.pma import LOCKED, UNLOCKED
from tessera_phoenix.view import FetchFault

WIN = 0xFF9F_0000


def reg(region, word):
    return WIN + 0x40 * region + 4 * word


def unlock(t, region):
    t.space.write(reg(region, 14), 4, UNLOCKED)


# ---------------------------------------------------------------------------- default table


@pytest.mark.parametrize("pa, rights", [
    (0x0000_0000, "rwx"), (0x000F_FFF0, "rwx"),                 # DRAM (region 1)
    (0xFF80_0000, "rw"), (0xFF9F_0000, "rw"),                   # I/O incl. the window (6)
    (0xFFFC_0000, "rwx"), (0xFFFC_FFFF, "rwx"),                 # scratch (4)
    (0xFFFD_0000, "rx"), (0xFFFF_FFF0, "rx"),                   # ROM (7) beats vacant 5 at the top
    (0x2000_0000, ""), (0x8000_0000, ""), (0xFFA0_0000, ""),    # no region
])
def test_default_table_rights(pa, rights):
    pma = thread().shared.pma
    for access in "rwx":
        if access in rights:
            pma.check(pa, access, pa)
        else:
            trap = trap_of(pma.check, pa, access, pa + 1)
            assert trap.cause == causes.PMA and trap.tval == pa + 1


def test_store_to_rom_is_a_pma_fault_in_machine_mode():
    t = thread()
    trap = trap_of(t.space.write, 0xFFFD_0010, 4, 1)
    assert trap.cause == causes.PMA and trap.tval == 0xFFFD_0010
    exceptions.take_trap(t, trap)
    assert t.badaddr[3] == 0xFFFD_0010 and t.cause[3] == causes.PMA


def test_without_pma_checks_the_rom_itself_refuses_the_store():
    t = thread(pma=False)
    trap = trap_of(t.space.write, 0xFFFD_0010, 4, 1)
    assert trap.cause == causes.DBE and trap.tval == 0xFFFD_0010
    assert trap_of(t.space.read, 0x8000_0000, 4).cause == causes.DBE   # no region, no PMA: DBE


def test_unmapped_dram_beyond_the_configured_size_is_a_bus_error_not_pma():
    t = thread()                      # dram = 1 MiB, PMA region 1 covers 512 MiB
    assert trap_of(t.space.read, 0x0010_0000, 4).cause == causes.DBE


def test_fetch_from_io_is_refused_by_the_pma():
    t = thread()
    with pytest.raises(FetchFault) as info:
        t.space.fetch(0xFF80_0000, 6)
    trap = exceptions.memory_trap(info.value)
    assert trap.cause == causes.PMA and trap.tval == 0xFF80_0000


def test_pma_checks_the_translated_physical_address_and_reports_the_virtual():
    t = thread()
    t.ptbr = 1 << 4
    set_mode(t, USER)
    va = 0x0040_0000
    put(t, 0, va, 0xFFFD_0000)                    # a writable page onto the ROM
    trap = trap_of(t.space.write, va + 8, 4, 0)
    assert trap.cause == causes.PMA and trap.tval == va + 8


# ---------------------------------------------------------------------------- register window


def test_window_reads_the_hdl_defaults():
    t = thread()
    read = t.space.read
    assert read(reg(7, 0), 4) == 0xFFFD_0000 and read(reg(7, 2), 4) == 0xFFFF_FFFF
    assert read(reg(7, 1), 4) == 0 and read(reg(7, 8), 4) == 0x0000D
    assert read(reg(1, 4), 4) == 0x2400 and read(reg(6, 8), 4) == 0x00206
    assert read(reg(0, 8), 4) == 0x0FF00
    assert all(read(reg(n, 14), 4) == LOCKED for n in range(8))
    assert read(reg(3, 9), 4) == 0                       # unused word
    assert read(reg(7, 0) + 2, 2) == 0xFFFD              # sub-word reads are little-endian
    assert read(reg(7, 0) + 0x200, 4) == 0xFFFD_0000     # bits 8:2 decoded: the block repeats


def test_locked_region_ignores_writes():
    t = thread()
    t.space.write(reg(1, 2), 4, 0xFFF)
    assert t.space.read(reg(1, 2), 4) == 0x1FFF_FFFF
    t.shared.pma.check(0x10_0000, "w", 0)                # table unchanged


def test_unlock_edit_and_relock():
    t = thread()
    unlock(t, 1)
    assert t.space.read(reg(1, 14), 4) == UNLOCKED
    t.space.write(reg(1, 2), 4, 0x0000_FFFF)             # DRAM region ends at 64 KiB
    assert t.space.read(reg(1, 2), 4) == 0xFFFF
    assert trap_of(t.space.read, 0x1_0000, 4).cause == causes.PMA
    t.space.read(0xFFF0, 4)
    t.space.write(reg(1, 14), 4, LOCKED)
    t.space.write(reg(1, 2), 4, 0x1FFF_FFFF)              # ignored again
    assert t.space.read(reg(1, 2), 4) == 0xFFFF


def test_highest_numbered_matching_region_wins_after_edits():
    t = thread()
    unlock(t, 2)
    t.space.write(reg(2, 0), 4, 0x2000)
    t.space.write(reg(2, 2), 4, 0x2FFF)
    t.space.write(reg(2, 8), 4, 0x4)                      # read only, inside DRAM (region 1)
    t.space.write(0x1000, 4, 5)
    assert trap_of(t.space.write, 0x2000, 4, 5).cause == causes.PMA
    assert trap_of(t.space.write, 0x2FF0, 4, 5).cause == causes.PMA
    t.space.write(0x3000, 4, 5)                           # 16-byte granules: 0x2FF0..0x2FFF is the last
    assert t.space.read(0x2000, 4) == 0
    # a higher region (4, scratch) moved over the same range wins over region 2
    unlock(t, 4)
    t.space.write(reg(4, 0), 4, 0x2800)
    t.space.write(reg(4, 2), 4, 0x28FF)
    t.space.write(0x2800, 4, 6)
    assert phys_read(t, 0x2800, 4) == 6
    assert trap_of(t.space.write, 0x2900, 4, 5).cause == causes.PMA


def test_high_words_hold_address_bits_47_32():
    t = thread()
    unlock(t, 0)
    t.space.write(reg(0, 1), 4, 0xABCD_1234)
    assert t.space.read(reg(0, 1), 4) == 0x1234
    assert t.shared.pma.regions[0][0] == 0x1234_FFFF_FFFF


def test_byte_writes_merge_into_the_register():
    t = thread()
    unlock(t, 3)
    t.space.write(reg(3, 8), 1, 0x07)                      # AT low byte: X W R
    assert t.space.read(reg(3, 8), 4) == 0x0FF07
    for k, b in enumerate(LOCKED.to_bytes(4, "little")):   # lock byte by byte
        t.space.write(reg(3, 14) + k, 1, b)
    assert t.space.read(reg(3, 14), 4) == LOCKED


def test_window_works_with_pma_checks_off_and_edits_take_effect_when_on():
    m = machine(pma=False)
    t = m.agents[0]
    unlock(t, 7)
    t.space.write(reg(7, 8), 4, 0xF)
    assert t.shared.pma.regions[7][4] == 0xF


def test_pma_table_survives_a_snapshot():
    t = thread()
    unlock(t, 1)
    t.space.write(reg(1, 2), 4, 0xFFFF)
    m2 = Machine.restore(t.shared.machine.snapshot(), architectures=[t.shared.machine.arch])
    t2 = m2.agents[0]
    assert t2.space.read(reg(1, 2), 4) == 0xFFFF
    assert trap_of(t2.space.read, 0x1_0000, 4).cause == causes.PMA


def test_state_dump_lists_the_regions():
    t = thread(pma=False)
    state = t.shared.pma.state()
    assert state["enabled"] is False
    assert state["regions"][7] == [0xFFFD_0000, 0xFFFF_FFFF, 0, 0, 0xD, LOCKED]
