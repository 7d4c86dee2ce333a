"""The decode cache: one fill per address, shared by agents, invalidated by writes to code."""

from __future__ import annotations

import attrs

import tessera
from tessera.engine import RUNNABLE
from tessera.machine import Machine

from .conftest import TOY, Plugin, encode, labels, make_host, new_machine, prog, sum_loop


class DecodeCounter(Plugin):
    """A decode hook that never claims a word but counts cache fills per address."""

    def __init__(self):
        self.calls: list[int] = []

    @tessera.hookimpl
    def tessera_decode(self, machine, arch, word, address):
        self.calls.append(address)
        return None


def smc_program(new_word: int):
    """Run ``target`` twice; after the first pass, store ``new_word`` over it."""
    return (
        ("li", dict(rd=4, limm="data")),
        ("li", dict(rd=6, limm="target")),
        ("li", dict(rd=2, limm=2)),
        "loop:",
        "target:",
        ("addi", dict(rd=5, rs1=5, imm=1)),
        ("ld", dict(rd=7, rs1=4, imm=0)),
        ("st", dict(rd=7, rs1=6, imm=0)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("bne", dict(rd=2, rs1=0, boff="loop")),
        ("halt", dict(rd=5)),
        "data:",
        new_word,
    )


def test_self_modifying_code_sees_the_new_instruction():
    items = smc_program(encode("addi", rd=5, rs1=5, imm=100))
    counter = DecodeCounter()
    m = new_machine(prog(*items), cores=1, plugins=(counter,))
    r = m.run()
    assert r.exit_code == 101  # 1 from the old instruction, 100 from the new one
    target = labels(*items)["target"]
    assert counter.calls.count(target) == 2  # filled, invalidated, filled again
    assert m.space.read(target, 4) == encode("addi", rd=5, rs1=5, imm=100)


def test_without_rewrite_the_loop_reuses_the_cached_entry():
    items = smc_program(encode("addi", rd=5, rs1=5, imm=1))  # stores the same word
    counter = DecodeCounter()
    m = new_machine(prog(*items), cores=1, plugins=(counter,))
    assert m.run().exit_code == 2


def test_dma_copy_over_code_invalidates_the_cache():
    new = encode("li", rd=1, limm=77)
    items = (
        ("li", dict(rd=2, limm=2)),
        ("li", dict(rd=5, limm="target")),
        ("li", dict(rd=6, limm="data")),
        ("li", dict(rd=7, limm=4)),
        ("li", dict(rd=8, limm=0)),
        "loop:",
        "target:",
        ("li", dict(rd=1, limm=11)),
        ("addi", dict(rd=2, rs1=2, imm=-1)),
        ("beq", dict(rd=2, rs1=0, boff="done")),
        ("dma.start", dict(rd=5, rs1=6, rs2=7)),
        ("addi", dict(rd=8, rs1=8, imm=1)),
        ("dma.wait", dict(rd=8)),
        ("jmp", dict(joff="loop")),
        "done:",
        ("halt", dict(rd=1)),
        "data:",
        new,
    )
    m = new_machine(prog(*items), cores=1)
    assert m.run().exit_code == 77


def test_cache_entries_are_shared_by_cores_and_filled_once():
    counter = DecodeCounter()
    items = sum_loop(50)
    m = new_machine(prog(*items), cores=2, quantum=7, plugins=(counter,))
    r = m.run()
    assert r.exit_code == sum(range(51))
    assert m.cpus[1].exit_code == sum(range(51))
    executed = [0, 4, 8, 12, 16, 20]
    assert sorted(counter.calls) == executed  # one fill per address for both cores
    cache = m.space.decode_cache("toy")
    assert sorted(cache) == executed
    assert m.cpus[0]._filler.cache is m.cpus[1]._filler.cache is cache
    # a second run of more code reuses the same entries
    calls = len(counter.calls)
    m.cpus[0].pc = 0
    m.cpus[0].status = RUNNABLE
    m.run()
    assert len(counter.calls) == calls
    assert m.cpus[0].exit_code == sum(range(51))


def test_a_write_invalidates_exactly_the_entries_it_overlaps():
    counter = DecodeCounter()
    far = 0x2000  # another 1 KiB code page
    m = new_machine(prog(("jmp", dict(joff=far)), ), cores=1, plugins=(counter,))
    m.space.write_bytes(far, prog(("li", dict(rd=1, limm=3)), ("halt", dict(rd=1))), force=True)
    m.run()
    assert sorted(counter.calls) == [0, far, far + 4]
    cache = m.space.decode_cache("toy")
    m.space.write(far + 0x200, 4, 0)  # data in the same page as code: no entry dropped
    assert far in cache and far + 4 in cache and 0 in cache
    m.space.write(far + 6, 1, 0)  # one byte of the halt: only that entry goes
    assert far in cache and far + 4 not in cache
    m.space.write(far - 2, 4, 0)  # straddles the start of the li
    assert far not in cache and 0 in cache
    m.space.write(0x8000, 4, 0)  # data page: nothing to drop
    assert 0 in cache
    region = m.space.region_named("ram")
    assert (far >> 10) not in region.code_pages  # the page holds no decoded code any more


def test_flush_and_restore_refill_the_cache():
    counter = DecodeCounter()
    m = new_machine(prog(*sum_loop(3)), cores=1, plugins=(counter,))
    m.run(max_steps=5, raise_on_budget=False)
    assert len(counter.calls) == 5
    m.flush_caches()
    assert len(m.space.decode_cache("toy")) == 0
    m2 = Machine.restore(m.snapshot(), host=make_host(counter))
    counter.calls.clear()
    assert m2.run().exit_code == 6
    assert sorted(set(counter.calls)) == sorted(counter.calls)  # still one fill per address
    assert len(counter.calls) == 4  # the loop body and the halt: what ran after the restore


def test_uninstrumented_entries_keep_the_bare_semantic_function():
    m = new_machine(prog(*sum_loop(3)), cores=1)
    m.run()
    cache = m.space.decode_cache("toy")
    assert cache and all(ins.run is ins.encoding.semantics.resolve() for ins in cache.values())


# -- Architecture.refine: instructions completed from the words after them ---------------

def _postfix_refine(ins, peek):
    """Test rule: an ``li`` followed by a ``nop`` word takes the nop's low 10 bits as its
    bits 31:22 (like rfPhoenix's immediate postfix); the entry then depends on both words."""
    if ins.mnemonic != "li":
        return
    after = peek(ins.next)
    if after is not None and after >> 26 == 0:  # a nop
        ins.limm = (ins.limm & 0x3F_FFFF) | ((after & 0x3FF) << 22)
        ins.span = ins.size * 2


def test_refine_merges_the_following_word_and_writes_to_it_invalidate():
    arch = attrs.evolve(TOY, refine=_postfix_refine)
    m = Machine(arch, host=None, config={"cores": 1, "echo": False})
    code = prog(
        ("li", dict(rd=1, limm=5)),
        0x0000_0003,  # nop word carrying 3 -> r1 = 5 | 3 << 22
        ("halt", dict(rd=0)),
    )
    m.space.write_bytes(0, code)
    m.run()
    core = m.cpus[0]
    assert core.r[1] == 5 | 3 << 22
    assert m.space.decode_cache("toy")[0].span == 8
    # rewrite only the postfix word: the cached li must be decoded again
    m.space.write(4, 4, 0x0000_0001)
    assert 0 not in m.space.decode_cache("toy")
    core.pc, core.status = 0, RUNNABLE
    m.run()
    assert core.r[1] == 5 | 1 << 22
