"""The batched in-order model (tessera_cycles.inorder_batch) against the per-retirement one.

The kernel must apply exactly InOrderPipeline's rules: on random instruction streams
(every kind, register reuse, cache-thrashing addresses, every predictor), on real
programs run by both engines, and across a snapshot taken right after a branch (whose
direction the batched model reads from the next retirement).
"""

from __future__ import annotations

import random

import pytest

import tessera_cycles
import tessera_cycles.live
import tessera_cycles.plugin
import tessera_riscv.plugin
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_cycles.inorder import _KINDS, InOrderParams, InOrderPipeline
from tessera_cycles.inorder_batch import EXPLICIT, SHAPE_SHIFT, BatchedPipeline, Instructions, id_token
from tessera_cycles.riscv import RiscvInOrder


class Hart:
    """What a batched pipeline reads of its hart: the x registers."""

    def __init__(self, x: list[int] | None = None) -> None:
        self.x = x or [0] * 32
        self.regs = {"x": self.x}
        self.xlen = 32


def feed_both(params: InOrderParams, stream: list[tuple]) -> tuple[dict, dict]:
    """Give ``stream`` — (pc, kind, reads, writes, accesses, taken, target, explicit) —
    to the per-retirement pipeline and, as records, to the batched one."""
    reference = InOrderPipeline(params)
    program = Instructions(params)
    batched = BatchedPipeline(params, program, Hart())
    ids: dict[tuple, int] = {}
    for pc, kind, reads, writes, accesses, taken, target, explicit in stream:
        reference.retire(pc, kind, reads, writes, accesses, taken, target)
        key = (pc, kind, reads, writes, target, explicit)
        ident = ids.get(key)
        if ident is None:
            ident = ids[key] = program.add(pc, kind, () if explicit else reads, () if explicit else writes,
                                           pc if target is None else target)
        shape = program.shape(tuple(size for _a, size in accesses))
        token = id_token(ident) | shape << SHAPE_SHIFT
        values: list[int] = []
        if explicit:
            token |= EXPLICIT
            for group in (reads, writes):
                values += [len(group), *group]
        for address, _size in accesses:
            values += [address, 0xDEAD]
        batched.tokens.append(token)
        batched.values.extend(values)
        if random.random() < 0.05:
            batched.settle(None)       # batches of every length, a branch left waiting at times
    batched.settle(None)
    assert not batched.tokens and not batched.values
    return reference.report(), batched.report()


def random_stream(rng: random.Random, n: int) -> list[tuple]:
    """``n`` retirements of a random program: the pc follows the branches' directions."""
    code: dict[int, tuple] = {}
    pc, out = 0x1000, []
    for k in range(n):
        ins = code.get(pc)
        if ins is None:
            kind = rng.choice(_KINDS)
            reads = tuple(rng.randrange(0, 8) for _ in range(rng.randrange(0, 3)))
            writes = () if kind in ("store", "branch") else (rng.randrange(0, 8),)
            explicit = kind == "system" and rng.random() < 0.5
            if explicit:   # an ecall-like record: uses of its own
                reads, writes = tuple(rng.randrange(0, 8) for _ in range(3)), (10, 11)
            target = pc + rng.choice((-64, -32, -8, 8, 16, 40))
            code[pc] = ins = (kind, reads, writes, target, explicit)
        kind, reads, writes, target, explicit = ins
        accesses: tuple = ()
        if kind in ("load", "store", "amo"):
            accesses = tuple((rng.choice((0x8000, 0x9000, 0xA000)) + rng.randrange(0, 4096, 2),
                              rng.choice((1, 2, 4, 8))) for _ in range(2 if kind == "amo" else 1))
        taken = None
        if kind == "branch":
            taken = rng.random() < 0.6
        last = k == n - 1
        if last and kind == "branch":
            kind, taken = "alu", None   # the stream ends on a decided instruction
            code.pop(pc)
            explicit = False
        out.append((pc, kind, reads, writes, accesses, taken, target if kind == "branch" else None, explicit))
        if kind == "branch" and taken:
            pc = target if 0x400 <= target < 0x100000 else 0x1000
            if pc != target:   # keep the stream honest: a taken branch lands on its target
                out[-1] = (*out[-1][:5], False, target, explicit)
                pc = out[-1][0] + 4
        else:
            pc += 4
        if not 0x400 <= pc < 0x100000:
            pc = 0x1000
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("settings", [
    {},
    {"caches": False},
    {"predictor": "btfn", "icache_size": 256, "icache_ways": 1, "dcache_size": 512, "miss_penalty": 7},
    {"predictor": "not-taken", "load_use": 3, "mul_latency": 5, "div_latency": 9, "bht_entries": 4,
     "dcache_size": 256, "dcache_line": 16, "dcache_ways": 4, "branch_penalty": 4, "jalr_penalty": 0},
    {"bht_entries": 2, "icache_line": 8, "icache_size": 64, "icache_ways": 2, "jump_penalty": 3},
])
def test_the_kernel_times_random_streams_as_the_pipeline_does(seed, settings):
    params = InOrderParams(**settings)
    # fixed seed per case: a failure names the stream that shows it
    reference, batched = feed_both(params, random_stream(random.Random(seed * 7919 + len(settings)), 3000))
    assert batched == reference
    assert reference["instructions"] == 3000 and reference["cycles"] > 3000


