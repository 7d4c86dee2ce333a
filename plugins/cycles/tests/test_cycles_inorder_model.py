"""The in-order 5-stage pipeline model: hand-counted timings, stall attribution, predictors.

Every expected cycle count is worked out by hand in the comment beside it, from the rules
in tessera_cycles.inorder's docstring: ex_1 = 3; ex_i = max(ex_{i-1} + 1 + dstall_{i-1},
ex_{i-1} + 1 + redirect_{i-1} + fetch_i, ready of each source); cycles = ex_last + 2 +
dstall_last.
"""

from __future__ import annotations

import random

import attrs
import pytest

from tessera_cycles.cache import Cache
from tessera_cycles.inorder import PARAM_DOCS, InOrderParams, InOrderPipeline
from tessera_cycles.predictor import Bimodal, StaticBTFN, StaticNotTaken, make_predictor

PERFECT = InOrderParams(caches=False)


def op(kind, reads=(), writes=(), accesses=(), taken=None, target=None, pc=None):
    """One retired instruction, as the plugin glue would pass it (pc filled in by run)."""
    return {"pc": pc, "kind": kind, "reads": tuple(reads), "writes": tuple(writes),
            "accesses": tuple(accesses), "taken": taken, "target": target}


def run(params, program, start=0x1000):
    """Feed *program* to a fresh pipeline; instructions without a pc follow the previous one."""
    pipeline = InOrderPipeline(params)
    pc = start
    for instruction in program:
        if instruction["pc"] is not None:
            pc = instruction["pc"]
        pipeline.retire(pc, instruction["kind"], instruction["reads"], instruction["writes"],
                        instruction["accesses"], instruction["taken"], instruction["target"])
        pc += 4
    return pipeline


def stall_sum(report):
    """Disjoint stall categories (load_use and mul_div are parts of data)."""
    return sum(cycles for name, cycles in report["stalls"].items() if name not in ("load_use", "mul_div"))


def assert_identity(pipeline):
    report = pipeline.report()
    assert report["instructions"] + 4 + stall_sum(report) == pipeline.cycles() == report["cycles"]
    assert report["stalls"]["load_use"] + report["stalls"]["mul_div"] <= report["stalls"]["data"]


# -- straight-line code and data hazards ------------------------------------------------

def test_nothing_retired_is_zero_cycles():
    pipeline = InOrderPipeline(PERFECT)
    assert pipeline.cycles() == 0
    report = pipeline.report()
    assert (report["instructions"], report["cycles"], report["cpi"]) == (0, 0, 0.0)


def test_independent_alu_ops_take_n_plus_4():
    n = 10
    pipeline = run(PERFECT, [op("alu", reads=(1, 2), writes=(3 + i % 5,)) for i in range(n)])
    assert pipeline.cycles() == n + 4                  # 10 + 4 = 14: fill, one per cycle, drain
    assert pipeline.report()["cpi"] == (n + 4) / n
    assert_identity(pipeline)


def test_a_dependent_alu_chain_is_fully_forwarded():
    n = 10
    pipeline = run(PERFECT, [op("alu", reads=(5,), writes=(5,)) for _ in range(n)])
    assert pipeline.cycles() == n + 4                  # EX->EX forwarding: 14, no stall
    assert pipeline.report()["stalls"]["data"] == 0


@pytest.mark.parametrize("load_use", [1, 2])
def test_load_use(load_use):
    params = InOrderParams(caches=False, load_use=load_use)
    load = op("load", reads=(2,), writes=(1,), accesses=((0x100, 4),))
    use = op("alu", reads=(1,), writes=(3,))
    other = op("alu", reads=(4,), writes=(5,))

    back_to_back = run(params, [load, use])
    # load ex 3, result ready 3 + 1 + load_use; use ex = max(4, 4 + load_use) -> stall load_use
    assert back_to_back.cycles() == 2 + 4 + load_use   # 7 with load_use 1, 8 with 2
    stalls = back_to_back.report()["stalls"]
    assert stalls["data"] == stalls["load_use"] == load_use
    assert_identity(back_to_back)

    spaced = run(params, [load, other, use])
    # ex 3, 4, then max(5, 4 + load_use): one instruction in between hides one cycle
    assert spaced.cycles() == 3 + 4 + (load_use - 1)   # 7 with load_use 1, 8 with 2
    assert spaced.report()["stalls"]["load_use"] == load_use - 1
    assert_identity(spaced)


