"""``tessera bench``'s ``llk-matmul`` workload (tessera_tensix.bench_llk): the ``spin`` program runs
everywhere and its result check bites; the ``kernel`` variant is skipped with a note where it cannot
build, and where it can: it runs, its numbers add up, and its result check bites.

The workload runs at a tiny scale (one kernel run a sample, 150 iterations of the loop);
nothing here looks at how fast anything was, only at how the entry is built: every run
checked, the instruction counts the same every run, each ratio computed from the numbers
reported beside it, the per-agent times adding up to the wall time.  The tests that build
need what ``tessera tensix build`` needs (marked ``llk_build``, skipped without it).  Runs on
the engine the environment selects (run the file again with TESSERA_ENGINE=step).
"""

from __future__ import annotations

import numpy as np
import pytest
from tensix_llk_support import require_llk

from tessera.bench.model import Context, Skip
from tessera.bench.registry import offered_workloads
from tessera.bench.runner import run_bench
from tessera.plugins import PluginHost
from tessera_tensix import bench_spin
from tessera_tensix.bench_llk import AGENTS, RISCV, LlkMatmul, RunTimes, built_kernel

TINY = {"repeat": 1, "scale": 0.0005}


@pytest.fixture(scope="module")
def host():
    return PluginHost()


def _entry(report):
    return report["workloads"]["llk-matmul"]


def _target(report):
    return next(t for t in report["targets"] if t["name"] == "llk-matmul-riscv")


def _check_spin(entry, report):
    """The spin variants' numbers, and the target, as they must follow from the samples."""
    v, size, derived = entry["variants"], entry["size"], entry["derived"]
    spin, unparked, rv32 = v["spin"], v["spin-unparked"], v["rv32"]
    assert size["spin_iterations"] == spin["iterations"] == 150 == size["rv32_iterations"]
    assert unparked["iterations"] == size["spin_unparked_iterations"] == 15
    assert (spin["park_polls"], unparked["park_polls"]) == (True, False)
    assert spin["engine"] == unparked["engine"] == rv32["engine"] == size["engine"]
    for sample, n in ((spin, 150), (unparked, 15)):
        # the count is TRISC0's instret: three an iteration and the release around the loop
        assert sample["count"] == sample["instructions_by_core"]["trisc0"] and 3 * n < sample["count"] < 3 * n + 40
        assert set(sample["instructions_by_core"]) == set(RISCV)
    polled = {c: n for c, n in spin["instructions_by_core"].items() if c != "trisc0"}
    assert all(n > 0 for n in polled.values())
    assert derived["rv32_per_second"] == rv32["rate"]
    assert derived["spin_per_second"] == spin["rate"] == spin["count"] / spin["seconds"]
    assert derived["spin_over_rv32"] == spin["rate"] / rv32["rate"]
    assert derived["spin_unparked_over_rv32"] == unparked["rate"] / rv32["rate"]
    target = _target(report)
    assert target["value"] == derived["spin_over_rv32"] and target["met"] == (target["value"] >= 0.5)


def test_without_the_compiler_the_kernel_is_skipped_with_a_note_and_spin_still_runs(host, monkeypatch):
    from tessera_tensix.llk import toolchain

    monkeypatch.setattr(toolchain, "available", lambda: False)
    report = run_bench(host, only=["llk-matmul", "rv32"], **TINY)
    entry = _entry(report)
    assert report["ok"] and entry["status"] == "ok", entry["error"]
    note = entry["skipped_variants"]["kernel"]
    assert "riscv64-unknown-elf-g++" in note and "apt-get install" in note and entry["size"]["kernel_note"] == note
    assert set(entry["variants"]) == {"spin", "spin-unparked", "rv32"}
    assert entry["check"]["passed"] and entry["check"]["samples_checked"] == 3
    assert "ms_per_run" not in entry["derived"] and entry["size"]["riscv_instructions_per_run"] is None
    _check_spin(entry, report)


def test_without_the_llk_cache_the_kernel_is_skipped_with_a_note(host, monkeypatch):
    from tessera_tensix.llk import toolchain, wheel

    monkeypatch.setattr(toolchain, "available", lambda: True)
    monkeypatch.setattr(wheel, "cached", lambda: False)
    report = run_bench(host, only=["llk-matmul"], **TINY)
    entry = _entry(report)
    assert report["ok"] and entry["status"] == "ok"
    assert "tessera tensix fetch" in entry["skipped_variants"]["kernel"]


def test_spin_parks_the_waiters_and_unparked_runs_every_poll(host, monkeypatch):
    from tessera_tensix.llk import toolchain

    monkeypatch.setattr(toolchain, "available", lambda: False)
    report = run_bench(host, only=["llk-matmul"], repeat=1, scale=0.02)      # 6,000 iterations
    v = _entry(report)["variants"]
    parked, unparked = v["spin"]["instructions_by_core"], v["spin-unparked"]["instructions_by_core"]
    assert v["spin"]["iterations"] == 6000 and v["spin-unparked"]["iterations"] == 600
    # parked waiters stop after a probe (a few hundred instructions); unparked ones poll the whole run
    assert all(parked[c] < 2000 for c in ("brisc", "trisc1", "trisc2"))
    assert all(unparked[c] > 1000 for c in ("brisc", "trisc1", "trisc2"))


