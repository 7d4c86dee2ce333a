"""The faults plugin's ``tessera bench`` workloads: offered, run, checked, their ratios reported.

Each workload runs through the ``tessera bench`` command in this process at the bench
tests' tiny size (``--quick --scale 0.0005 --repeat 1``: a checksum program of about
11,600 instructions, four faults).  Nothing here looks at a speed: only that every
variant produced a checked sample, that the derived ratios are the ones the reported
rates give, that the targets read them, and that a wrong result fails the workload.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import Any

import pytest

import tessera_faults.bench
import tessera_riscv.plugin
from tessera.bench.registry import offered_workloads
from tessera.loaders import load_program
from tessera.machine import Machine
from tessera.plugins import PluginHost, set_default_host

TINY = ("--quick", "--scale", "0.0005", "--repeat", "1")
NAMES = ("faults-fastforward", "faults-scaling", "faults-armed")
HAVE_DASK = importlib.util.find_spec("distributed") is not None


@pytest.fixture
def bench(tessera_cli):
    """``bench(NAME) -> (exit status, report, stderr)``: ``tessera bench --json --only NAME`` at tiny size."""

    def run(name: str) -> tuple[int, dict[str, Any], str]:
        code, out, err = tessera_cli("bench", "--json", "--only", name, *TINY)
        return code, (json.loads(out) if out.strip() else {}), err

    yield run
    set_default_host(None)   # the command made its host the process's: forget it


def entry_of(report: dict[str, Any], name: str) -> dict[str, Any]:
    entry = report["workloads"][name]
    assert entry["status"] == "ok", entry["error"] or entry["note"]
    assert entry["check"]["passed"] and entry["check"]["samples_checked"] >= len(entry["variants"])
    for vname, v in entry["variants"].items():
        assert v["count"] > 0 and v["seconds"] > 0 and v["rate"] == v["count"] / v["seconds"], vname
    return entry


def targets_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in report["targets"]}


def test_the_plugin_offers_its_workloads_and_a_disabled_plugin_none():
    offered = list(offered_workloads(PluginHost()))
    assert [n for n in offered if n.startswith("faults-")] == list(NAMES)
    assert offered.index("faults-armed") < offered.index("startup")
    assert not any(n.startswith("faults-") for n in offered_workloads(PluginHost(disabled=["faults"])))


def test_the_program_computes_the_checksum_the_bench_expects(tmp_path):
    """The Python model of the loop and the program agree on a tiny run (the workloads'
    golden check rests on it)."""
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(tessera_riscv.plugin, "riscv")
    machine = Machine(host.architecture("rv32im"), host=host, config={"ram": 1 << 20, "echo": False})
    load_program(machine, str(tessera_faults.bench.write_program(tmp_path, 3)), fmt="asm")
    result = machine.run(max_steps=10_000)
    want = tessera_faults.bench.expected_checksum(3)
    assert machine.space.read(machine.symbol("result"), 4) == want
    assert result.exit_code == want & 0x7F and result.steps == tessera_faults.bench.golden_steps(3)


def test_fastforward_measures_both_campaigns_on_the_same_faults(bench):
    code, report, err = bench("faults-fastforward")
    assert code == 0, err
    entry = entry_of(report, "faults-fastforward")
    v = entry["variants"]
    assert list(v) == ["fast-forward", "from-start", "naive"]
    assert v["fast-forward"]["count"] == v["from-start"]["count"] == v["naive"]["count"] == entry["size"]["faults"] >= 4
    assert v["fast-forward"]["outcomes"] == v["from-start"]["outcomes"] == v["naive"]["outcomes"]
    assert v["from-start"]["mean_from_step"] == v["naive"]["mean_from_step"] == 0 < v["fast-forward"]["mean_from_step"]
    assert v["naive"]["converged"] == 0                       # converge = false: every run to its end
    derived = entry["derived"]
    assert derived["fastforward_speedup"] == v["fast-forward"]["rate"] / v["from-start"]["rate"]
    assert derived["executed_ratio"] == v["from-start"]["instructions_run"] / v["fast-forward"]["instructions_run"]
    assert derived["executed_ratio"] > 1          # restoring a snapshot skipped instructions
    assert derived["naive_speedup"] == v["fast-forward"]["rate"] / v["naive"]["rate"]
    assert targets_of(report)["faults-fastforward"]["value"] == derived["fastforward_speedup"]


@pytest.mark.skipif(not HAVE_DASK, reason="the distributed package is not installed")
def test_scaling_runs_the_campaign_on_one_and_two_workers_and_on_dask(bench):
    code, report, err = bench("faults-scaling")
    assert code == 0, err
    entry = entry_of(report, "faults-scaling")
    v = entry["variants"]
    assert list(v) == ["local-1", "local-2", "dask-2"]
    assert {name: s["count"] for name, s in v.items()} == dict.fromkeys(v, entry["size"]["faults"])
    assert v["local-1"]["outcomes"] == v["local-2"]["outcomes"] == v["dask-2"]["outcomes"]
    assert v["dask-2"]["cluster_start_seconds"] > 0
    derived = entry["derived"]
    assert derived["two_over_one"] == v["local-2"]["rate"] / v["local-1"]["rate"]
    assert derived["dask_over_local"] == v["dask-2"]["rate"] / v["local-2"]["rate"]
    assert derived["task_time_two_over_one"] == v["local-2"]["task_seconds"] / v["local-1"]["task_seconds"]
    targets = targets_of(report)
    assert targets["faults-scaling"]["value"] == derived["two_over_one"]
    assert targets["faults-dask"]["value"] == derived["dask_over_local"]


def test_scaling_without_distributed_skips_the_dask_variant_with_a_note(bench, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)   # `import distributed` raises ImportError
    code, report, err = bench("faults-scaling")
    assert code == 0, err
    entry = entry_of(report, "faults-scaling")
    assert list(entry["variants"]) == ["local-1", "local-2"]
    assert "distributed package is not installed" in entry["skipped_variants"]["dask-2"]
    assert "dask_over_local" not in entry["derived"] and "two_over_one" in entry["derived"]
    assert targets_of(report)["faults-dask"]["met"] is None


def test_armed_runs_the_loop_with_no_fault_an_armed_one_and_a_fired_one(bench):
    code, report, err = bench("faults-armed")
    assert code == 0, err
    assert "fault not injected" not in err      # the armed variant's warning is collected, not printed
    entry = entry_of(report, "faults-armed")
    v = entry["variants"]
    assert list(v) == ["no-fault", "armed", "fired"]
    assert {name: s["count"] for name, s in v.items()} == dict.fromkeys(v, entry["size"]["instructions"])
    assert (v["armed"]["status"], v["fired"]["status"]) == ("not reached", "injected")
    derived = entry["derived"]
    assert derived == {"armed_ratio": v["armed"]["rate"] / v["no-fault"]["rate"],
                       "fired_ratio": v["fired"]["rate"] / v["no-fault"]["rate"]}
    targets = targets_of(report)
    assert (targets["faults-armed"]["value"], targets["faults-fired"]["value"]) == (
        derived["armed_ratio"], derived["fired_ratio"])


def test_a_wrong_golden_result_fails_the_workload_with_exit_status_1(bench, monkeypatch):
    monkeypatch.setattr(tessera_faults.bench, "expected_checksum", lambda outer: 12345)
    code, report, err = bench("faults-fastforward")
    assert code == 1
    entry = report["workloads"]["faults-fastforward"]
    assert entry["status"] == "failed" and "wrong golden run" in entry["error"]
    assert entry["variants"] == {} and entry["derived"] == {}