def test_amo_result_waits_like_a_load():
    amo = op("amo", reads=(10, 11), writes=(12,), accesses=((0x200, 4), (0x200, 4)))
    pipeline = run(PERFECT, [amo, op("alu", reads=(12,), writes=(13,))])
    assert pipeline.cycles() == 2 + 4 + 1              # default load_use 1: 7
    assert pipeline.report()["stalls"]["load_use"] == 1


@pytest.mark.parametrize("mul_latency", [3, 5])
def test_mul_chain_waits_mul_latency_minus_one(mul_latency):
    n = 6
    params = InOrderParams(caches=False, mul_latency=mul_latency)
    pipeline = run(params, [op("mul", reads=(7, 8), writes=(7,)) for _ in range(n)])
    # ex_k = 3 + (k-1) * mul_latency, cycles = ex_n + 2
    assert pipeline.cycles() == n + 4 + (n - 1) * (mul_latency - 1)   # 6+4+5*2 = 20; 6+4+5*4 = 30
    stalls = pipeline.report()["stalls"]
    assert stalls["data"] == stalls["mul_div"] == (n - 1) * (mul_latency - 1)
    assert stalls["load_use"] == 0
    assert_identity(pipeline)


def test_a_long_divide_does_not_block_independent_instructions():
    div = op("div", reads=(1, 2), writes=(3,))
    independent = [op("alu", reads=(4,), writes=(5,)) for _ in range(5)]
    pipeline = run(PERFECT, [div, *independent])
    assert pipeline.cycles() == 6 + 4                  # 10: nothing waits on x3
    dependent = run(PERFECT, [div, op("alu", reads=(3,), writes=(6,))])
    # div ex 3, result ready 3 + 34 = 37; the use enters EX at 37 instead of 4
    assert dependent.cycles() == 2 + 4 + 33            # 39
    assert dependent.report()["stalls"]["mul_div"] == 33


def test_a_mul_result_used_three_later_needs_no_stall():
    mul = op("mul", reads=(1, 2), writes=(3,))
    filler = op("alu", reads=(4,), writes=(5,))
    pipeline = run(PERFECT, [mul, filler, filler, op("alu", reads=(3,), writes=(6,))])
    assert pipeline.cycles() == 4 + 4                  # mul ex 3 ready 6; ex 4, 5, use at 6: 8


def test_register_zero_never_waits():
    # a load "writing" x0 (e.g. a prefetch-like lw x0) and a reader of x0
    pipeline = run(PERFECT, [op("load", reads=(1,), writes=(0,), accesses=((0, 4),)),
                             op("alu", reads=(0,), writes=(2,))])
    assert pipeline.cycles() == 2 + 4                  # 6: no load-use stall through x0


# -- control flow -------------------------------------------------------------------------

def loop_program(iterations=10):
    """``1: addi x5, x5, -1; bne x5, x0, 1b`` run *iterations* times, then one instruction.

    The branch is taken iterations-1 times and falls through once; the trailing addi makes
    the final branch's redirect visible.
    """
    body = []
    for i in range(iterations):
        taken = i < iterations - 1
        body.append(op("alu", reads=(5,), writes=(5,), pc=0x100))
        body.append(op("branch", reads=(5, 0), taken=taken, target=0x100, pc=0x104))
    body.append(op("alu", reads=(0,), writes=(6,), pc=0x108))
    return body


