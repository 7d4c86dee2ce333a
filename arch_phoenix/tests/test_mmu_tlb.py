"""TLB lookup, ASID/G matching, permissions, MPRV, software-managed misses, replacement."""

from __future__ import annotations

import pytest
from mmu_support import (
    MACHINE,
    SUPERVISOR,
    USER,
    A,
    G,
    M,
    R,
    Tree,
    W,
    X,
    machine,
    phys_read,
    phys_write,
    ptbr,
    put,
    set_mode,
    set_of,
    thread,
    tlb_entry,
)

from tessera.control import Trap
from tessera.machine import Machine
from tessera_phoenix import causes, exceptions
from tessera_phoenix.mmu.tlb import SETS
from tessera_phoenix.view import FetchFault

VA = 0x0040_0000
PA = 0x0001_0000


def user(**config):
    t = thread(**config)
    t.ptbr = ptbr(s=True)          # software-managed: only what the test writes exists
    set_mode(t, USER)
    return t


def trap_of(fn, *args):
    with pytest.raises(Trap) as info:
        fn(*args)
    return info.value


# ---------------------------------------------------------------------------- identity and reset


def test_machine_mode_is_identity_and_leaves_the_tlb_alone():
    t = thread()
    assert t.mode == MACHINE
    before = t.shared.mmu.tlb.entries()
    assert t.shared.mmu.translate(t, 0x1234_5678, "r") == 0x1234_5678
    phys_write(t, 0x100, 4, 0xCAFEF00D)
    assert t.space.read(0x100, 4) == 0xCAFEF00D
    assert t.shared.mmu.tlb.entries() == before


def test_reset_preload_maps_scratch_and_rom_for_lower_modes():
    t = user()
    entries = t.shared.mmu.tlb.entries()
    assert [(w, s) for w, s, _ in entries] == [(4, s) for s in range(0x3F0, 0x400)]
    for _, _, e in entries:
        assert e[0] & 0x1C == 0x1C and e[0] & G and e[0] & M and e[0] & 0x20
        assert e[1] == 0xFF00_0000
    phys_write(t, 0xFFFC_0010, 4, 0x1122_3344)
    assert t.space.read(0xFFFC_0010, 4) == 0x1122_3344            # identity through way 4
    assert t.shared.mmu.translate(t, 0xFFFF_FFFA, "x") == 0xFFFF_FFFA
    t.asid = 77                                                     # global: any ASID
    assert t.space.read(0xFFFC_0010, 4) == 0x1122_3344


# ---------------------------------------------------------------------------- lookup


def test_hit_translates_page_number_and_keeps_offset():
    t = user()
    put(t, 0, VA, PA)
    phys_write(t, PA + 0x1234, 4, 0xA5A5_0001)
    assert t.space.read(VA + 0x1234, 4) == 0xA5A5_0001
    t.space.write(VA + 0x3FFC, 4, 0x0BAD_CAFE)
    assert phys_read(t, PA + 0x3FFC, 4) == 0x0BAD_CAFE


def test_ppnx_gives_a_48_bit_physical_address():
    t = user()
    t.shared.mmu.tlb.write(0, set_of(VA), tlb_entry(VA, (0x123 << 36) | PA))
    assert t.shared.mmu.translate(t, VA + 8, "r") == (0x123 << 36) | PA | 8


def test_software_managed_miss_raises_tlb_with_badaddr():
    t = user()
    trap = trap_of(t.space.read, VA + 0x44, 4)
    assert trap.cause == causes.TLB and trap.tval == VA + 0x44
    exceptions.take_trap(t, trap)
    assert t.cause[USER] == causes.TLB and t.badaddr[USER] == VA + 0x44
    assert t.mode == MACHINE


def test_tag_must_match_va_31_24():
    t = user()
    put(t, 0, VA, PA)
    other = VA + (1 << 24)                      # same set, different tag
    assert set_of(other) == set_of(VA)
    assert trap_of(t.space.read, other, 4).cause == causes.TLB