@pytest.mark.parametrize(("corrupt", "message"), [
    (lambda m: m.space.write_bytes(bench_spin.FLAG, (3).to_bytes(4, "little")),
     "wrong exit codes: brisc 3 (expected 7)"),
    (lambda m: m.space.write_bytes(0x6000, (0x06400793).to_bytes(4, "little")),   # li a5, 100: not N = 150
     "TRISC0's sum at 0x20004 is 0x13ba, expected 0x2c3d"),
])
def test_a_wrong_spin_result_fails_the_workload(host, monkeypatch, corrupt, message):
    from tessera_tensix.llk import toolchain

    monkeypatch.setattr(toolchain, "available", lambda: False)
    real = bench_spin.SpinProgram.machine
    made = []

    def corrupted(self, *, park_polls):
        machine = real(self, park_polls=park_polls)
        made.append(machine)
        if len(made) > 2:        # the warm-up runs in prepare are right; the first sample's is not
            corrupt(machine)
        return machine

    monkeypatch.setattr(bench_spin.SpinProgram, "machine", corrupted)
    report = run_bench(host, only=["llk-matmul"], **TINY)
    entry = _entry(report)
    assert not report["ok"] and entry["status"] == "failed"
    assert entry["error"].startswith(f"spin: {message}")
    assert report["failures"] == [f"llk-matmul: {entry['error']}"]


@pytest.mark.llk_build
def test_the_workload_runs_checks_every_run_and_its_numbers_add_up(host):
    require_llk()
    report = run_bench(host, only=["llk-matmul"], **TINY)
    entry = _entry(report)
    assert report["ok"] and entry["status"] == "ok", entry["error"]
    v, size, derived = entry["variants"], entry["size"], entry["derived"]
    assert set(v) == {"spin", "spin-unparked", "rv32", "kernel"} and entry["skipped_variants"] == {}
    assert size["kernel_note"] is None
    kernel, rv32 = v["kernel"], v["rv32"]
    runs = kernel["runs"]
    assert runs == size["runs_per_sample"] == 1
    assert rv32["engine"] == size["engine"] and size["rv32_iterations"] == 150
    # every run does the same work: the counts are each run's own instret, summed
    assert size["riscv_instructions_per_run"] > 1000 and kernel["count"] == runs * size["riscv_instructions_per_run"]
    assert kernel["tensix_instructions"] == runs * size["tensix_instructions_per_run"] > 0
    assert size["tensix_backend_instructions_per_run"] > size["tensix_instructions_per_run"]   # MOP expansions
    check = entry["check"]
    assert check["passed"] and check["samples_checked"] == 4 and "A @ B" in check["what"]
    assert derived["ms_per_run"] == 1e3 * kernel["seconds"] / runs
    assert derived["riscv_per_second"] == kernel["rate"] == kernel["count"] / kernel["seconds"]
    by_agent = kernel["seconds_by_agent"]
    assert set(by_agent) == set(derived["ms_per_run_by_agent"]) == {*AGENTS, "other"}
    assert all(by_agent[name] > 0 for name in (*RISCV, "t0", "t1", "t2"))
    assert sum(derived["share_by_agent"].values()) == pytest.approx(1.0)
    own = kernel["count"] / sum(by_agent[name] for name in RISCV)
    assert derived["riscv_per_second_own"] == pytest.approx(own)
    assert derived["riscv_per_second_own"] > derived["riscv_per_second"]      # the cores' slices < the run
    assert 0 < derived["riscv_decode_ms_per_run"] and derived["riscv_decoded_per_run"] > 100
    assert derived["rv32_per_second"] == rv32["rate"]
    assert derived["riscv_over_rv32"] == derived["riscv_per_second_own"] / rv32["rate"]
    assert derived["warm_over_rv32"] == derived["riscv_per_second_warm"] / rv32["rate"] > derived["riscv_over_rv32"]
    _check_spin(entry, report)        # the target reads spin, not the kernel


@pytest.mark.llk_build
def test_a_wrong_result_fails_the_workload_naming_the_element(host, monkeypatch):
    require_llk()
    real = LlkMatmul.machine
    made = []

    def corrupted(self):
        machine = real(self)
        made.append(machine)
        if len(made) > 1:        # the warm-up run in prepare is right; the first sample's is not
            a = next(t for t in machine.ext["tensix_kernel"].inputs if t.name == "A")
            machine.ext["tensix"].l1.write(a.address, np.array([0x40, 0x40], dtype=np.uint8))   # A[0][0] = 3.0
        return machine

    monkeypatch.setattr(LlkMatmul, "machine", corrupted)
    report = run_bench(host, only=["llk-matmul"], **TINY)
    entry = _entry(report)
    assert not report["ok"] and entry["status"] == "failed"
    assert entry["error"].startswith("kernel: wrong result: output res at 0x")
    assert "(tile 0, face 0, row 0, column" in entry["error"]          # row 0 of C is what A[0][0] feeds
    assert report["failures"] == [f"llk-matmul: {entry['error']}"]


@pytest.mark.llk_build
def test_the_timers_are_on_the_bench_machine_only_and_rv32_missing_is_a_note(host):
    require_llk()
    workload = LlkMatmul()
    offered = {name: cls for name, cls in offered_workloads(host).items() if name != "rv32"}
    variants = workload.prepare(Context(host, 0.0005, False, offered))
    directory, built = built_kernel()                     # the build prepare made or found: reused
    assert not built and str(directory) == workload.size["build"]
    timed, plain = workload.machine(), workload.machine()
    classes = {cls: cls.run_slice for a in timed.agents for cls in type(a).__mro__ if "run_slice" in vars(cls)}
    RunTimes(timed)
    assert all("run_slice" in vars(a) for a in timed.agents)           # each agent of this machine timed
    assert not any("run_slice" in vars(a) for a in plain.agents)       # another machine: the normal path
    assert classes == {cls: cls.run_slice for cls in classes}          # no class was changed
    rv32 = next(v for v in variants if v.name == "rv32")
    with pytest.raises(Skip, match="'rv32'"):
        rv32.run()