@pytest.mark.parametrize(("predictor", "mispredictions"), [
    # bimodal, counter starts at 1: branch 1 predicted NT (wrong, ->2), branches 2-9 T
    # (right, ->3), branch 10 predicted T but falls through (wrong): 2
    ("bimodal", 2),
    ("btfn", 1),          # target 0x100 <= 0x104: always predicted taken, only the exit is wrong
    ("not-taken", 9),     # every taken iteration is wrong, the exit is right
])
def test_branchy_loop(predictor, mispredictions):
    params = InOrderParams(caches=False, predictor=predictor)
    pipeline = run(params, loop_program())
    # 21 instructions, no data stalls (ALU -> branch forwards), 2 cycles per misprediction
    assert pipeline.cycles() == 21 + 4 + 2 * mispredictions   # bimodal 29, btfn 27, not-taken 43
    report = pipeline.report()
    assert report["predictor"] == {"name": predictor, "predictions": 10, "mispredictions": mispredictions,
                                   "accuracy": 1 - mispredictions / 10}
    assert report["stalls"]["branch"] == 2 * mispredictions
    assert_identity(pipeline)


def test_branch_penalty_parameter_scales_mispredictions():
    params = InOrderParams(caches=False, predictor="not-taken", branch_penalty=5)
    assert run(params, loop_program()).cycles() == 21 + 4 + 5 * 9   # 70


@pytest.mark.parametrize(("kind", "penalty"), [("jump", 1), ("jalr", 2)])
def test_jumps_cost_their_penalty(kind, penalty):
    program = [op("alu", reads=(1,), writes=(2,)), op(kind, reads=(1,) if kind == "jalr" else (), writes=(1,)),
               op("alu", reads=(3,), writes=(4,), pc=0x2000)]
    pipeline = run(PERFECT, program)
    assert pipeline.cycles() == 3 + 4 + penalty        # jal 8, jalr 9
    assert pipeline.report()["stalls"]["jump"] == penalty
    # a jump retired last has no successor to delay
    assert run(PERFECT, program[:2]).cycles() == 2 + 4


def test_a_tie_between_a_jump_and_a_data_wait_is_charged_to_the_jump():
    program = [op("mul", reads=(1, 2), writes=(3,)), op("jump", writes=(1,)),
               op("alu", reads=(3,), writes=(4,), pc=0x2000)]
    pipeline = run(PERFECT, program)
    # mul ex 3 (x3 ready 6), jal ex 4; next: jump 4 + 1 + 1 = 6, data 6 -> one extra cycle
    assert pipeline.cycles() == 3 + 4 + 1              # 8
    stalls = pipeline.report()["stalls"]
    assert (stalls["jump"], stalls["data"], stalls["mul_div"]) == (1, 0, 0)


def test_a_branch_without_outcome_is_an_error():
    pipeline = InOrderPipeline(PERFECT)
    with pytest.raises(ValueError, match="branch at 0x40"):
        pipeline.retire(0x40, "branch", (1, 2), (), (), None, None)


def test_unknown_kind_is_a_value_error():
    pipeline = InOrderPipeline(PERFECT)
    with pytest.raises(ValueError, match="'vector'.*alu"):
        pipeline.retire(0, "vector", (), (), (), None, None)


# -- caches -------------------------------------------------------------------------------

SMALL_DCACHE = InOrderParams(dcache_size=1024, dcache_ways=1, dcache_line=32, miss_penalty=20)


def loads(addresses, size=4):
    """Independent loads (x1..x8 written, x10 read) of *addresses*, at pc 0x1000 on."""
    return [op("load", reads=(10,), writes=(1 + i % 8,), accesses=((a, size),)) for i, a in enumerate(addresses)]