def test_asid_must_match_unless_global():
    t = user()
    put(t, 0, VA, PA, asid=5)
    put(t, 1, VA + (1 << 24), PA + 0x4000, asid=9, g=True)
    t.asid = 5
    assert t.shared.mmu.translate(t, VA, "r") == PA
    t.asid = 6
    assert trap_of(t.shared.mmu.translate, t, VA, "r").cause == causes.TLB
    assert t.shared.mmu.translate(t, VA + (1 << 24), "r") == PA + 0x4000   # G ignores the ASID


def test_rwx_zero_is_an_invalid_entry():
    t = user()
    put(t, 0, VA, PA, rights=0)
    assert trap_of(t.space.read, VA, 4).cause == causes.TLB


@pytest.mark.parametrize("rights, access, cause", [
    (W | X, "r", causes.DRF),
    (R | X, "w", causes.DWF),
    (R | W, "x", causes.EXF),
])
def test_missing_right_raises_the_access_fault(rights, access, cause):
    t = user()
    put(t, 0, VA, PA, rights=rights)
    trap = trap_of(t.space.translate, VA + 6, access)
    assert trap.cause == cause and trap.tval == VA + 6


def test_fetch_fault_carries_its_trap_through_memory_trap():
    t = user()
    put(t, 0, VA, PA, rights=R | W)
    with pytest.raises(FetchFault) as info:
        t.space.fetch(VA, 6)
    trap = exceptions.memory_trap(info.value)
    assert trap.cause == causes.EXF and trap.tval == VA
    exceptions.take_trap(t, trap)
    assert t.badaddr[USER] == VA          # EXF records BADADDR like the other memory causes


def test_accessed_and_modified_bits_are_set_in_the_entry():
    t = user()
    put(t, 0, VA, PA)
    tlb = t.shared.mmu.tlb
    assert tlb.read(0, set_of(VA))[0] & (A | M) == 0
    t.space.read(VA, 4)
    assert tlb.read(0, set_of(VA))[0] & (A | M) == A
    t.space.write(VA, 4, 1)
    assert tlb.read(0, set_of(VA))[0] & (A | M) == A | M


def test_supervisor_mode_translates_too():
    t = user()
    set_mode(t, SUPERVISOR)
    put(t, 0, VA, PA)
    assert t.shared.mmu.translate(t, VA + 1, "r") == PA + 1


# ---------------------------------------------------------------------------- MPRV


def test_mprv_makes_machine_loads_and_stores_use_the_previous_mode():
    t = user()
    put(t, 0, VA, PA)
    set_mode(t, MACHINE, mprv=True, previous=USER)
    phys_write(t, PA + 4, 4, 0x600D)
    assert t.space.read(VA + 4, 4) == 0x600D
    t.space.write(VA + 8, 4, 0x1234)
    assert phys_read(t, PA + 8, 4) == 0x1234
    # fetches are not affected: identity (VA is unmapped physical memory here)
    assert t.shared.mmu.translate(t, VA, "x") == VA
    # an unmapped VA traps as it would in user mode
    assert trap_of(t.space.read, VA + (5 << 24), 4).cause == causes.TLB


def test_mprv_with_machine_previous_mode_is_identity():
    t = user()
    set_mode(t, MACHINE, mprv=True, previous=MACHINE)
    assert t.shared.mmu.translate(t, VA, "r") == VA


def test_mprv_is_ignored_outside_machine_mode():
    t = user()
    put(t, 0, VA, PA)
    set_mode(t, USER, mprv=True, previous=MACHINE)
    assert t.shared.mmu.translate(t, VA, "r") == PA


# ---------------------------------------------------------------------------- replacement on hardware fills


def _pages_in_one_set(n):
    return [VA + (k << 24) for k in range(n)]          # same set index, different tags


def _walked(t, tree, policy):
    t.ptbr = tree.ptbr(al=policy)
    set_mode(t, USER)


def _one_set(n, policy):
    """A user-mode thread walking a tree that maps ``n`` pages of one TLB set (page i -> PA + i pages)."""
    t = thread()
    tree = Tree(t)
    vas = _pages_in_one_set(n)
    for i, va in enumerate(vas):
        tree.map(va, PA + i * 0x4000)
    _walked(t, tree, policy)
    return t, vas