def test_a_trailing_branch_waits_for_its_successor_unless_the_clock_is_read():
    params = InOrderParams(caches=False)
    program = Instructions(params)
    alu = program.add(0x100, "alu", (), (5,), 0x100)
    branch = program.add(0x104, "branch", (5, 6), (), 0x100, ("bne", 5, 6))
    pipe = BatchedPipeline(params, program, Hart())
    pipe.tokens += [id_token(alu), id_token(branch)]
    pipe.settle(None)
    assert pipe.tokens == [id_token(branch)] and pipe.report()["instructions"] == 1
    hart = Hart([0] * 32)
    hart.x[5], hart.x[6] = 1, 2            # bne taken: the bimodal counter (weakly not taken) misses
    from tessera_cycles.riscv import _conditions

    pipe.settle(hart, _conditions(32))
    rep = pipe.report()
    assert pipe.tokens == [] and rep["instructions"] == 2
    assert rep["predictor"]["predictions"] == 1 and rep["predictor"]["mispredictions"] == 1
    reference = InOrderPipeline(params)
    reference.retire(0x100, "alu", (), (5,), (), None, None)
    reference.retire(0x104, "branch", (5, 6), (), (), True, 0x100)
    assert rep == reference.report()


# ---------------------------------------------------------------------- on real programs

BASE = 0x1000


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_riscv.plugin, "riscv")
    h.register(tessera_cycles.plugin, "cycles")
    return h


def mark_machine(engine: str, **settings: object) -> Machine:
    from tessera.bench.model import Context
    from tessera_riscv.bench_mark import CompiledMark

    h = host()
    prog = CompiledMark.program_for(Context(h), 2)
    return prog.machine(h, engine, {"cycles": "inorder", **settings})  # type: ignore[no-any-return]


@pytest.mark.parametrize("engine", ["step", "fast"])
@pytest.mark.parametrize("settings", [{}, {"cycles.predictor": "btfn", "cycles.dcache_size": 1024}])
def test_the_compiled_mark_program_gets_the_per_retirement_report(engine, settings, monkeypatch):
    """C compiled with gcc (calls, loads, stores, ecalls) on both engines: the batched
    model reports exactly what the per-retirement pipeline does."""
    batched = mark_machine(engine, **settings)
    batched.run(max_steps=5_000_000)
    monkeypatch.setattr(RiscvInOrder, "batched", False)
    single = mark_machine(engine, **settings)
    single.run(max_steps=5_000_000)
    a, b = tessera_cycles.report(batched), tessera_cycles.report(single)
    assert a is not None and a == b and a["agents"]["hart0"]["instructions"] > 50_000
    assert isinstance(tessera_cycles.live.model_of(batched).pipelines["hart0"], BatchedPipeline)
    assert batched.clock == single.clock


def test_a_snapshot_right_after_a_branch_goes_on_as_a_run_never_stopped():
    from tessera.errors import BudgetExceeded
    from tessera.isa.asm import assemble
    from tessera_riscv import RV32IM

    source = """
        li   t0, 200
    loop:
        lw   t1, 0(sp)
        addi t0, t0, -1
        bnez t0, loop
        li   a0, 0
        li   a7, 93
        ecall
    """

    def fresh() -> Machine:
        m = Machine(RV32IM, host=host(), config={"echo": False, "ram": 1 << 20, "cycles": "inorder"})
        for address, blob in assemble(m.arch, source, base=BASE).segments:
            m.space.write_bytes(address, blob, force=True)
        m.set_entry(BASE)
        return m

    whole = fresh()
    whole.run(max_steps=100_000)
    stopped = fresh()
    with pytest.raises(BudgetExceeded):
        stopped.run(max_steps=1 + 3 * 57)      # the last instruction run is the branch
    assert stopped.agent("hart0").pc == BASE + 4
    restored = Machine.restore(stopped.snapshot(), host=host())
    restored.run(max_steps=100_000)
    assert tessera_cycles.report(restored) == tessera_cycles.report(whole)
    assert restored.clock == whole.clock > 600
