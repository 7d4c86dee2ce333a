"""TLBRD, TLBRW, PTGHASH and SHPTENDX semantics (spec 4.9, 5.4, 5.5)."""

from __future__ import annotations

import pytest
from mmu_support import (
    OPS,
    USER,
    R,
    X,
    ins,
    phys_write,
    ptbr,
    put_shpte,
    r2,
    selector,
    set_mode,
    set_of,
    set_vec,
    shpte,
    thread,
    tlb_entry,
    tlb_ins,
    trap_of,
    v,
    vec_words,
)

from tessera_phoenix import causes
from tessera_phoenix.mmu import hashing

VA = 0x0040_0000
PA = 0x0001_0000
M32 = 0xFFFF_FFFF


def tlbrd(t, rt, way, s, *, mask=0):
    t.wr(1, selector(way, s))
    OPS["tlbrd"](t, tlb_ins(0, rt, 1, mask=mask))


def tlbrw(t, rt, way, s, rb, *, mask=0):
    t.wr(1, selector(way, s))
    OPS["tlbrw"](t, tlb_ins(1, rt, 1, rb, mask=mask))


# ---------------------------------------------------------------------------- TLBRD


def test_tlbrd_reads_the_reset_preload():
    t = thread()
    set_vec(t, 3, [0xDEAD] * 16)
    tlbrd(t, v(3), 4, 0x3F4)
    words = vec_words(t, 3)
    va = 0xFFFC_0000 + 4 * 0x4000
    assert words[0] == (va >> 14) << 10 | 0x100 | 0x40 | 0x20 | 0x1C
    assert words[1] == 0xFF00_0000
    assert words[2:] == [0] * 14                      # PMT, addresses and 12..15 zero


def test_tlbrd_scalar_destination_gets_the_pte_word():
    t = thread()
    tlbrd(t, 5, 4, 0x3FF)
    assert t.gpr[5] == (0xFFFF_C000 >> 14) << 10 | 0x17C
    tlbrd(t, 5, 0, 0x3FF)                             # empty way
    assert t.gpr[5] == 0


def test_tlbrd_way_beyond_four_reads_zero():
    t = thread()
    set_vec(t, 2, [7] * 16)
    tlbrd(t, v(2), 6, 0x3F0)
    assert vec_words(t, 2) == [0] * 16


def test_tlbrd_honours_the_lane_mask():
    t = thread()
    set_vec(t, 2, [7] * 16)
    t.wr(9, 0b10)                                     # only lane 1
    tlbrd(t, v(2), 4, 0x3F0, mask=9)
    assert vec_words(t, 2)[:3] == [7, 0xFF00_0000, 7]


def test_tlb_instructions_are_machine_mode_only():
    t = thread()
    set_mode(t, USER)
    set_vec(t, 4, [1] * 16)
    for op2, name in ((0, "tlbrd"), (1, "tlbrw")):
        trap = trap_of(OPS[name], t, tlb_ins(op2, v(2), 1, v(4)))
        assert trap.cause == causes.PRIV
    assert t.shared.mmu.tlb.read(0, 0) == [0] * 12


# ---------------------------------------------------------------------------- TLBRW


def test_tlbrw_fixed_writes_the_named_way_and_returns_the_old_entry():
    t = thread()
    old = tlb_entry(VA, PA + 0x4000)
    t.shared.mmu.tlb.write(2, set_of(VA), old)
    new = tlb_entry(VA, PA, R | X, asid=3) + [0x1111, 0x2222, 0x3333, 0x4444]
    set_vec(t, 6, new)
    tlbrw(t, v(7), 2, set_of(VA), v(6))
    assert t.shared.mmu.tlb.read(2, set_of(VA)) == new[:12]
    assert vec_words(t, 7)[:12] == old
    assert vec_words(t, 7)[12:] == [0] * 4
    # the new entry translates
    t.ptbr = ptbr(s=True)
    set_mode(t, USER)
    t.asid = 3
    assert t.shared.mmu.translate(t, VA + 5, "x") == PA + 5


def test_tlbrw_same_register_reads_before_it_writes():
    t = thread()
    entry = tlb_entry(VA, PA)
    set_vec(t, 6, entry)
    tlbrw(t, v(6), 1, set_of(VA), v(6))
    assert t.shared.mmu.tlb.read(1, set_of(VA)) == entry
    assert vec_words(t, 6) == [0] * 16


