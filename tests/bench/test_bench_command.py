"""``tessera bench``: checked results, skips, consistent ratios, exit statuses, plugin workloads.

Sizes are tiny (see conftest.py); nothing here asserts anything about speed.  The
whole report, and its shape, is checked in test_bench_shape.py.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tessera.bench import WORKLOAD_NAMES
from tessera.bench.registry import offered_workloads
from tessera.plugins import PluginHost

HAVE_RISCEMU = importlib.util.find_spec("riscemu") is not None
SCALAR = ("phoenix", "rv32")
REPOSITORY = ("phoenix", "phoenix-threads", "tile-harts", "rv32", "mark", "riscemu", "sfpu", "matmul", "llk-matmul",
              "hooks", "tracing", "tracing-mark", "faults-fastforward", "faults-scaling", "faults-armed", "cycles-inorder",
              "cycles-tensix", "cycles-silicon", "startup")


def assert_rates_consistent(entry):
    for name, v in entry["variants"].items():
        assert v["count"] > 0 and v["seconds"] > 0, name
        assert v["rate"] == v["count"] / v["seconds"], name


def test_the_workload_names_are_what_the_installed_plugins_offer():
    assert tuple(offered_workloads(PluginHost())) == REPOSITORY
    assert tuple(offered_workloads(PluginHost(disabled=["phoenix", "trace"]))) == (
        "tile-harts", "rv32", "mark", "riscemu", "sfpu", "matmul", "llk-matmul", "hooks", "faults-fastforward",
        "faults-scaling", "faults-armed", "cycles-inorder", "cycles-tensix", "cycles-silicon", "startup")
    assert tuple(offered_workloads(PluginHost(load_entry_points=False, use_environment=False))) == ("startup",)


def test_workload_names_follow_the_current_host(bench, monkeypatch):
    """``WORKLOAD_NAMES`` is live: a command sets the process's host, the names follow it."""
    bench("--only", "nosuch")                       # any command: it sets the default host
    assert tuple(WORKLOAD_NAMES) == REPOSITORY and "phoenix" in WORKLOAD_NAMES
    bench("--no-plugin", "phoenix", "bench", "--only", "nosuch")
    assert "phoenix" not in WORKLOAD_NAMES and list(WORKLOAD_NAMES) == list(REPOSITORY[2:])


def test_scalar_workloads_run_on_both_engines_and_their_ratios_come_from_the_rates(bench):
    report = bench("--json", "--only", "phoenix,rv32,riscemu").report
    peer = report["workloads"]["riscemu"]
    for name in SCALAR:
        entry = report["workloads"][name]
        fast, step = entry["variants"]["fast"], entry["variants"]["step"]
        assert (fast["engine"], step["engine"]) == ("fast", "step")
        assert entry["derived"]["fast_over_step"] == fast["rate"] / step["rate"]
        if peer["status"] == "ok":
            rate = peer["variants"]["riscemu"]["rate"]
            assert entry["vs_riscemu"] == {"fast": fast["rate"] / rate, "step": step["rate"] / rate}
        else:
            assert entry["vs_riscemu"] == {"fast": None, "step": None}
    targets = {t["name"]: t for t in report["targets"]}
    if peer["status"] == "ok":
        value = report["workloads"]["rv32"]["vs_riscemu"]["fast"]
        assert targets["rv32-vs-riscemu"]["value"] == value
        assert targets["rv32-vs-riscemu"]["met"] == (value >= 20)
    assert targets["sfpu"]["met"] is None       # not selected: neither met nor missed


def test_hooks_and_sfpu_derived_numbers_come_from_the_rates(bench):
    report = bench("--json", "--only", "hooks", "--only", "sfpu").report
    assert list(report["workloads"]) == ["sfpu", "hooks"]      # report order, whatever the order given
    hooks = report["workloads"]["hooks"]
    v = hooks["variants"]
    assert list(v) == ["riscv-only", "idle-hooks", "observed", "subscribed"]
    assert hooks["derived"]["idle_overhead_percent"] == (
        v["riscv-only"]["rate"] / v["idle-hooks"]["rate"] - 1.0) * 100.0
    sfpu = report["workloads"]["sfpu"]
    ns = sfpu["derived"]["ns_per_instruction"]
    assert set(ns) == {"kernel", "sfpnop", "numpy-floor"}
    for name, value in ns.items():
        assert value == 1e9 / sfpu["variants"][name]["rate"]
    assert sfpu["derived"]["kernel_over_floor"] == ns["kernel"] / ns["numpy-floor"]
    assert sfpu["variants"]["kernel"]["max_relative_error"] < 1e-5
    targets = {t["name"]: t for t in report["targets"]}
    assert targets["idle-hooks"]["value"] == hooks["derived"]["idle_overhead_percent"]
    assert targets["sfpu"]["value"] == ns["kernel"]


