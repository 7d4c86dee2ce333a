"""The bundled demo campaigns: the shipped C program, each demo's outcomes, the commands."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest
from faults_support import host

from tessera.machine import Machine
from tessera_faults.demos import DEMOS, available, run_demo

DEMO_DIR = Path(str(files("tessera_faults") / "demos"))


def expected_checksum() -> int:
    """What checksum.c prints: its array sorted, folded with rotate-left-5 and xor."""
    source = (DEMO_DIR / "checksum.c").read_text()
    body = source.split("u32 data[N] = {")[1].split("};")[0]
    words = sorted(int(w) for w in body.replace("\n", " ").split(",") if w.strip())
    check = 0
    for w in words:
        check = ((check << 5 | check >> 27) & 0xFFFFFFFF) ^ w
    return check


def run_elf(path: Path, capfd) -> tuple[int | None, str]:
    from tessera.loaders import load_program
    from tessera_riscv import RV32IM

    machine = Machine(RV32IM, host=host(), config={"ram": "1M"})
    load_program(machine, str(path))
    result = machine.run(max_steps=1_000_000)
    return result.exit_code, capfd.readouterr().out


def test_the_shipped_elf_prints_the_checksum_its_source_computes(capfd):
    code, out = run_elf(DEMO_DIR / "checksum.elf", capfd)
    assert code == 0 and out == f"checksum {expected_checksum():#010x}\n"


@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                    reason="riscv64-unknown-elf-gcc is not installed (apt-get install gcc-riscv64-unknown-elf)")
def test_the_source_rebuilds_to_a_program_that_behaves_the_same(tmp_path, capfd):
    for name in ("checksum.c", "build.sh"):
        shutil.copy(DEMO_DIR / name, tmp_path / name)
    subprocess.run(["sh", str(tmp_path / "build.sh")], check=True, capture_output=True, timeout=120)
    assert run_elf(tmp_path / "checksum.elf", capfd) == run_elf(DEMO_DIR / "checksum.elf", capfd)


@pytest.mark.parametrize("demo", DEMOS, ids=lambda d: d.label)
def test_each_demo_shows_failures_and_no_tool_errors(demo, tmp_path):
    h = host(__import__("tessera_tile.plugin", fromlist=["plugin"])) if demo.arch == "tile" else host()
    if demo not in available(h):
        pytest.skip(f"{demo.arch} is not installed")
    ok, line, summary = run_demo(demo, h, tmp_path, workers=2)
    assert ok, line
    assert summary.total == sum(summary.outcomes.values()) >= 40
    results = [json.loads(x) for x in (tmp_path / f"{demo.arch}-{demo.name}.jsonl").read_text().splitlines()]
    # every target of the demo was sampled (a population is named by the target as written)
    assert {r["population"].split("/")[0] for r in results} == set(demo.campaign(tmp_path)["faults"]["targets"])


def test_tessera_faults_demo_prints_a_line_per_demo(tessera_cli, tmp_path):
    code, out, err = tessera_cli("faults", "demo", "--arch", "rv32im", "--workers", "2", "-o", tmp_path)
    assert code == 0, err
    assert "-- rv32im/checksum: ok (80 faults:" in out and "detected" in out
    assert (tmp_path / "rv32im" / "rv32im-checksum.jsonl").read_text().count("\n") == 80


def test_tessera_demo_runs_the_faults_demo_of_the_architecture(tessera_cli):
    code, out, err = tessera_cli("demo", "--arch", "rv32im")
    assert code == 0, err
    assert "== faults/rv32im/checksum:" in out and "-- faults/rv32im/checksum: ok (80 faults:" in out