def test_tlbrw_lru_writes_way_three_except_the_pinned_way():
    t = thread()
    t.ptbr = ptbr(al=1)
    set_vec(t, 6, tlb_entry(VA, PA))
    tlbrw(t, v(7), 1, set_of(VA), v(6))
    assert t.shared.mmu.tlb.read(1, set_of(VA)) == [0] * 12
    assert t.shared.mmu.tlb.read(3, set_of(VA))[0] == tlb_entry(VA, PA)[0]
    tlbrw(t, v(7), 4, set_of(VA), v(6))
    assert t.shared.mmu.tlb.read(4, set_of(VA))[0] == tlb_entry(VA, PA)[0]


def test_tlbrw_random_picks_a_hardware_way():
    t = thread()
    t.ptbr = ptbr(al=2)
    set_vec(t, 6, tlb_entry(VA, PA))
    seen = set()
    for s in range(16):
        tlbrw(t, v(7), 0, s, v(6))
        seen |= {w for w in range(5) if t.shared.mmu.tlb.read(w, s)[0]}
    assert seen <= {0, 1, 2, 3} and len(seen) > 1


def test_tlbrw_nonexistent_way_writes_nothing():
    t = thread()
    set_vec(t, 6, tlb_entry(VA, PA))
    set_vec(t, 7, [9] * 16)
    before = t.shared.mmu.tlb.entries()
    tlbrw(t, v(7), 5, set_of(VA), v(6))
    assert t.shared.mmu.tlb.entries() == before
    assert vec_words(t, 7) == [0] * 16


def test_tlbrw_scalar_source_is_unimplemented():
    t = thread()
    t.wr(1, selector(0, 0))
    trap = trap_of(OPS["tlbrw"], t, tlb_ins(1, v(2), 1, 6))
    assert trap.cause == causes.UNIMP


def test_tlbrw_with_four_lanes_stores_only_the_entry_words():
    t = thread(lanes=4)
    set_vec(t, 6, tlb_entry(VA, PA))
    tlbrw(t, v(7), 0, set_of(VA), v(6))
    assert t.shared.mmu.tlb.read(0, set_of(VA)) == tlb_entry(VA, PA)
    tlbrd(t, v(8), 0, set_of(VA))
    assert vec_words(t, 8) == tlb_entry(VA, PA)[:4]


def test_tlbrw_zero_entry_invalidates():
    t = thread()
    t.shared.mmu.tlb.write(0, set_of(VA), tlb_entry(VA, PA))
    set_vec(t, 6, [0] * 16)
    tlbrw(t, v(7), 0, set_of(VA), v(6))
    t.ptbr = ptbr(s=True)
    set_mode(t, USER)
    assert trap_of(t.space.read, VA, 4).cause == causes.TLB


# ---------------------------------------------------------------------------- PTGHASH


def ptghash_ins(rt, ra):
    return ins(r2(1, rt, ra, 7))


@pytest.mark.parametrize("x, asid, hmask, expected", [
    (0x0000_0040, 5, 0, (0x40 ^ 5) & 0x3FF),
    (0x1234_5678, 0, 0, 0x278),                                  # only 10 bits survive HMASK = 0
    (0x1234_5678, 0x3FF, 0x30, (0x1234_5678 ^ (0x3FF << 5)) & 0xC3FF),   # msb of HMASK = 5
    (0xFFFF_FFFF, 1, 0xFFFF_FFFF, (0xFFFF_FFFF ^ (1 << 31)) & 0xFFFF),   # truncated to 16 bits
])
def test_ptghash_hdl_formula(x, asid, hmask, expected):
    t = thread()
    t.asid = asid
    t.shared.hmask = hmask
    t.wr(4, x)
    OPS["ptghash"](t, ptghash_ins(5, 4))
    assert t.gpr[5] == expected


def test_ptghash_vector_is_elementwise_and_r0_is_not_written():
    t = thread()
    t.asid = 1
    set_vec(t, 4, list(range(16)))
    OPS["ptghash"](t, ptghash_ins(v(5), v(4)))
    assert vec_words(t, 5) == [i ^ 1 for i in range(16)]
    t.wr(4, 0x77)
    OPS["ptghash"](t, ptghash_ins(0, 4))
    assert t.gpr[0] == 0