def test_dcache_thrashing_stride():
    # direct mapped 1 KiB: 0 and 1024 share set 0, so every access misses
    pipeline = run(SMALL_DCACHE, loads([0, 1024] * 4))
    # 8 loads at 0x1000..0x101c: one I-cache line, 1 miss (20); 8 D-cache misses (8 * 20)
    assert pipeline.cycles() == 8 + 4 + 20 + 8 * 20    # 192
    report = pipeline.report()
    assert report["dcache"]["misses"] == 8 and report["dcache"]["hits"] == 0
    assert report["stalls"]["dcache"] == 160 and report["stalls"]["icache"] == 20
    assert_identity(pipeline)


def test_dcache_stride_within_a_line():
    pipeline = run(SMALL_DCACHE, loads(range(0, 32, 4)))
    assert pipeline.cycles() == 8 + 4 + 20 + 20        # 52: i-miss + the first d-miss, 7 hits
    assert (pipeline.report()["dcache"]["misses"], pipeline.report()["dcache"]["hits"]) == (1, 7)


def test_an_unaligned_access_spanning_two_lines_misses_twice():
    pipeline = run(SMALL_DCACHE, loads([30]))
    assert pipeline.cycles() == 1 + 4 + 20 + 2 * 20    # 65: i-miss, lines 0 and 1
    dcache = pipeline.report()["dcache"]
    assert (dcache["accesses"], dcache["misses"]) == (1, 2)


def test_an_access_leaving_the_last_line_touched_is_not_a_free_hit():
    # the first load makes line 0 the most recent; the second starts in it but ends in line 1
    pipeline = run(SMALL_DCACHE, loads([0, 30]))
    assert pipeline.cycles() == 2 + 4 + 20 + 20 + 20   # 66: i-miss, line 0, line 1
    dcache = pipeline.report()["dcache"]
    assert (dcache["accesses"], dcache["hits"], dcache["misses"]) == (2, 1, 2)


def test_a_missing_load_delays_its_result_too():
    program = [*loads([0]), op("alu", reads=(1,), writes=(2,))]
    pipeline = run(SMALL_DCACHE, program)
    # load ex 23 (i-miss), dstall 20, ready 23 + 2 + 20 = 45; use: base 24 + 20 = 44 -> 45
    assert pipeline.cycles() == 2 + 4 + 20 + 20 + 1    # 47
    stalls = pipeline.report()["stalls"]
    assert (stalls["icache"], stalls["dcache"], stalls["load_use"]) == (20, 20, 1)


def test_stores_miss_and_allocate():
    store = op("store", reads=(1, 2), accesses=((0x400, 4),))
    load = op("load", reads=(3,), writes=(4,), accesses=((0x404, 4),))
    pipeline = run(SMALL_DCACHE, [store, load])
    # write-allocate: the load of the stored line hits
    assert pipeline.cycles() == 2 + 4 + 20 + 20        # 46: i-miss, store's d-miss
    assert pipeline.report()["dcache"]["hits"] == 1


def test_icache_misses_every_eight_instructions():
    params = InOrderParams(icache_line=32)
    program = [op("alu", reads=(1,), writes=(2,)) for _ in range(16)]
    pipeline = run(params, program, start=0x1000)
    # 0x1000..0x103c: lines 0x1000 and 0x1020 each miss once (2 * 20)
    assert pipeline.cycles() == 16 + 4 + 2 * 20        # 60
    report = pipeline.report()
    assert (report["icache"]["misses"], report["icache"]["hits"]) == (2, 14)
    assert report["stalls"]["icache"] == 40
    assert_identity(pipeline)
    # the same 16 again (a second pass of a loop body): all hits, one cycle each
    for pc in range(0x1000, 0x1040, 4):
        pipeline.retire(pc, "alu", (1,), (2,), (), None, None)
    assert pipeline.cycles() == 32 + 4 + 40            # 76


