"""The riscv plugin's ``mark`` workload: its compiled program, checked against qemu, rebuilt from
source, run on both engines and in Unicorn, and its report entry (and the trace plugin's
``tracing-mark``) built from the measured numbers.

The cross compiler, qemu-riscv32 and unicorn are optional here (a test that needs one
is skipped with the reason) and required in CI: ``TESSERA_REQUIRE_DIFF_TOOLS=1`` turns
those skips into failures.  No test looks at a time or a rate, only at results, counts
and how the ratios are made from the reported rates.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

import tessera_riscv.plugin
from tessera.bench.elfpatch import patch_symbol
from tessera.bench.hosts import minimal_host
from tessera.bench.model import BenchFailure, Context, Skip
from tessera_riscv import bench_mark
from tessera_riscv.bench_mark import (
    ELF_NAME,
    EXPECTED_NAME,
    CompiledMark,
    MarkProgram,
    elf_image,
    expected_checksums,
    expected_result,
    result_line,
    run_in_child,
)

DATA = Path(str(resources.files("tessera_riscv").joinpath("data", "bench")))
PLUGIN = (tessera_riscv.plugin, "riscv")
#: read at import: the folder's autouse fixture removes every TESSERA_* variable
REQUIRE_TOOLS = os.environ.get("TESSERA_REQUIRE_DIFF_TOOLS") == "1"


def need(problem: str | None) -> None:
    """Skip with ``problem`` (a missing tool) — or fail, where CI requires the tools."""
    if problem:
        if REQUIRE_TOOLS:
            pytest.fail(f"required by TESSERA_REQUIRE_DIFF_TOOLS=1 but {problem}")
        pytest.skip(problem)


def need_tool(name: str, package: str) -> None:
    need(None if shutil.which(name) else f"{name} is not installed (apt-get install {package})")


def need_unicorn() -> None:
    need(None if importlib.util.find_spec("unicorn") else "unicorn is not installed (pip install unicorn)")


@pytest.fixture(scope="module")
def host():
    return minimal_host(PLUGIN)


def program(host, iterations: int, warmup: int | None = None) -> MarkProgram:
    return MarkProgram(host.architecture("rv32im"), iterations, PLUGIN, warmup)


def load_build():
    spec = importlib.util.spec_from_file_location("bench_mark_build", DATA / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def qemu(image: bytes, tmp_path: Path) -> bytes:
    path = tmp_path / "mark.elf"
    path.write_bytes(image)
    path.chmod(0o755)
    proc = subprocess.run(["qemu-riscv32", str(path)], capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ---- the program and its expected checksums ------------------------------------------

def test_the_package_data_and_its_checksums_belong_together():
    for name in ("mark.c", ELF_NAME, EXPECTED_NAME, "build.py"):
        assert (DATA / name).is_file(), name
    data = json.loads((DATA / EXPECTED_NAME).read_text())
    assert data["elf_sha256"] == hashlib.sha256(elf_image()).hexdigest()
    assert data["source_sha256"] == hashlib.sha256((DATA / "mark.c").read_bytes()).hexdigest(), \
        "mark.c changed since the ELF was built: run data/bench/build.py"
    assert data["seeds"] == len(data["per_seed"]) == 64
    assert len(set(data["per_seed"])) == 64          # every seed does different work


def test_folding_the_per_seed_checksums_gives_what_qemu_printed():
    results = expected_checksums()["results"]
    assert {"1", "6", "20", "60", "65"} <= set(results)   # the tests', tracing's, --quick's, the default
    for n, value in results.items():
        assert expected_result(int(n)) == value, n
    assert expected_result(1) != expected_result(65)      # seed 0 twice is not seed 0 once


def test_a_stale_checksum_file_is_refused(monkeypatch):
    monkeypatch.setattr(bench_mark, "elf_image", lambda: elf_image() + b"\0")
    expected_checksums.cache_clear()
    try:
        with pytest.raises(BenchFailure, match="was not made from this mark-rv32im.elf"):
            expected_checksums()
    finally:
        monkeypatch.undo()
        expected_checksums.cache_clear()


def test_qemu_computes_the_recorded_checksums(tmp_path):
    need_tool("qemu-riscv32", "qemu-user")
    for n in (3, 65):
        out = qemu(patch_symbol(elf_image(), "iterations", n), tmp_path)
        assert out == result_line(expected_result(n)), n
    verbose = patch_symbol(patch_symbol(elf_image(), "iterations", 4), "verbose", 1)
    lines = qemu(verbose, tmp_path).splitlines()
    per_seed = expected_checksums()["per_seed"]
    assert lines[:4] == [f"seed {s} checksum={per_seed[s]:#010x}".encode() for s in range(4)]


def test_the_source_rebuilds_into_a_program_that_computes_the_same(tmp_path, host):
    need_tool("riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf")
    need_tool("qemu-riscv32", "qemu-user")
    build = load_build()
    outputs = build.main(tmp_path)
    assert {p.name for p in outputs} == {"sum-rv32im.elf", ELF_NAME, EXPECTED_NAME}
    rebuilt = json.loads((tmp_path / EXPECTED_NAME).read_text())
    committed = expected_checksums()
    assert rebuilt["per_seed"] == committed["per_seed"] and rebuilt["results"] == committed["results"]
    # and Tessera agrees on the rebuilt ELF
    image = patch_symbol((tmp_path / ELF_NAME).read_bytes(), "iterations", 2)
    from tessera.loaders import load_elf
    from tessera.machine import Machine

    machine = Machine(host.architecture("rv32im"), host=host, engine="step", config={"echo": False, "ram": 1 << 20})
    load_elf(machine, "rebuilt", image)
    assert machine.run(max_steps=1_000_000).reason == "halted"
    assert bytes(machine.ext["riscv_io"].stdout) == result_line(expected_result(2))


# ---- Tessera's engines, Unicorn -------------------------------------------------------

def test_both_engines_compute_the_checksum_with_the_same_instructions(host):
    seen = {}
    for engine in ("fast", "step"):
        prog = program(host, 3, warmup=1)
        data = prog.run_phases(prog.machine(host, engine))
        prog.verify_phases(data)
        assert data["result"] == expected_result(3) and data["exit_code"] == 0
        assert data["stdout"].encode() == result_line(expected_result(3))
        assert data["engine"] == engine
        seen[engine] = (data["warmup_instructions"], data["steady_instructions"])
        if engine == "step":
            assert (data["blocks"], data["translate_seconds"]) == (0, 0.0)
        else:
            assert data["blocks"] > 0 and data["translate_seconds"] > 0
    assert seen["fast"] == seen["step"]
    warm, steady = seen["step"]
    assert 20_000 < steady / 2 < 60_000       # two steady iterations of 20-60 k instructions each


def test_a_whole_run_is_checked_too(host):
    prog = program(host, 2)
    sample = prog.run(prog.machine(host))
    assert sample.count > 50_000 and prog.expected == expected_result(2)
    prog.expected ^= 1
    with pytest.raises(BenchFailure, match="wrong result: result is"):
        prog.run(prog.machine(host))


def test_a_wrong_result_or_output_fails(host):
    prog = program(host, 1)
    right = prog.expected
    prog.verify(right, result_line(right), 0)
    with pytest.raises(BenchFailure, match="wrong result: result"):
        prog.verify(right + 1, result_line(right), 0)
    with pytest.raises(BenchFailure, match="wrong output"):
        prog.verify(right, result_line(right + 1), 0)
    with pytest.raises(BenchFailure, match="exit status"):
        prog.verify(right, result_line(right), 3)


def test_the_child_process_measures_a_fresh_run():
    data = run_in_child("fast", 2, 1)
    assert data["engine"] == "fast" and data["result"] == expected_result(2)
    assert data["blocks"] > 0 and data["warmup_seconds"] > 0 and data["steady_seconds"] > 0
    with pytest.raises(BenchFailure, match="child process failed"):
        run_in_child("nosuch-engine", 1, 0)


def test_unicorn_runs_the_same_instructions_to_the_same_checksum(host):
    need_unicorn()
    from tessera_riscv.bench_unicorn import UnicornMark

    prog = program(host, 3, warmup=1)
    data = prog.run_phases(prog.machine(host, "step"))
    uni = UnicornMark(prog.memory_image())
    warm, total = uni.count()
    assert (warm, total - warm) == (data["warmup_instructions"], data["steady_instructions"])
    out = uni.run(uni.image.symbols["result"])
    prog.verify(out.result, out.stdout, out.exit_code)
    assert out.warmup_seconds > 0 and out.steady_seconds > 0


def test_variants_that_retire_different_instructions_fail():
    workload = CompiledMark()
    workload.counts = None
    workload._agree("fast", 10, 30)
    workload._agree("step", 10, 30)
    with pytest.raises(BenchFailure, match="unicorn ran 10 \\+ 21 instructions, fast 10 \\+ 20"):
        workload._agree("unicorn", 10, 31)


def test_quick_keeps_enough_iterations_to_warm_up():
    from tessera.plugins import PluginHost

    ctx = Context(PluginHost(), scale=0.1, quick=True)
    workload = CompiledMark()
    names = [v.name for v in workload.prepare(ctx)]
    assert names == ["fast", "step", "unicorn"]
    assert workload.size == {"iterations": 20, "warmup_iterations": 10, "elf": ELF_NAME}
    assert workload.check["expected"] == expected_result(20)


# ---- the report ------------------------------------------------------------------------

def test_the_report_entry_is_made_from_the_measured_numbers(bench):
    run = bench("--json", "--only", "mark")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["mark"]
    assert entry["status"] == "ok" and entry["check"]["passed"], entry
    assert entry["size"] == {"iterations": 1, "warmup_iterations": 0, "elf": ELF_NAME}
    v, d = entry["variants"], entry["derived"]
    have_unicorn = importlib.util.find_spec("unicorn") is not None
    assert list(v) == ["fast", "step", *(["unicorn"] if have_unicorn else [])]
    assert len({x["count"] for x in v.values()}) == 1
    assert d["fast_over_step"] == v["fast"]["rate"] / v["step"]["rate"]
    for name, x in v.items():
        assert x["seconds"] == pytest.approx(x["warmup_seconds"] + x["steady_seconds"])
        assert d["steady_rate"][name] == x["steady_instructions"] / x["steady_seconds"]
    assert d["steady_fast_over_step"] == d["steady_rate"]["fast"] / d["steady_rate"]["step"]
    assert d["translation"]["seconds"] == v["fast"]["translate_seconds"] > 0
    assert d["translation"]["blocks"] == v["fast"]["blocks"] > 0 and v["step"]["blocks"] == 0
    assert d["instructions_per_iteration"] == v["fast"]["steady_instructions"]
    if have_unicorn:
        assert d["vs_unicorn"] == {name: d["steady_rate"][name] / d["steady_rate"]["unicorn"]
                                   for name in ("fast", "step")}
    targets = {t["name"]: t for t in run.report["targets"]}
    assert targets["mark-fast-over-step"]["value"] == d["fast_over_step"]
    assert targets["mark-steady"]["value"] == d["steady_rate"]["fast"]
    assert entry["vs_riscemu"] is None     # another program than riscemu's loop: no ratio


def test_without_unicorn_its_variant_is_skipped_with_a_note(bench, monkeypatch):
    monkeypatch.setitem(sys.modules, "unicorn", None)      # `import unicorn` raises ImportError
    run = bench("--json", "--only", "mark")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["mark"]
    assert entry["status"] == "ok" and list(entry["variants"]) == ["fast", "step"]
    assert entry["skipped_variants"]["unicorn"].startswith("unicorn is not installed")
    assert "vs_unicorn" not in entry["derived"]


def test_a_wrong_checksum_fails_the_command(bench, monkeypatch):
    monkeypatch.setattr(bench_mark, "expected_result", lambda n: 0x12345678)
    run = bench("--json", "--only", "mark")
    assert run.code == 1
    entry = run.report["workloads"]["mark"]
    assert entry["status"] == "failed" and "wrong result: result is" in entry["error"]
    assert "expected 0x12345678" in entry["error"]


def test_the_text_report_shows_steady_state_and_translation(bench, monkeypatch):
    monkeypatch.setitem(sys.modules, "unicorn", None)
    run = bench("--only", "mark")
    assert run.code == 0, run.err
    text = " ".join(run.out.split())
    assert "steady" in text and "translation" in text and "blocks" in text
    assert "M instr/s" in text.split("fast engine, steady state")[1]   # the target's unit


# ---- tracing the mark program (the trace plugin's workload) ------------------------------

def test_text_tracing_of_the_mark_program_is_compared_with_the_untraced_run(bench):
    run = bench("--json", "--only", "tracing-mark")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["tracing-mark"]
    assert entry["status"] == "ok" and entry["check"]["expected"] == expected_result(1)
    v = entry["variants"]
    assert list(v) == ["untraced", "text"] and v["text"]["count"] == v["untraced"]["count"]
    assert v["text"]["bytes"] > 0
    assert entry["derived"]["slowdown"] == {"text": v["untraced"]["rate"] / v["text"]["rate"]}
    target = {t["name"]: t for t in run.report["targets"]}["mark-text-tracing"]
    assert target["value"] == entry["derived"]["slowdown"]["text"] and target["limit"] == 2.0


def test_without_the_riscv_plugin_tracing_mark_is_skipped_with_a_note(bench):
    run = bench("--no-plugin", "riscv", "bench", "--json", "--only", "tracing-mark")
    assert run.code == 0, run.err
    entry = run.report["workloads"]["tracing-mark"]
    assert entry["status"] == "skipped"
    assert entry["note"] == "workload 'mark', whose program this one runs, is not offered by any enabled plugin"


def test_program_for_offers_the_whole_run_without_a_warm_up_stop(host):
    from tessera.plugins import PluginHost

    prog = CompiledMark.program_for(Context(host), 2)
    assert prog.warmup is None and prog.iterations == 2 and prog.expected == expected_result(2)
    with pytest.raises(Skip, match="architecture 'rv32im' is not available"):
        CompiledMark.program_for(Context(PluginHost(load_entry_points=False, use_environment=False)), 2)
