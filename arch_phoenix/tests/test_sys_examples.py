"""The bundled examples, the timing table, and the system settings through the CLI."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tessera.cli.demo import run_example
from tessera.isa.asm import assemble
from tessera.loaders.common import place
from tessera.machine import Machine
from tessera_phoenix.arch import PHOENIX
from tessera_phoenix.encoding import TIMING_CLASSES
from tessera_phoenix.examples import EXAMPLES
from tessera_phoenix.timing import TIMING

EXAMPLE_NAMES = [e.name for e in EXAMPLES]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_runs_and_passes_its_check(name):
    example = next(e for e in EXAMPLES if e.name == name)
    ok, summary = run_example(None, PHOENIX, example)
    assert ok, summary
    assert "halted" in summary


def _run_example_machine(example, **config):
    m = Machine(PHOENIX, config={"dram": 1 << 20, **config})
    program = assemble(PHOENIX, example.source, base=example.load_address)
    for address, blob in program.segments:
        place(m, address, blob, what=example.name)
    m.symbols.update(program.symbols)
    return m, m.run(max_steps=example.max_steps)


@pytest.mark.parametrize("lanes", [4, 8])
def test_vcopy_example_with_fewer_lanes(lanes):
    example = next(e for e in EXAMPLES if e.name == "vcopy")
    m, result = _run_example_machine(example, lanes=lanes)
    assert example.check(m, result) is None


def test_example_checks_detect_wrong_results():
    for example in EXAMPLES:
        m, result = _run_example_machine(example)
        assert example.check(m, result) is None
        m.agents[0].gpr[2] ^= 1
        m.agents[0].gpr[10] ^= 1
        m.space.write(0xFFFC0100, 4, 0x1234)
        assert example.check(m, result) is not None, example.name


def test_trap_example_fails_without_its_handler_in_lenient_mode():
    # lenient mode skips the undefined word: no exception, so the handler never runs
    example = next(e for e in EXAMPLES if e.name == "trap")
    m, result = _run_example_machine(example, lenient=True)
    assert "r11" in example.check(m, result)


def test_timing_covers_every_class_of_the_table():
    assert TIMING_CLASSES <= set(TIMING)
    assert {"default", "trap"} <= set(TIMING)
    assert all(isinstance(v, int) and v > 0 for v in TIMING.values())
    assert (TIMING["alu"], TIMING["branch"], TIMING["fp"], TIMING["mem"], TIMING["rex"]) == (1, 1, 8, 20, 4)


def test_sum_example_cycle_count_is_nominal():
    example = next(e for e in EXAMPLES if e.name == "sum")
    m, result = _run_example_machine(example)
    t0 = m.agents[0]
    # one store (20 cycles) and every other instruction 1 cycle
    assert t0.cycles == t0.instret - 1 + 20 == result.cycles


# ---------------------------------------------------------------------------- CLI

IRQ_PROGRAM = """
        ldi     r1, vectors
        csrrw   r0, r1, tvec3
        ldi     r2, 8
        csrrs   r0, r2, status      ; MIE
        ldi     r2, 0xE0
        csrrc   r0, r2, status      ; IPL 0 (reset IPL 7 masks every level)
        ldi     msp, 0x1000         ; first write to r62 sets the global enable
        ldi     r5, 0
loop:   addi    r5, r5, 1
        bra     loop
vectors:
        .space  0x60
        csrrd   r6, r0, eip
        csrrd   r7, r0, cause
done:   bra     done
"""


def tessera(*args: str) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "phoenix"
    return subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120)


def test_cli_scheduled_interrupt_and_no_pma(tmp_path):
    src = tmp_path / "irq.s"
    src.write_text(IRQ_PROGRAM)
    res = tessera("run", "--arch", "phoenix", str(src), "--load", "0xFFFD0000", "--no-pma",
                  "--set", "irq=t0:5@100", "--set", "dram=0x100000", "--dump-state", "json")
    assert res.returncode == 0, res.stderr
    state = json.loads(res.stdout)
    t0 = state["agents"]["t0"]
    r = t0["registers"]["r"]
    assert state["result"]["reason"] == "halted"
    assert r[7] == 0x800 | 5 << 8 | 238 and t0["depth"] == 2
    # 100 steps, then the interrupt entry, two CSR reads and the halting self-loop
    assert state["steps"] == 100 + 1 + 2 + 1
    assert r[5] > 0 and t0["pending_irq"] == []


def test_cli_bad_irq_setting_is_a_one_line_error(tmp_path):
    src = tmp_path / "p.s"
    src.write_text("done: bra done\n")
    res = tessera("run", "--arch", "phoenix", str(src), "--load", "0xFFFD0000", "--set", "irq=t7:9")
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "irq" in lines[0] and "Traceback" not in res.stderr


def test_cli_double_fault_is_one_error_line(tmp_path):
    image = tmp_path / "zero.bin"
    image.write_bytes(bytes(60))                     # all-zero words are BRK, the handler too
    res = tessera("run", "--arch", "phoenix", str(image), "--load", "0xFFFD0000", "--set", "dram=0x10000")
    assert res.returncode == 68                      # UnhandledTrap, not a halt with the cause as status
    assert res.stderr.splitlines() == [
        "tessera: unhandled trap: double fault: BRK (cause 63) at exception nesting depth 7 "
        "(agent t0, pc 0xfffd0060)"]


@pytest.mark.parametrize("seed", range(3))
def test_cli_random_image_ends_in_one_line_and_a_tessera_status(tmp_path, seed):
    image = tmp_path / "random.bin"
    image.write_bytes(random.Random(seed).randbytes(600))
    res = tessera("run", "--arch", "phoenix", str(image), "--load", "0xFFFD0000", "--max-steps", "20000",
                  "--set", "dram=0x10000")
    assert res.returncode == 0 or 64 <= res.returncode <= 75, res.stderr
    assert len(res.stderr.splitlines()) <= 1 and "Traceback" not in res.stderr


@pytest.mark.parametrize("setting", ["threads=abc", "dram=lots", "dram=1G", "pma=maybe", "reset_cr0=0x10000"])
def test_cli_bad_setting_types_are_configuration_errors(tmp_path, setting):
    src = tmp_path / "p.s"
    src.write_text("done: bra done\n")
    res = tessera("run", "--arch", "phoenix", str(src), "--set", setting)
    assert res.returncode == 64, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tessera: configuration error:")


def test_cli_demo_runs_the_examples():
    res = tessera("demo", "--arch", "phoenix")
    assert res.returncode == 0, res.stdout + res.stderr
    for name in EXAMPLE_NAMES:
        assert f"phoenix/{name}: ok" in res.stdout