def test_a_fetch_from_the_last_halfword_of_a_line_touches_the_next():
    # compressed code: an instruction at 0x101e is fetched as 4 bytes 0x101e..0x1021
    pipeline = InOrderPipeline(InOrderParams())
    pipeline.retire(0x1018, "alu", (1,), (2,), (), None, None)   # line 0x1000: miss
    pipeline.retire(0x101E, "alu", (1,), (3,), (), None, None)   # 0x1000 hit, 0x1020 miss
    assert pipeline.cycles() == 2 + 4 + 20 + 20                  # 46
    icache = pipeline.report()["icache"]
    assert (icache["accesses"], icache["hits"], icache["misses"]) == (2, 1, 2)


def test_a_jump_to_a_missing_line_pays_both():
    program = [op("jump", writes=(1,), pc=0x1000), op("alu", reads=(1,), writes=(2,), pc=0x2000)]
    pipeline = run(InOrderParams(), program)
    # jal: ex 23 (i-miss); next: 23 + 1 + jump 1 + i-miss 20 = 45; cycles 47
    assert pipeline.cycles() == 2 + 4 + 20 + 1 + 20   # 47
    stalls = pipeline.report()["stalls"]
    assert (stalls["jump"], stalls["icache"]) == (1, 40)


def test_a_fetch_miss_overlaps_the_previous_dcache_stall():
    # the load is the last word of its I-cache line; the next instruction misses too
    program = [op("load", reads=(1,), writes=(2,), accesses=((0, 4),), pc=0x101C),
               op("alu", reads=(3,), writes=(4,))]
    pipeline = run(SMALL_DCACHE, program)
    # load ex 23, dstall 20; next: max(23 + 1 + 20, 23 + 1 + 0 + 20) = 44, cycles 46
    assert pipeline.cycles() == 2 + 4 + 20 + 20        # 46: the second i-miss is hidden
    stalls = pipeline.report()["stalls"]
    assert (stalls["icache"], stalls["dcache"]) == (20, 20)
    assert pipeline.report()["icache"]["misses"] == 2


def test_a_redirect_is_charged_only_beyond_the_overlapping_dcache_stall():
    # no RISC-V instruction both accesses data and redirects, but whatever the glue passes,
    # the part of a redirect hidden under the previous MEM stall is not charged again
    params = InOrderParams(dcache_size=1024, dcache_ways=1, miss_penalty=20, jalr_penalty=25)
    program = [op("jalr", reads=(1,), writes=(2,), accesses=((0, 4),)), op("alu", reads=(3,), writes=(4,))]
    pipeline = run(params, program)
    # jalr ex 23 (i-miss), dstall 20; next (same line, hit): max(24 + 20, 24 + 25) = 49
    assert pipeline.cycles() == 2 + 4 + 20 + 20 + 5    # 51
    stalls = pipeline.report()["stalls"]
    assert (stalls["jump"], stalls["icache"], stalls["dcache"]) == (5, 20, 20)


def test_perfect_memory_reports_no_caches():
    report = run(PERFECT, loads([0, 1024])).report()
    assert report["icache"] is None and report["dcache"] is None
    assert report["cycles"] == 2 + 4                   # 6
    assert set(report["stalls"]) == {"data", "load_use", "mul_div", "branch", "jump", "icache", "dcache"}


# -- parameters ---------------------------------------------------------------------------

@pytest.mark.parametrize(("changes", "name"), [
    ({"load_use": -1}, "load_use"),
    ({"mul_latency": 0}, "mul_latency"),
    ({"div_latency": "34"}, "div_latency"),
    ({"branch_penalty": -2}, "branch_penalty"),
    ({"jalr_penalty": 1.5}, "jalr_penalty"),
    ({"predictor": "gshare"}, "predictor"),
    ({"bht_entries": 100}, "bht_entries"),
    ({"icache_line": 24}, "icache_line"),
    ({"dcache_ways": 0}, "dcache_ways"),
    ({"icache_size": 64, "icache_ways": 2, "icache_line": 64}, "icache_size"),
    ({"dcache_size": 32, "dcache_line": 32}, "dcache_size"),
    ({"miss_penalty": -1}, "miss_penalty"),
    ({"caches": 1}, "caches"),
])
def test_parameter_errors_are_one_line_naming_the_parameter(changes, name):
    with pytest.raises(ValueError) as error:
        InOrderParams(**changes)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(name)


