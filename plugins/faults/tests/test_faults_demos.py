"""The bundled demo campaigns: the shipped C program, each demo's outcomes, the commands."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest
from faults_support import host

from tessera.machine import Machine
from tessera_faults.campaign import FAILURES
from tessera_faults.demos import DEMOS, available, run_demo

DEMO_DIR = Path(str(files("tessera_faults") / "demos"))
CHECKSUM = next(d for d in DEMOS if d.label == "rv32im/checksum")


def source_data() -> list[int]:
    """The words of checksum.c's array, as its source lists them."""
    body = (DEMO_DIR / "checksum.c").read_text().split("u32 data[N] = {")[1].split("};")[0]
    return [int(w) for w in body.replace("\n", " ").split(",") if w.strip()]


def expected_checksum() -> int:
    """What checksum.c prints: its array sorted, folded with rotate-left-5 and xor."""
    check = 0
    for w in sorted(source_data()):
        check = ((check << 5 | check >> 27) & 0xFFFFFFFF) ^ w
    return check


def run_elf(path: Path, capfd, poke: tuple[int, int] | None = None) -> tuple[int | None, str]:
    """Run the ELF to its end: (exit status, stdout); ``poke`` = (index, word) corrupts the array first."""
    from tessera.loaders import load_program
    from tessera_riscv import RV32IM

    machine = Machine(RV32IM, host=host(), config={"ram": "256K"})
    load_program(machine, str(path))
    if poke is not None:
        index, word = poke
        machine.space.write(machine.symbols["data"] + 4 * index, 4, word)
    capfd.readouterr()
    result = machine.run(max_steps=1_000_000)
    return result.exit_code, capfd.readouterr().out


def faults_of(demo, workdir: Path) -> int:
    """How many faults a demo's random campaign samples: its count for each target (one model)."""
    table = demo.campaign(workdir)["faults"]
    return table["count"] * len(table["targets"]) * len(table["models"])


def test_the_shipped_elf_prints_the_checksum_its_source_computes(capfd):
    code, out = run_elf(DEMO_DIR / "checksum.elf", capfd)
    assert code == 0 and out == f"checksum {expected_checksum():#010x}\n"


def test_the_shipped_elf_exits_3_when_its_checks_see_corruption(capfd):
    """A word past LIMIT (a high bit set) is caught by the range check: exit 3, the 'detected' status."""
    assert run_elf(DEMO_DIR / "checksum.elf", capfd, poke=(5, 1 << 20)) == (3, "corrupted: out of range\n")
    # a low-bit change keeps every word in range and the sort restores the order: a silent
    # corruption — the program exits 0 with another checksum
    code, out = run_elf(DEMO_DIR / "checksum.elf", capfd, poke=(5, source_data()[5] ^ 1))
    assert code == 0 and out.startswith("checksum ") and out != f"checksum {expected_checksum():#010x}\n"


@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None,
                    reason="riscv64-unknown-elf-gcc is not installed (apt-get install gcc-riscv64-unknown-elf)")
def test_the_source_rebuilds_to_a_program_that_behaves_the_same(tmp_path, capfd):
    for name in ("checksum.c", "build.sh"):
        shutil.copy(DEMO_DIR / name, tmp_path / name)
    subprocess.run(["sh", str(tmp_path / "build.sh")], check=True, capture_output=True, timeout=120)
    rebuilt, shipped = tmp_path / "checksum.elf", DEMO_DIR / "checksum.elf"
    assert run_elf(rebuilt, capfd) == run_elf(shipped, capfd)
    assert run_elf(rebuilt, capfd, poke=(7, 1 << 30)) == run_elf(shipped, capfd, poke=(7, 1 << 30))


@pytest.mark.parametrize("demo", DEMOS, ids=lambda d: d.label)
def test_each_demo_shows_failures_and_no_tool_errors(demo, tmp_path, monkeypatch):
    h = host(__import__("tessera_tile.plugin", fromlist=["plugin"])) if demo.arch == "tile" else host()
    if demo not in available(h):
        pytest.skip(f"{demo.arch} is not installed")
    monkeypatch.chdir(tmp_path)                       # a relative output directory, as -o out gives
    result = run_demo(demo, h, Path("out"), workers=2)
    assert result.ok, result.counts()
    assert result.total == sum(result.outcomes.values()) == faults_of(demo, tmp_path)
    assert not result.outcomes.get("error") and any(result.outcomes.get(f) for f in FAILURES)
    assert result.results == Path("out") / f"{demo.arch}-{demo.name}.jsonl"
    records = [json.loads(x) for x in result.results.read_text().splitlines()]
    assert len(records) == result.total
    # every target of the demo was sampled (a population is named by the target as written)
    assert {r["population"].split("/")[0] for r in records} == set(demo.campaign(tmp_path)["faults"]["targets"])


def test_a_demo_without_failures_is_not_ok():
    from tessera_faults.demos import DemoResult

    quiet = DemoResult(CHECKSUM, 3, {"masked": 2, "latent": 1}, Path("x.jsonl"))
    broken = DemoResult(CHECKSUM, 3, {"sdc": 1, "error": 1}, Path("x.jsonl"))
    assert not quiet.ok and quiet.counts() == "3 faults: masked 2, latent 1; FAILED: no fault made the program fail"
    assert not broken.ok and broken.problems == ["1 faults have no result", "1 tool errors"]


def test_tessera_faults_demo_prints_a_line_per_demo(tessera_cli, tmp_path):
    code, out, err = tessera_cli("faults", "demo", "--arch", "rv32im", "--workers", "2", "-o", tmp_path)
    assert code == 0, err
    results = tmp_path / "rv32im-checksum.jsonl"
    line = re.search(r"^rv32im/checksum: (\d+) faults: (.*) \(results: (.*)\)$", out, re.MULTILINE)
    assert line is not None, out
    assert int(line[1]) == faults_of(CHECKSUM, tmp_path) and line[3] == str(results)
    assert "detected" in line[2] and "error" not in line[2]
    assert results.read_text().count("\n") == int(line[1])
    assert f"results kept in {tmp_path}" in out
    assert "phoenix" not in out                       # --arch keeps only rv32im's demo


def test_tessera_demo_runs_the_faults_demo_of_the_architecture(tessera_cli):
    code, out, err = tessera_cli("demo", "--arch", "rv32im")
    assert code == 0, err
    assert "== faults/rv32im/checksum:" in out
    assert f"-- faults/rv32im/checksum: ok ({faults_of(CHECKSUM, Path('.'))} faults:" in out
    assert "faults/phoenix" not in out
