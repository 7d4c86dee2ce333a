"""The unified TLB as a fault target (``tlb``, spec 5.4): 5 ways × 1024 sets of the 12
stored words, read and written on the live TLB, and a fault in an entry redirects a
user-mode program's store."""

from __future__ import annotations

import pytest
from mmu_support import USER, R, W, X, set_mode, set_of, tlb_entry

import tessera_faults
import tessera_faults.plugin
import tessera_phoenix.plugin
from tessera.control import Trap
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_faults.targets import resolve, targets_of
from tessera_phoenix import causes
from tessera_phoenix.mmu.tlb import PINNED_WAY, SETS, WAYS, WORDS

VA = 0x0040_0000
PA = 0x0001_0000
SCRATCH = 0xFFFC_0000

#: sum 40..1 and store it to scratch RAM (through the preloaded way-4 entry in user mode)
SUM = """
        ldi     r5, 40
        ldi     r6, 0
loop0:  add     r6, r6, r5
        addi    r5, r5, -1
        bne     r5, r0, loop0
        ldi     r3, 0xFFFC0000
        st.t    r6, 0[r3]
done0:  bra     done0
"""


def make(source: str | None = None, *, user: bool = False) -> Machine:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_phoenix.plugin, "phoenix")
    h.register(tessera_faults.plugin, "faults")
    arch = h.architecture("phoenix")
    m = Machine(arch, host=h, config={"dram": 0x100000, "threads": 1})
    if source is not None:
        for address, data in assemble(arch, source, base=arch.reset_pc).segments:
            m.space.write_bytes(address, data, force=True)
    if user:
        set_mode(m.agents[0], USER)
    return m


def words_of(value: int) -> list[int]:
    return [(value >> (32 * i)) & 0xFFFF_FFFF for i in range(WORDS)]


def test_the_tlb_is_one_target_of_every_stored_entry():
    m = make()
    tlb = m.agents[0].shared.mmu.tlb
    target = targets_of(m)["tlb"]
    assert (target.shape, target.bits, target.agent) == ((WAYS, SETS), 32 * WORDS, None)
    preloaded = tlb.entries()
    assert preloaded                                    # the reset preload of way 4
    values = target.snapshot()
    for way, s, words in preloaded:
        assert words_of(target.read(way * SETS + s)) == words == words_of(values[way * SETS + s])
    assert sum(1 for v in values if v) == len(preloaded)


def test_writing_an_entry_changes_the_live_translation():
    m = make(user=True)
    t = m.agents[0]
    m.space.write(PA + 0x20, 4, 0xA5A5_0001)
    entry = resolve(m, f"tlb[0,{set_of(VA)}]")
    value = sum(w << (32 * i) for i, w in enumerate(tlb_entry(VA, PA, R | W | X)))
    generation = t.shared.mmu.generation
    entry.target.write(entry.index, value)
    assert t.shared.mmu.tlb.read(0, set_of(VA)) == tlb_entry(VA, PA, R | W | X)
    assert t.space.read(VA + 0x20, 4) == 0xA5A5_0001 and t.shared.mmu.generation > generation
    entry.target.write(entry.index, value & ~R)          # the read right, bit 4 of word 0
    with pytest.raises(Trap) as info:
        t.space.read(VA + 0x20, 4)
    assert info.value.cause == causes.DRF


def test_a_fault_in_a_pinned_entry_redirects_a_store():
    clean = make(SUM, user=True)
    clean.run(max_steps=2000)
    assert clean.space.read(SCRATCH, 4) == sum(range(41))
    m = make(SUM, user=True)
    # word 0 bit 10 is PPN bit 14: the scratch page maps to the next 16 KiB page
    record = tessera_faults.inject(m, f"target=tlb[{PINNED_WAY},{set_of(SCRATCH)}],bit=10,at=step:3")
    m.run(max_steps=2000)
    assert record["status"] == "injected"
    assert m.space.read(SCRATCH, 4) == 0 and m.space.read(SCRATCH + 0x4000, 4) == sum(range(41))
