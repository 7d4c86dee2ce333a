"""L1 after a snapshot is restored: the unpackers' byte view still sees what is stored."""

from __future__ import annotations

from tessera.machine import Machine
from tessera_tensix.arch import TENSIX_BH


def test_a_restored_l1_view_sees_later_stores():
    m = Machine(TENSIX_BH)
    core = m.ext["tensix"]
    core.l1.set_word(0x100, 0x1234)
    restored = Machine.restore(m.snapshot())
    l1 = restored.ext["tensix"].l1
    assert l1.word(0x100) == 0x1234
    restored.space.write(l1.base + 0x200, 4, 0xCAFE)     # a store through the address space
    assert l1.word(0x200) == 0xCAFE                       # is what the unpackers read
    assert int(l1.read(0x200, 1)[0]) == 0xFE
