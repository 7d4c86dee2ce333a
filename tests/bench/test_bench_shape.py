"""``tessera bench --json``: every workload with a checked result, in the report's published shape.

The report's shape is a contract (scripts read ``workloads.<name>.vs_riscemu.fast``):
``report_keys.txt`` holds every key path of the report as it was before the
workloads moved into their plugins (issue 14), and this run must have the same —
with the workloads now offered by the plugins of this repository.  A workload that
is skipped here (riscemu when it is not installed) is compared by its entry's own
keys only, since a skipped entry has no variants; so is a skipped variant (wolfpine's tile
without wolfpine, llk-matmul's kernel without the RISC-V compiler or the tt-llk cache, faults-scaling's
Dask cluster without distributed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

KEYS = Path(__file__).with_name("report_keys.txt")
#: llk-matmul's derived numbers that come from its kernel variant (absent when the kernel is skipped)
KERNEL_DERIVED = {"ms_per_run", "load_ms_per_run", "riscv_per_second", "riscv_per_second_own",
                  "riscv_per_second_warm", "tensix_per_second", "tensix_per_second_own", "tensix_backend_per_second",
                  "riscv_decode_ms_per_run", "riscv_decoded_per_run", "translate_ms_per_run", "riscv_over_rv32",
                  "warm_over_rv32"}
WORKLOADS = ["phoenix", "phoenix-threads", "tile-harts", "rv32", "mark", "riscemu", "sfpu", "matmul", "llk-matmul",
             "hooks", "tracing", "tracing-mark", "faults-fastforward", "faults-scaling", "faults-armed", "cycles-inorder",
             "cycles-tensix", "cycles-silicon", "startup"]
TARGETS = ["phoenix-vs-riscemu", "phoenix-threads", "rv32-vs-riscemu", "mark-fast-over-step", "mark-steady", "sfpu",
           "matmul-mvmul", "matmul-wolfpine", "llk-matmul-riscv", "idle-hooks", "text-tracing", "mark-text-tracing",
           "faults-fastforward", "faults-scaling", "faults-dask", "faults-armed", "faults-fired", "cycles-inorder",
           "cycles-tensix", "cycles-silicon", "startup-version",
           "startup-run"]


def key_paths(node: Any, path: str = "") -> set[str]:
    """``a.b`` for every dict key (the dicts themselves included), ``a[]`` for list items."""
    out: set[str] = set()
    if isinstance(node, dict):
        if path:
            out.add(path)
        for key, value in node.items():
            out |= key_paths(value, f"{path}.{key}" if path else key)
    elif isinstance(node, list):
        out.add(path + "[]")
        for item in node:
            out |= key_paths(item, path + "[]") - {path + "[]"}
    else:
        out.add(path)
    return out


def committed() -> set[str]:
    return {line for line in KEYS.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")}


def under(paths: set[str], prefix: str) -> set[str]:
    return {p for p in paths if p == prefix or p.startswith(prefix + ".")}


def without_kernel(paths: set[str], prefix: str) -> set[str]:
    """llk-matmul's key paths when its kernel variant was skipped: no kernel sample, none of the
    numbers derived from it, and the skip's note."""
    gone = {f"{prefix}.variants.kernel", *(f"{prefix}.derived.{k}" for k in KERNEL_DERIVED),
            f"{prefix}.derived.ms_per_run_by_agent", f"{prefix}.derived.share_by_agent"}
    return {p for p in paths if not any(p == g or p.startswith(g + ".") for g in gone)} | {
        f"{prefix}.skipped_variants.kernel"}


def test_key_paths_name_dicts_lists_and_leaves():
    assert key_paths({"a": {"b": 1, "c": [{"d": 2}], "e": []}}) == {
        "a", "a.b", "a.c[]", "a.c[].d", "a.e[]"}


def test_json_report_has_every_workload_checked_in_the_committed_shape(bench):
    run = bench("--json")
    assert run.code == 0, run.err
    report = run.report
    assert report["ok"] is True and report["failures"] == []
    assert list(report["workloads"]) == WORKLOADS          # the report order did not change
    assert [t["name"] for t in report["targets"]] == TARGETS
    want, got = committed(), key_paths(report)
    assert {p for p in got if not p.startswith("workloads.")} == \
        {p for p in want if not p.startswith("workloads.")}
    for name, entry in report["workloads"].items():
        prefix = f"workloads.{name}"
        if entry["status"] == "skipped":            # riscemu without `pip install riscemu`
            assert name == "riscemu", (name, entry["note"])
            assert entry["note"] and set(entry) == {p.split(".")[2] for p in under(want, prefix) if p != prefix}
            continue
        expected = under(want, prefix)
        if "wolfpine-tile" in entry.get("skipped_variants", {}):  # matmul without `pip install wolfpine`
            assert name == "matmul" and entry["skipped_variants"]["wolfpine-tile"] == entry["size"]["wolfpine"]
            expected = {p for p in expected if "wolfpine-tile" not in p} | {f"{prefix}.skipped_variants.wolfpine-tile"}
        if "dask-2" in entry.get("skipped_variants", {}):   # faults-scaling without `pip install distributed`
            assert name == "faults-scaling"
            gone = (f"{prefix}.variants.dask-2", f"{prefix}.derived.dask_over_local")
            expected = {p for p in expected if not p.startswith(gone)} | {f"{prefix}.skipped_variants.dask-2"}
        if "kernel" in entry.get("skipped_variants", {}):   # llk-matmul without the compiler or the tt-llk cache
            assert name == "llk-matmul" and entry["skipped_variants"]["kernel"] == entry["size"]["kernel_note"]
            expected = without_kernel(expected, prefix)
        assert under(got, prefix) == expected, name
        assert entry["status"] == "ok", (name, entry["error"])
        check = entry["check"]
        assert check["passed"] is True and check["samples_checked"] >= len(entry["variants"]) >= 1, name
        assert "expected" in check and check["what"], name
        for vname, v in entry["variants"].items():
            assert v["count"] > 0 and v["seconds"] > 0, (name, vname)
            assert v["rate"] == v["count"] / v["seconds"], (name, vname)
    facts = report["machine"]
    assert facts["cpu"] and facts["cores"] >= 1