def test_a_disabled_plugins_workloads_are_not_offered(bench):
    run = bench("--no-plugin", "tensix", "bench", "--json", "--only", "rv32")
    assert run.code == 0, run.err
    assert list(run.report["workloads"]) == ["rv32"] and run.report["workloads"]["rv32"]["status"] == "ok"
    assert "sfpu" not in {t["name"] for t in run.report["targets"]}      # its target went with it
    run = bench("--no-plugin", "tensix", "bench", "--json", "--only", "sfpu,rv32")
    assert run.code == 2 and run.out == ""
    assert run.err.count("\n") == 1 and run.err.startswith("tessera: usage error: ")
    assert "unknown workload 'sfpu'" in run.err and "(choose from phoenix, phoenix-threads, tile-harts, rv32, mark, riscemu, hooks" in run.err


def test_the_environment_can_disable_a_plugin_too(bench, monkeypatch):
    monkeypatch.setenv("TESSERA_DISABLE_PLUGINS", "phoenix")
    run = bench("--json", "--only", "phoenix")
    assert run.code == 2 and run.out == ""
    assert run.err == ("tessera: usage error: Invalid value for --only: unknown workload 'phoenix' "
                       "(choose from tile-harts, rv32, mark, riscemu, sfpu, matmul, llk-matmul, hooks, tracing, tracing-mark, "
                       "faults-fastforward, faults-scaling, faults-armed, cycles-inorder, cycles-tensix, cycles-silicon, "
                       "startup) "
                       "(see 'tessera bench --help')\n")


def test_without_the_riscv_plugin_its_program_and_the_peer_are_missing_with_notes(bench):
    run = bench("--no-plugin", "riscv", "bench", "--json", "--only", "phoenix,tracing")
    assert run.code == 0, run.err
    phoenix, tracing = run.report["workloads"]["phoenix"], run.report["workloads"]["tracing"]
    assert phoenix["status"] == "ok" and phoenix["vs_riscemu"] == {"fast": None, "step": None}
    assert phoenix["note"] == "riscemu is not offered by any enabled plugin: ratios to it are null"
    assert tracing["status"] == "skipped"
    assert tracing["note"] == "workload 'rv32', whose program this one runs, is not offered by any enabled plugin"
    assert {t["name"] for t in run.report["targets"]} == {"phoenix-vs-riscemu", "phoenix-threads", "sfpu",
                                                          "matmul-mvmul", "matmul-wolfpine", "llk-matmul-riscv",
                                                          "text-tracing",
                                                          "mark-text-tracing", "faults-fastforward", "faults-scaling",
                                                          "faults-dask", "faults-armed", "faults-fired",
                                                          "cycles-inorder", "cycles-tensix", "cycles-silicon",
                                                          "startup-version"}


def test_the_help_lists_the_workloads_the_environment_enables():
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    command = [sys.executable, "-m", "tessera.cli.main", "bench", "--help"]
    full = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    # click wraps long help lines, also after a hyphen inside a name ("tracing-" / "mark")
    assert ("phoenix, phoenix-threads, tile-harts, rv32, mark, riscemu, sfpu, matmul, llk-matmul, hooks, tracing, "
            "tracing-mark, faults-fastforward, faults-scaling, faults-armed, cycles-inorder, cycles-tensix, "
            "cycles-silicon, startup." in " ".join(full.split()).replace("- ", "-"))
    env["TESSERA_DISABLE_PLUGINS"] = "phoenix,tensix"
    fewer = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, check=True).stdout
    assert ("separated): tile-harts, rv32, mark, riscemu, hooks, tracing, tracing-mark, faults-fastforward, "
            "faults-scaling, faults-armed, cycles-inorder, cycles-tensix, cycles-silicon, startup."
            in " ".join(fewer.split()).replace("- ", "-"))


def test_without_riscemu_the_ratios_are_null_and_the_note_says_how_to_install(bench, monkeypatch):
    monkeypatch.setattr("tessera_riscv.bench_peer.riscemu_version", lambda: None)
    run = bench("--json", "--only", "rv32,riscemu")
    assert run.code == 0, run.err
    peer = run.report["workloads"]["riscemu"]
    assert peer["status"] == "skipped" and "pip install" in peer["note"]
    rv32 = run.report["workloads"]["rv32"]
    assert rv32["vs_riscemu"] == {"fast": None, "step": None} and "riscemu" in rv32["note"]
    assert {t["name"]: t["met"] for t in run.report["targets"]}["rv32-vs-riscemu"] is None


@pytest.mark.skipif(not HAVE_RISCEMU, reason="riscemu is not installed (pip install riscemu)")
def test_riscemu_runs_the_same_sum(bench):
    entry = bench("--json", "--only", "riscemu").report["workloads"]["riscemu"]
    assert entry["status"] == "ok" and entry["check"]["passed"]
    n = entry["size"]["iterations"]
    assert entry["check"]["expected"] == n * (n + 1) // 2
    assert entry["variants"]["riscemu"]["count"] == 3 * n + 5     # three setup, 3 per iteration, exit


