"""Hardware page-table walks: hierarchical (two-level and flat) and hashed with quadratic probing."""

from __future__ import annotations

import pytest
from mmu_support import (
    USER,
    R,
    Tree,
    W,
    phys_read,
    phys_write,
    ptbr,
    put_shpte,
    set_mode,
    set_of,
    shpte,
    thread,
    trap_of,
)

from tessera_phoenix import causes, exceptions
from tessera_phoenix.mmu import hashing
from tessera_phoenix.view import FetchFault

VA = 0x0040_0000
PA = 0x0001_0000


def fetch_trap(t, va):
    with pytest.raises(FetchFault) as info:
        t.space.fetch(va, 6)
    return exceptions.memory_trap(info.value)


def tree_user(**config):
    t = thread(**config)
    tree = Tree(t)
    t.ptbr = tree.ptbr()
    set_mode(t, USER)
    return t, tree


# ---------------------------------------------------------------------------- hierarchical


def test_two_level_walk_translates_and_fills_the_tlb():
    t, tree = tree_user()
    pte_addr = tree.map(VA, PA, R | W)
    phys_write(t, PA + 0x20, 4, 0xFEED_BEEF)
    assert t.space.read(VA + 0x20, 4) == 0xFEED_BEEF
    e = t.shared.mmu.tlb.read(0, set_of(VA))
    assert e[0] >> 10 == PA >> 14 and e[0] & 0x1C == R | W
    assert e[1] >> 24 == VA >> 24
    assert e[2] == pte_addr and e[8] == pte_addr and e[3] == 0
    # the page-table entry in memory is not written by the hardware
    assert phys_read(t, pte_addr, 4) == (PA >> 14) << 10 | R | W


def test_walk_uses_va_25_14_inside_the_leaf_and_31_26_for_the_pointer():
    t, tree = tree_user()
    va2 = VA + 0x4000
    va3 = VA + (1 << 26)
    tree.map(VA, PA)
    tree.map(va2, PA + 0x8000)
    tree.map(va3, PA + 0xC000)
    assert t.shared.mmu.translate(t, va2 + 3, "r") == PA + 0x8003
    assert t.shared.mmu.translate(t, va3 + 5, "w") == PA + 0xC005
    assert t.shared.mmu.translate(t, VA + 7, "x") == PA + 7


def test_ptp_ppnx_becomes_physical_address_bits_47_36():
    t, tree = tree_user()
    tree.map(VA, PA, ppnx=0x5)
    assert t.shared.mmu.translate(t, VA + 1, "r") == (0x5 << 36) | PA | 1
    # beyond the 32-bit physical map: the PMA has no region there
    assert trap_of(t.space.read, VA, 4).cause == causes.PMA


def test_unmapped_page_is_a_data_or_code_page_fault():
    t, tree = tree_user()
    tree.map(VA, PA)
    hole = VA + 0x4000                                   # PTE is zero: RWX = 0
    trap = trap_of(t.space.read, hole + 4, 4)
    assert trap.cause == causes.DPF and trap.tval == hole + 4
    assert trap_of(t.space.write, hole, 4, 0).cause == causes.DPF
    trap = fetch_trap(t, hole)
    assert trap.cause == causes.CPF and trap.tval == hole


def test_invalid_page_table_pointer_is_a_page_fault():
    t, _ = tree_user()
    assert trap_of(t.space.read, VA, 4).cause == causes.DPF
    assert fetch_trap(t, VA).cause == causes.CPF


def test_pointer_with_wrong_level_is_a_level_error():
    t, tree = tree_user()
    tree.map(VA, PA)
    slot = tree.base + 4 * (VA >> 26)
    phys_write(t, slot, 4, phys_read(t, slot, 4) & ~3)   # LVL 0 in a level-1 pointer
    trap = trap_of(t.space.read, VA, 4)
    assert trap.cause == causes.LVL and trap.tval == VA


@pytest.mark.parametrize("levels", [0, 3, 7])
def test_unsupported_level_count_is_a_level_error(levels):
    t, tree = tree_user()
    tree.map(VA, PA)
    t.ptbr = ptbr(tree.base, levels=levels, tree=True)
    assert trap_of(t.space.read, VA, 4).cause == causes.LVL


def test_flat_single_level_table():
    t = thread()
    base = 0x8_0000
    t.ptbr = ptbr(base, levels=1, tree=True)
    set_mode(t, USER)
    phys_write(t, base + 4 * (VA >> 14), 4, (PA >> 14) << 10 | R)
    assert t.shared.mmu.translate(t, VA + 9, "r") == PA + 9
    assert trap_of(t.space.write, VA, 4, 1).cause == causes.DWF


def test_table_in_unmapped_memory_is_a_bus_error():
    t = thread()
    t.ptbr = ptbr(0x4000_0000, levels=2, tree=True)      # nothing mapped there
    set_mode(t, USER)
    assert trap_of(t.space.read, VA, 4).cause == causes.DBE
    assert fetch_trap(t, VA).cause == causes.IBE


def test_walk_permission_fault_after_fill():
    t, tree = tree_user()
    tree.map(VA, PA, R)
    trap = trap_of(t.space.write, VA + 2, 4, 0)
    assert trap.cause == causes.DWF and trap.tval == VA + 2
    assert fetch_trap(t, VA).cause == causes.EXF


# ---------------------------------------------------------------------------- hashed


HBASE = 0x4_0000


