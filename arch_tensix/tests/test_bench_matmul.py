"""``tessera bench``'s ``matmul`` workload (tessera_tensix.bench_matmul): it runs, and its checks bite.

The workload runs in quick mode (one round); nothing here looks at a time or a rate,
only at how the entry is built (every sample checked, ratios computed from the reported
rates) and at the result checks failing on a corrupted result: a wrong input in L1, a
wrong SrcA cell under the MVMUL stream, a wrong packed tile.  The wolfpine variant is
exercised when wolfpine is installed (``pip install wolfpine``); otherwise it must be
skipped with a note that says how to install it.  Runs on the engine the environment
selects (run the file again with TESSERA_ENGINE=step).
"""

from __future__ import annotations

import numpy as np
import pytest

from tessera.bench.model import BenchFailure
from tessera.bench.runner import run_bench
from tessera.plugins import PluginHost
from tessera_tensix import bench_matmul_kernel as kernel
from tessera_tensix.bench_matmul_kernel import MvmulStream, TileProgram
from tessera_tensix.bench_wolfpine import WolfpineTile, wolfpine_version


@pytest.fixture(scope="module")
def host():
    return PluginHost()


@pytest.fixture(scope="module")
def arch(host):
    return host.architecture("tensix")


@pytest.fixture(scope="module")
def program(arch):
    return TileProgram(arch)


def _bench_host():
    from tessera.bench.hosts import architecture_plugin, minimal_host

    _arch, name, plugin = architecture_plugin(PluginHost(), "tensix", "tessera-tensix")
    return minimal_host((plugin, name))


def test_the_workload_runs_every_variant_and_checks_each_sample(host):
    report = run_bench(host, only=["matmul"], repeat=1, quick=True)
    entry = report["workloads"]["matmul"]
    assert report["ok"] and entry["status"] == "ok", entry["error"]
    assert {"tile", "mvmul", "numpy-floor"} <= set(entry["variants"])
    assert entry["size"]["tile_mvmuls"] == 64                      # 4 fidelity phases x 16
    assert entry["size"]["tile_instructions"] > 64
    v = entry["variants"]
    assert v["tile"]["count"] == v["tile"]["tiles"] * entry["size"]["tile_instructions"]
    assert v["mvmul"]["count"] == v["numpy-floor"]["count"] == entry["size"]["mvmuls_per_run"] * entry["size"][
        "runs_per_sample"]
    check = entry["check"]
    assert check["passed"] and check["samples_checked"] >= 3 * len(entry["variants"])
    derived = entry["derived"]
    for name, variant in v.items():
        assert variant["rate"] == variant["count"] / variant["seconds"]
        assert derived["ns_per_instruction"][name] == 1e9 / variant["rate"]
    assert derived["mvmul_over_floor"] == derived["ns_per_instruction"]["mvmul"] / derived[
        "ns_per_instruction"]["numpy-floor"]
    assert derived["ms_per_tile"]["tile"] == 1e3 * v["tile"]["seconds"] / v["tile"]["tiles"]
    targets = {t["name"]: t for t in report["targets"]}
    assert targets["matmul-mvmul"]["value"] == derived["mvmul_over_floor"]
    if "wolfpine-tile" in v:
        assert derived["wolfpine_over_tessera"] == v["tile"]["rate"] / v["wolfpine-tile"]["rate"]
        assert targets["matmul-wolfpine"]["value"] == derived["wolfpine_over_tessera"]
    else:                           # not installed (or cannot run the kernel): a note says why
        note = entry["skipped_variants"]["wolfpine-tile"]
        assert "wolfpine" in note and note == entry["size"]["wolfpine"]
        assert derived["wolfpine_over_tessera"] is None and targets["matmul-wolfpine"]["met"] is None


def test_the_tile_check_fails_on_a_corrupted_input(program):
    machine = program.machine(_bench_host())
    a = program.a_bits.copy()
    a[5] ^= 0x0080                                                 # one BF16 input changes
    machine.ext["tensix"].l1.write(program.in_a, a.tobytes())
    with pytest.raises(BenchFailure, match="wrong result: Tessera's C"):
        program.run(machine)
    assert program.run(program.machine(_bench_host())) > 0           # the same run, uncorrupted


def test_the_tile_check_compares_every_value_with_numpy(program):
    good = kernel.to_tile(program.want).reshape(-1)
    program.check(good, "test")
    bad = good.copy()
    bad[1023] += 1.0
    with pytest.raises(BenchFailure, match=r"C\[31\]\[31\] = .* \(1 of 1024 values differ\)"):
        program.check(bad, "test")


def test_a_corrupted_operand_fails_the_mvmul_stream(arch, program):
    a, b = program.b[:16, :16], program.a[:8, :16]
    stream = MvmulStream(arch, _bench_host(), 16, a, b)
    seconds, count = stream.run()
    assert count == 16 and seconds > 0
    core = stream.mode.machine.ext["tensix"]
    k, j = (int(i) for i in np.argwhere(a != 0)[0])
    core.srca.rows[0, k, j] ^= 1 << 16                               # a BF16 mantissa bit of one SrcA cell
    with pytest.raises(BenchFailure, match="wrong result: after 16 MVMULs"):
        stream.run()


def test_a_wrong_tile_fails_the_workload_and_the_command(host, monkeypatch):
    real = TileProgram.machine

    def corrupted(self, bench_host):
        machine = real(self, bench_host)
        machine.ext["tensix"].l1.write(self.in_b, np.zeros(16, dtype="<u2").tobytes())
        return machine

    monkeypatch.setattr(TileProgram, "machine", corrupted)
    report = run_bench(host, only=["matmul"], repeat=1, quick=True)
    entry = report["workloads"]["matmul"]
    assert not report["ok"] and entry["status"] == "failed"
    assert "wrong result" in entry["error"] and report["failures"] == [f"matmul: {entry['error']}"]


@pytest.mark.skipif(wolfpine_version() is None, reason="wolfpine is not installed (pip install wolfpine)")
def test_wolfpine_runs_the_same_kernel_words_and_its_check_bites(arch):
    program = TileProgram(arch)
    peer = WolfpineTile(program)
    assert peer.run() > 0 and peer.cycles > 0
    program.a_bits = program.a_bits.copy()
    program.a_bits[0] ^= 0x0080
    with pytest.raises(BenchFailure, match="wrong result: wolfpine's C"):
        peer.run()
