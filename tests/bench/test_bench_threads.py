"""``phoenix-threads``: rfPhoenix's sum loop on 1, 2 and 4 hardware threads, both engines.

Tiny sizes (conftest.py); nothing here asserts a speed.  What is checked: every
variant ran every thread to its own sum (a program whose threads do not tell
themselves apart fails), the instruction counts are the program's, and the ratios
and the target come from the reported rates.
"""

from __future__ import annotations

import tessera_phoenix.bench as phoenix_bench
from tessera.bench.model import Context
from tessera.plugins import PluginHost

VARIANTS = ["fast-1t", "fast-2t", "fast-4t", "step-1t", "step-2t", "step-4t"]


def instructions(per_thread: int, threads: int) -> int:
    """Thread t: csrrd, ldi, sub, ldi, 3 per iteration of ``per_thread - t``, the halting bra."""
    return sum(4 + 3 * (per_thread - t) + 1 for t in range(threads))


def test_every_thread_count_runs_on_both_engines_with_every_thread_checked(bench):
    run = bench("--json", "--only", "phoenix-threads")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["phoenix-threads"]
    assert entry["status"] == "ok" and entry["check"]["passed"]
    assert list(entry["variants"]) == VARIANTS
    n = entry["size"]["iterations"]
    per = entry["size"]["iterations_per_thread"]
    assert per == {"1t": 4 * n, "2t": 2 * n, "4t": n}          # the same total work
    expected = entry["check"]["expected"]
    assert expected["4t"] == [(n - t) * (n - t + 1) // 2 for t in range(4)]
    assert expected["1t"] == [4 * n * (4 * n + 1) // 2]
    for name, v in entry["variants"].items():
        engine, threads = name.split("-")
        k = int(threads[:-1])
        assert (v["engine"], v["threads"]) == (engine, k)
        assert v["count"] == instructions(per[threads], k), name
        assert v["rate"] == v["count"] / v["seconds"], name


def test_the_ratios_and_the_target_come_from_the_rates(bench):
    report = bench("--json", "--only", "phoenix-threads").report
    entry = report["workloads"]["phoenix-threads"]
    rate = {name: v["rate"] for name, v in entry["variants"].items()}
    assert entry["derived"]["over_one_thread"] == {
        f"{e}-{k}t": rate[f"{e}-{k}t"] / rate[f"{e}-1t"] for e in ("fast", "step") for k in (2, 4)}
    assert entry["derived"]["fast_over_step"] == {
        f"{k}t": rate[f"fast-{k}t"] / rate[f"step-{k}t"] for k in (1, 2, 4)}
    assert entry["vs_riscemu"] is None                         # not a scalar workload
    target = {t["name"]: t for t in report["targets"]}["phoenix-threads"]
    value = entry["derived"]["over_one_thread"]["fast-4t"]
    assert target["value"] == value and target["limit"] == 0.8
    assert target["met"] == (value >= 0.8)


def test_threads_that_do_not_tell_themselves_apart_fail(bench, monkeypatch):
    """Every thread counting from the same number leaves t1's sum wrong: a failure, not a rate."""
    real = phoenix_bench.threads_source
    monkeypatch.setattr(phoenix_bench, "threads_source",
                        lambda n: real(n).replace("csrrd   r3, r0, hartid", "ldi     r3, 0"))
    run = bench("--json", "--only", "phoenix-threads")
    assert run.code == 1
    entry = run.report["workloads"]["phoenix-threads"]
    assert entry["status"] == "failed"
    assert "fast-2t: wrong result: t1 r2 is" in entry["error"]


def test_quick_keeps_enough_work_per_thread_for_the_steady_state():
    workload = phoenix_bench.PhoenixThreads()
    workload.prepare(Context(PluginHost(), scale=0.1, quick=True))
    assert workload.size["iterations"] == 5_000
    assert workload.size["iterations_per_thread"] == {"1t": 20_000, "2t": 10_000, "4t": 5_000}