def hashed_user(hmask=0, asid=0):
    t = thread()
    t.ptbr = ptbr(HBASE)                                  # Type 0 = hashed, S = 0
    t.shared.hmask = hmask
    t.asid = asid
    set_mode(t, USER)
    return t


def test_hashed_walk_finds_the_entry_in_the_home_group():
    t = hashed_user(asid=3)
    vpn = VA >> 16
    home = hashing.ptghash(vpn, 3, 0)
    assert home == (vpn ^ 3) & 0x3FF
    addr = put_shpte(t, HBASE, home, 5, shpte(vpn, 0x7, rights=0b110, asid=3))
    phys_write(t, (0x7 << 16) + 0x10, 4, 0x5151)
    assert t.space.read(VA + 0x10, 4) == 0x5151
    e = t.shared.mmu.tlb.read(0, set_of(VA))
    assert e[2] == addr and e[0] & 0x1C == R | W
    assert trap_of(t.space.translate, VA, "x").cause == causes.EXF


def test_hashed_pages_are_64k_and_the_tlb_caches_16k_quarters():
    t = hashed_user()
    vpn = VA >> 16
    put_shpte(t, HBASE, hashing.ptghash(vpn, 0, 0), 0, shpte(vpn, 0x3))
    for quarter in range(4):
        va = VA + quarter * 0x4000 + 0x123
        assert t.shared.mmu.translate(t, va, "r") == (0x3 << 16) + quarter * 0x4000 + 0x123


def test_hashed_collisions_follow_the_quadratic_probe_sequence():
    t = hashed_user()
    vpn = VA >> 16
    home = hashing.ptghash(vpn, 0, 0)
    mask = hashing.table_mask(0)
    # fill the home group and the first retry with other pages
    for group in (home, (home + 1) & mask):
        for slot in range(8):
            put_shpte(t, HBASE, group, slot, shpte(vpn + 1 + slot, 0x1))
    # the second retry (home + 4) holds our page
    put_shpte(t, HBASE, (home + 4) & mask, 2, shpte(vpn, 0x9))
    assert t.shared.mmu.translate(t, VA, "r") == 0x9 << 16


def test_hashed_entry_off_the_probe_sequence_is_not_found():
    t = hashed_user()
    vpn = VA >> 16
    home = hashing.ptghash(vpn, 0, 0)
    put_shpte(t, HBASE, (home + 2) & 0x3FF, 0, shpte(vpn, 0x9))   # n^2 never equals 2
    trap = trap_of(t.space.read, VA, 4)
    assert trap.cause == causes.DPF and trap.tval == VA


def test_hashed_probe_limit():
    t = hashed_user()
    vpn = VA >> 16
    groups = hashing.probe_groups(vpn, 0, 0)
    assert len(groups) == hashing.PROBES and groups[:4] == [
        (groups[0] + n * n) & 0x3FF for n in range(4)]
    put_shpte(t, HBASE, groups[-1], 7, shpte(vpn, 0x2))
    assert t.shared.mmu.translate(t, VA, "r") == 0x2 << 16
    t.shared.mmu.tlb.write(0, set_of(VA), [0] * 12)
    last = (groups[0] + hashing.PROBES ** 2) & 0x3FF
    put_shpte(t, HBASE, groups[-1], 7, (0, 0))
    put_shpte(t, HBASE, last, 0, shpte(vpn, 0x2))
    assert last not in groups
    assert trap_of(t.space.read, VA, 4).cause == causes.DPF


def test_hashed_asid_global_and_valid_bits():
    t = hashed_user(asid=4)
    vpn = VA >> 16
    home = hashing.ptghash(vpn, 4, 0)
    put_shpte(t, HBASE, home, 0, shpte(vpn, 0x1, asid=5))                 # other ASID
    put_shpte(t, HBASE, home, 1, shpte(vpn, 0x2, asid=4, valid=False))    # not valid
    assert trap_of(t.space.read, VA, 4).cause == causes.DPF
    put_shpte(t, HBASE, home, 2, shpte(vpn, 0x3, asid=9, g=True))         # global
    assert t.shared.mmu.translate(t, VA, "r") == 0x3 << 16


def test_hashed_hmask_widens_the_table_and_shifts_the_asid():
    hmask = 0x3                                            # table mask 0xFFF, ASID << 1
    t = hashed_user(hmask=hmask, asid=0x155)
    vpn = VA >> 16
    home = hashing.ptghash(vpn, 0x155, hmask)
    assert home == (vpn ^ (0x155 << 1)) & 0xFFF
    put_shpte(t, HBASE, home, 0, shpte(vpn, 0x6, asid=0x155))
    assert t.shared.mmu.translate(t, VA + 4, "w") == (0x6 << 16) + 4


def test_hashed_walk_copies_g_c_a_m_into_the_tlb_entry():
    t = hashed_user()
    vpn = VA >> 16
    put_shpte(t, HBASE, hashing.ptghash(vpn, 0, 0), 0,
              shpte(vpn, 0x4, rights=0b100, g=True, c=True, a=False, m=True))
    t.shared.mmu.translate(t, VA, "r")
    w0 = t.shared.mmu.tlb.read(0, set_of(VA))[0]
    assert w0 & 0x1C == R and w0 & 0x40 and w0 & 0x20 and w0 & 0x100 and w0 & 0x80


def test_software_managed_bit_overrides_the_walk():
    t, tree = tree_user()
    tree.map(VA, PA)
    t.ptbr |= 1 << 4
    assert trap_of(t.space.read, VA, 4).cause == causes.TLB