def test_the_iteration_count_follows_the_scale(bench):
    small = bench("--json", "--only", "rv32", "--scale", "0.0001", "--repeat", "1", tiny=False).report
    large = bench("--json", "--only", "rv32", "--scale", "0.0003", "--repeat", "1", tiny=False).report
    a, b = small["workloads"]["rv32"], large["workloads"]["rv32"]
    assert (a["size"]["iterations"], b["size"]["iterations"]) == (30, 90)
    assert (a["check"]["expected"], b["check"]["expected"]) == (465, 4095)
    assert b["variants"]["step"]["count"] - a["variants"]["step"]["count"] == 3 * 60


def test_a_wrong_result_fails_loudly_with_exit_status_1(bench, monkeypatch):
    monkeypatch.setattr("tessera_riscv.bench.expected_sum", lambda n: 12345)
    run = bench("--json", "--only", "rv32,hooks")
    assert run.code == 1
    assert "tessera bench: FAILED rv32: fast: wrong result: result is" in run.err
    assert "FAILED hooks" in run.err
    report = run.report
    assert report["ok"] is False and len(report["failures"]) == 2
    assert report["workloads"]["rv32"]["status"] == "failed"


def test_a_wrong_result_is_shown_in_the_table_too(bench, monkeypatch):
    monkeypatch.setattr("tessera_phoenix.bench.expected_sum", lambda n: 1)
    run = bench("--only", "phoenix")
    assert run.code == 1
    assert "FAILED" in run.out and "wrong result: r2 is" in run.err


def test_check_exits_1_only_when_a_target_is_missed(bench, monkeypatch):
    from tessera.bench.targets import Target
    from tessera_riscv.bench_hooks import IdleHooks

    impossible = Target("impossible", "idle hooks cost less than -1000 %",
                        ("hooks", "derived", "idle_overhead_percent"), -1000.0, False, "%")
    monkeypatch.setattr(IdleHooks, "targets", (impossible,))
    assert bench("--json", "--only", "hooks").code == 0
    run = bench("--json", "--only", "hooks", "--check")
    assert run.code == 1 and "target(s) not met: impossible" in run.err
    hooks_targets = [t for t in run.report["targets"] if t["name"] == "impossible"]
    assert len(hooks_targets) == 1 and hooks_targets[0]["met"] is False


def test_text_output_has_the_tables_and_the_machine(bench):
    run = bench("--only", "rv32,riscemu")
    assert run.code == 0, run.err
    for needle in ("tessera bench", "workload", "M instr/s", "targets", "cores", "rv32"):
        assert needle in run.out, needle


def test_unknown_workload_is_a_usage_error(bench):
    run = bench("--only", "nosuch")
    assert run.code == 2
    assert "unknown workload 'nosuch'" in run.err and run.out == ""


def test_quick_is_two_rounds_and_keeps_steady_state_sizes(bench):
    report = bench("--json", "--quick", "--only", "rv32", tiny=False).report
    assert report["settings"] == {"repeat": 2, "scale": 0.1, "quick": True, "only": ["rv32"]}
    # the scalar loops keep their full size: a tenth would mostly measure block translation
    assert report["workloads"]["rv32"]["size"]["iterations"] == 300_000


def test_an_explicit_scale_overrides_the_quick_floors(bench):
    report = bench("--json", "--quick", "--scale", "0.01", "--only", "rv32", tiny=False).report
    assert report["settings"]["quick"] is False and report["settings"]["repeat"] == 2
    assert report["workloads"]["rv32"]["size"]["iterations"] == 3_000


def test_short_workloads_take_several_samples_per_round(bench):
    report = bench("--json", "--only", "tracing,sfpu").report
    for name in ("tracing", "sfpu"):
        entry = report["workloads"][name]
        if entry["status"] == "skipped":
            continue
        # one round (TINY), three checked samples of every variant: the best of three is kept
        assert entry["check"]["samples_checked"] == 3 * len(entry["variants"]), name


def test_startup_times_whole_commands_and_reads_its_targets_from_them(bench):
    report = bench("--json", "--only", "startup").report
    entry = report["workloads"]["startup"]
    assert entry["status"] == "ok", entry["error"]
    assert set(entry["variants"]) == {"version", "archs", "run-rv32", "run-rv32-elf"}
    assert entry["check"]["passed"] and entry["check"]["samples_checked"] == 4  # one each (tiny)
    seconds = entry["derived"]["seconds"]
    for name, variant in entry["variants"].items():
        assert seconds[name] == variant["seconds"] == pytest.approx(1 / variant["rate"]), name
    targets = {t["name"]: t for t in report["targets"]}
    assert targets["startup-version"]["value"] == seconds["version"]
    assert targets["startup-run"]["value"] == seconds["run-rv32"]
    assert targets["startup-run"]["unit"] == "s" and targets["startup-run"]["limit"] == 0.35


def test_a_startup_command_that_fails_is_a_failure_not_a_time(bench, monkeypatch):
    from tessera.bench import startup

    monkeypatch.setattr(startup, "tessera_command", lambda: ["false"])
    run = bench("--only", "startup")
    assert run.code == 1 and "FAILED" in run.out and "exited 1" in run.err