def test_ptghash_of_the_page_number_finds_what_the_walker_finds():
    t = thread()
    t.asid = 2
    t.shared.hmask = 1
    t.wr(4, VA >> 16)                       # software: srli t,va,16 ; ptghash t,t
    OPS["ptghash"](t, ptghash_ins(5, 4))
    group = t.gpr[5]
    base = 0x4_0000
    put_shpte(t, base, group, 3, shpte(VA >> 16, 0x8, asid=2))
    t.ptbr = ptbr(base)
    set_mode(t, USER)
    assert t.shared.mmu.translate(t, VA, "r") == 0x8 << 16


# ---------------------------------------------------------------------------- SHPTENDX


def shptendx_ins(rt, ra, rb):
    return ins(r2(43, rt, ra, rb))


def ptg_vector(entries):
    words = []
    for w0, w1 in entries:
        words += [w0, w1]
    return words + [0] * (16 - len(words))


def test_shptendx_returns_the_index_of_the_matching_entry():
    t = thread()
    t.asid = 7
    vpn = VA >> 16
    entries = [shpte(vpn + 1, 1, asid=7), shpte(vpn, 2, asid=6), shpte(vpn, 3, asid=7),
               shpte(vpn, 4, asid=7)]
    set_vec(t, 8, ptg_vector(entries))
    t.wr(4, VA + 0x1234)
    OPS["shptendx"](t, shptendx_ins(5, 4, v(8)))
    assert t.gpr[5] == 2


def test_shptendx_global_entry_matches_any_asid():
    t = thread()
    t.asid = 7
    vpn = VA >> 16
    set_vec(t, 8, ptg_vector([shpte(vpn, 1, asid=1)] * 5 + [shpte(vpn, 1, asid=1, g=True)]))
    t.wr(4, VA)
    OPS["shptendx"](t, shptendx_ins(5, 4, v(8)))
    assert t.gpr[5] == 5


def test_shptendx_no_match_is_minus_one():
    t = thread()
    t.asid = 3
    set_vec(t, 8, ptg_vector([shpte(0x55, 1, asid=3)] * 8))
    t.wr(4, VA)
    OPS["shptendx"](t, shptendx_ins(5, 4, v(8)))
    assert t.gpr[5] == M32


def test_shptendx_with_four_lanes_searches_two_entries():
    t = thread(lanes=4)
    vpn = VA >> 16
    words = ptg_vector([shpte(1, 1), shpte(2, 1), shpte(vpn, 1)])
    set_vec(t, 8, words)
    t.wr(4, VA)
    OPS["shptendx"](t, shptendx_ins(5, 4, v(8)))
    assert t.gpr[5] == M32
    set_vec(t, 8, ptg_vector([shpte(1, 1), shpte(vpn, 1)]))
    OPS["shptendx"](t, shptendx_ins(5, 4, v(8)))
    assert t.gpr[5] == 1


def test_shptendx_scalar_source_is_unimplemented():
    t = thread()
    trap = trap_of(OPS["shptendx"], t, shptendx_ins(5, 4, 6))
    assert trap.cause == causes.UNIMP


def test_shptendx_matches_what_the_walker_reads_from_a_group():
    t = thread()
    base = 0x4_0000
    vpn = VA >> 16
    group = hashing.ptghash(vpn, 0, 0)
    for slot, entry in enumerate([shpte(vpn + 9, 1), shpte(vpn, 0xA)]):
        put_shpte(t, base, group, slot, entry)
    # load the group as a vector (what an OS does with LDT) and search it
    image = t.shared.machine.space.read(base + 64 * group, 64)
    set_vec(t, 8, [(image >> (32 * i)) & M32 for i in range(16)])
    t.wr(4, VA)
    OPS["shptendx"](t, shptendx_ins(5, 4, v(8)))
    assert t.gpr[5] == 1
    t.ptbr = ptbr(base)
    set_mode(t, USER)
    phys_write(t, 0xA << 16, 4, 0x42)
    assert t.space.read(VA, 4) == 0x42