def _ways_holding(t, vas):
    """way of each VA's entry (None if absent), by tag."""
    tlb = t.shared.mmu.tlb
    out = []
    for va in vas:
        found = None
        for way in range(5):
            e = tlb.read(way, set_of(va))
            if e[0] & 0x1C and e[1] >> 24 == va >> 24:
                found = way
        out.append(found)
    return out


def test_fixed_policy_fills_way_zero():
    t, vas = _one_set(2, 0)
    t.space.read(vas[0], 4)
    assert _ways_holding(t, vas) == [0, None]
    t.space.read(vas[1], 4)
    assert _ways_holding(t, vas) == [None, 0]       # replaced in way 0


def test_lru_policy_moves_the_most_recent_to_way_zero_and_evicts_way_three():
    t, vas = _one_set(5, 1)
    for va in vas[:4]:
        t.space.read(va, 4)
    assert _ways_holding(t, vas) == [3, 2, 1, 0, None]
    t.space.read(vas[1], 4)                          # hit in way 2: promoted, younger ones age
    assert _ways_holding(t, vas) == [3, 0, 2, 1, None]
    t.space.read(vas[4], 4)                          # miss: way 3 (vas[0], least recent) goes
    assert _ways_holding(t, vas) == [None, 1, 3, 2, 0]
    # translations stay right after all the moving
    phys_write(t, PA + 2 * 0x4000 + 12, 4, 0x77)
    assert t.space.read(vas[2] + 12, 4) == 0x77


def test_lru_never_moves_the_pinned_way():
    t = user()
    t.ptbr = ptbr(s=True, al=1)
    t.space.read(0xFFFC_0000, 4)
    assert t.shared.mmu.tlb.read(4, 0x3F0)[1] == 0xFF00_0000
    assert t.shared.mmu.tlb.read(0, 0x3F0) == [0] * 12


def _random_fill_ways(m: Machine, n: int) -> list[int]:
    t = m.agents[0]
    tree = Tree(t)
    vas = [VA + (k << 24) for k in range(n)]
    for va in vas:
        tree.map(va, PA)
    _walked(t, tree, 2)
    out = []
    for va in vas:
        t.space.read(va, 4)
        out.append(_ways_holding(t, [va])[0])
    return out


def test_random_policy_is_deterministic_and_uses_hardware_ways_only():
    a = _random_fill_ways(machine(), 24)
    b = _random_fill_ways(machine(), 24)
    assert a == b
    assert set(a) <= {0, 1, 2, 3} and len(set(a)) > 1


def test_random_generator_state_survives_a_snapshot():
    m = machine()
    t = m.agents[0]
    t.shared.mmu.tlb.random_way()
    restored = Machine.restore(m.snapshot(), architectures=[m.arch])
    seq = [t.shared.mmu.tlb.random_way() for _ in range(10)]
    again = [restored.agents[0].shared.mmu.tlb.random_way() for _ in range(10)]
    assert seq == again


def test_tlb_entries_survive_a_snapshot_exactly():
    t = user()
    put(t, 2, VA, PA, asid=3)
    t.asid = 3
    t.space.write(VA, 4, 9)                             # sets A and M
    m2 = Machine.restore(t.shared.machine.snapshot(), architectures=[t.shared.machine.arch])
    t2 = m2.agents[0]
    assert t2.shared.mmu.tlb.entries() == t.shared.mmu.tlb.entries()
    assert t2.space.read(VA, 4) == 9


def test_every_set_index_is_reachable():
    t = user()
    for s in (0, 1, SETS - 1):
        va = s << 14
        put(t, 1, va, PA)
        assert t.shared.mmu.translate(t, va + 2, "r") == PA + 2


def test_state_dump_is_json_ready():
    import json

    t = user()
    put(t, 1, VA, PA, asid=2)
    state = json.loads(json.dumps(t.shared.mmu.state()))
    assert [1, set_of(VA), *tlb_entry(VA, PA, asid=2)] in state["tlb"]
    assert len(state["tlb"]) == 17 and state["rng"] == t.shared.mmu.tlb.rng
