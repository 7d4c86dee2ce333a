"""``tile-harts``: the sum loop on 16 harts of the tile machine (and on one), both engines.

Tiny sizes (conftest.py); nothing here asserts a speed.  What is checked: every hart
stored its own sum (a program whose harts do not tell themselves apart fails), the
machines have the harts the variants name, the instruction counts are the program's,
and the ratios come from the reported rates.
"""

from __future__ import annotations

import tessera_tile.bench as tile_bench
from tessera.bench.model import Context
from tessera.plugins import PluginHost

VARIANTS = ["fast-16h", "step-16h", "fast-1h", "step-1h"]
#: per hart besides the loop: csrr, li, sub, li; la (2), slli, add, sd, li, li, ecall
#: (the tiny sizes' counts fit one ``li`` instruction)
OVERHEAD = 12


def test_sixteen_harts_and_one_run_on_both_engines_with_every_hart_checked(bench):
    run = bench("--json", "--only", "tile-harts")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["tile-harts"]
    assert entry["status"] == "ok" and entry["check"]["passed"]
    assert list(entry["variants"]) == VARIANTS
    n = entry["size"]["iterations"]
    per = entry["size"]["iterations_per_hart"]
    assert per == {"16h": n, "1h": 16 * n}                     # the same total work
    expected = entry["check"]["expected"]
    assert expected["16h"] == [(n - g) * (n - g + 1) // 2 for g in range(16)]
    assert expected["1h"] == [16 * n * (16 * n + 1) // 2]
    for name, v in entry["variants"].items():
        engine, harts = name.split("-")
        k = int(harts[:-1])
        assert (v["engine"], v["harts"]) == (engine, k)
        assert v["count"] == sum(3 * (per[harts] - g) + OVERHEAD for g in range(k)), name
        assert v["rate"] == v["count"] / v["seconds"], name
    rate = {name: v["rate"] for name, v in entry["variants"].items()}
    assert entry["derived"] == {
        "over_one_hart": {"fast-16h": rate["fast-16h"] / rate["fast-1h"],
                          "step-16h": rate["step-16h"] / rate["step-1h"]},
        "fast_over_step": {"16h": rate["fast-16h"] / rate["step-16h"],
                           "1h": rate["fast-1h"] / rate["step-1h"]}}


def test_the_variants_machines_have_the_harts_they_name():
    from tessera.machine import Machine

    workload = tile_bench.TileHarts()
    workload.prepare(Context(PluginHost(), scale=0.0005))
    for harts, config in tile_bench.HARTS.items():
        machine = Machine(workload.arch, host=workload.host, config=dict(config))
        assert [cpu.name for cpu in machine.cpus] == [f"hart{g}" for g in range(harts)]


def test_harts_that_do_not_tell_themselves_apart_fail(bench, monkeypatch):
    """Every hart storing into slot 0 leaves results[1] empty: a failure, not a rate."""
    real = tile_bench.hart_source
    monkeypatch.setattr(tile_bench, "hart_source",
                        lambda n, harts: real(n, harts).replace("csrr    t0, mhartid", "li      t0, 0"))
    run = bench("--json", "--only", "tile-harts")
    assert run.code == 1
    entry = run.report["workloads"]["tile-harts"]
    assert entry["status"] == "failed"
    assert "fast-16h: wrong result: results[1] is 0x0" in entry["error"]


def test_quick_keeps_enough_work_per_hart_for_the_steady_state():
    workload = tile_bench.TileHarts()
    workload.prepare(Context(PluginHost(), scale=0.1, quick=True))
    assert workload.size["iterations_per_hart"] == {"16h": 5_000, "1h": 80_000}