def test_predictor_error_lists_the_choices():
    with pytest.raises(ValueError, match="not-taken, btfn, bimodal"):
        InOrderParams(predictor="tage")


def test_fields_lists_every_parameter_with_default_and_doc():
    fields = InOrderParams.fields()
    assert [name for name, _, _ in fields] == [field.name for field in attrs.fields(InOrderParams)]
    assert set(PARAM_DOCS) == {name for name, _, _ in fields}
    defaults = InOrderParams()
    for name, default, doc in fields:
        assert getattr(defaults, name) == default
        assert doc and "\n" not in doc
    assert ("miss_penalty", 20, PARAM_DOCS["miss_penalty"]) in fields


# -- random mixes: the stall identity and an independent reference --------------------

KINDS = ("alu", "mul", "div", "load", "store", "amo", "branch", "jump", "jalr", "csr", "system")


def random_program(seed, count=500):
    """*count* instructions of random kinds, registers, addresses and branch outcomes."""
    rng = random.Random(seed)
    program, pc = [], 0x1000
    for _ in range(count):
        kind = rng.choice(KINDS)
        reads = tuple(rng.randrange(32) for _ in range(rng.randrange(3)))
        writes = () if kind in ("store", "branch", "system") else (rng.randrange(32),)
        accesses, taken, target, next_pc = (), None, None, pc + 4
        if kind in ("load", "store"):
            accesses = ((rng.randrange(0, 8192), rng.choice((1, 2, 4, 8))),)
        elif kind == "amo":
            word = rng.randrange(0, 8192, 4)
            accesses = ((word, 4), (word, 4))
        elif kind == "branch":
            taken, target = rng.random() < 0.6, pc + rng.randrange(-64, 64, 4)
            next_pc = target if taken else pc + 4
        elif kind in ("jump", "jalr"):
            next_pc = rng.randrange(0x1000, 0x1800, 4)
        program.append(op(kind, reads, writes, accesses, taken, target, pc=pc))
        pc = next_pc
    return program


def reference_cycles(params, program):
    """The timing rules written out the slow, obvious way (max over all, not the last).

    Returns the cycles and the two caches (None without caches), every access made
    through ``Cache.access`` (the pipeline counts hits in the line touched last itself).
    """
    icache = dcache = None
    if params.caches:
        icache = Cache("i", params.icache_size, params.icache_ways, params.icache_line, params.miss_penalty)
        dcache = Cache("d", params.dcache_size, params.dcache_ways, params.dcache_line, params.miss_penalty)
    predictor = make_predictor(params.predictor, params.bht_entries)
    latency = {"mul": params.mul_latency, "div": params.div_latency,
               "load": 1 + params.load_use, "amo": 1 + params.load_use}
    ready: dict[int, int] = {}
    previous_ex, previous_redirect, previous_dstall, end = 2, 0, 0, 0
    for ins in program:
        fetch = icache.access(ins["pc"], 4) if icache else 0
        candidates = [previous_ex + 1 + previous_redirect + fetch, previous_ex + 1 + previous_dstall]
        candidates += [ready.get(r, 0) for r in ins["reads"] if r != 0]
        ex = max(candidates)
        dstall = sum(dcache.access(a, s) for a, s in ins["accesses"]) if dcache else 0
        for r in ins["writes"]:
            ready[r] = ex + latency.get(ins["kind"], 1) + dstall
        redirect = {"jump": params.jump_penalty, "jalr": params.jalr_penalty}.get(ins["kind"], 0)
        if ins["kind"] == "branch":
            if predictor.predict(ins["pc"], ins["target"]) != ins["taken"]:
                redirect = params.branch_penalty
            predictor.update(ins["pc"], ins["taken"])
        end = max(end, ex + 2 + dstall)
        previous_ex, previous_redirect, previous_dstall = ex, redirect, dstall
    return end, icache, dcache


@pytest.mark.parametrize("params", [
    InOrderParams(),
    InOrderParams(caches=False),
    InOrderParams(predictor="not-taken", load_use=2, mul_latency=4, div_latency=10,
                  icache_size=256, icache_ways=1, dcache_size=512, dcache_ways=4, dcache_line=16),
    InOrderParams(predictor="btfn", branch_penalty=0, jump_penalty=0, jalr_penalty=0, miss_penalty=0),
    InOrderParams(bht_entries=4, miss_penalty=7, dcache_size=1024, dcache_ways=1),
], ids=["defaults", "perfect", "small", "free", "tiny-bht"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_mix_stall_identity_and_reference(params, seed):
    program = random_program(seed)
    pipeline = InOrderPipeline(params)
    for count, ins in enumerate(program, start=1):
        pipeline.retire(ins["pc"], ins["kind"], ins["reads"], ins["writes"], ins["accesses"],
                        ins["taken"], ins["target"])
        if count % 50 == 0:                            # the identity holds at any point
            assert_identity(pipeline)
    assert_identity(pipeline)
    assert pipeline.cycles() >= len(program) + 4
    cycles, icache, dcache = reference_cycles(params, program)
    assert pipeline.cycles() == cycles
    report = pipeline.report()
    for name, cache in (("icache", icache), ("dcache", dcache)):
        if cache is None:
            assert report[name] is None
        else:
            assert {**report[name], "name": "-"} == {**cache.stats(), "name": "-"}
    assert report["predictor"]["predictions"] == sum(ins["kind"] == "branch" for ins in program)


# -- predictors ---------------------------------------------------------------------------

def test_bimodal_counters_saturate_and_start_weakly_not_taken():
    predictor = Bimodal(16)
    assert predictor.predict(0x40, 0) is False             # counter 1
    predictor.update(0x40, True)                           # 2
    assert predictor.predict(0x40, 0) is True
    for _ in range(5):
        predictor.update(0x40, True)                       # saturates at 3
    predictor.update(0x40, False)                          # 2: one anomaly does not flip it
    assert predictor.predict(0x40, 0) is True
    predictor.update(0x40, False)                          # 1
    assert predictor.predict(0x40, 0) is False
    for _ in range(5):
        predictor.update(0x40, False)                      # saturates at 0
    predictor.update(0x40, True)                           # 1
    assert predictor.predict(0x40, 0) is False


def test_bimodal_index_is_the_word_number_modulo_entries():
    predictor = Bimodal(16)
    predictor.update(0x40, True)                           # entry (0x40 >> 2) % 16 = 0
    assert predictor.predict(0x40 + 16 * 4, 0) is True     # aliases entry 0
    assert predictor.predict(0x44, 0) is False             # entry 1 untouched


def test_static_predictors():
    assert StaticNotTaken().predict(0x100, 0x80) is False
    btfn = StaticBTFN()
    assert btfn.predict(0x100, 0x80) is True               # backward
    assert btfn.predict(0x100, 0x100) is True              # a branch to itself is a loop
    assert btfn.predict(0x100, 0x104) is False             # forward


def test_make_predictor():
    assert isinstance(make_predictor("bimodal", 8), Bimodal)
    assert isinstance(make_predictor("btfn", 8), StaticBTFN)
    assert make_predictor("not-taken", 8).stats() == {"name": "not-taken", "predictions": 0,
                                                     "mispredictions": 0, "accuracy": 1.0}
    with pytest.raises(ValueError, match="not-taken, btfn, bimodal"):
        make_predictor("perceptron", 8)
    with pytest.raises(ValueError, match="entries.*12"):
        make_predictor("bimodal", 12)
