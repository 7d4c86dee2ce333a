"""``--trace perfetto`` with a cycle model: the trace ends with the model's own tracks (unit
spans, counters), in processes of their own and in the model's cycles (issue 19, point 7)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tessera_cycles.tensix_model import TensixParams

HAS_TRACE = importlib.util.find_spec("tessera_trace") is not None
pytestmark = pytest.mark.skipif(not HAS_TRACE, reason="the trace plugin (tessera-trace) is not installed")

LOOP = """
    li   t0, 40
    li   a0, 0
loop:
    add  a0, a0, t0
    addi t0, t0, -1
    bnez t0, loop
    li   a0, 0
    li   a7, 93
    ecall
"""


def traced(tmp_path: Path, *args: str) -> list[dict]:
    from tessera.cli.main import main

    out = tmp_path / "t.json"
    with pytest.raises(SystemExit) as done:
        main(["run", *args, "--trace", "perfetto", "--trace-out", str(out)])
    assert done.value.code == 0
    return json.loads(out.read_text())["traceEvents"]


def model_part(events: list[dict]) -> tuple[dict[int, str], list[dict]]:
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name" and e["pid"] >= 10}
    return names, [e for e in events if e.get("pid", 0) >= 10 and e.get("ph") != "M"]


def test_the_inorder_model_adds_its_counters(tmp_path):
    program = tmp_path / "loop.s"
    program.write_text(LOOP)
    events = traced(tmp_path, str(program), "--arch", "rv32im", "--cycles", "inorder")
    names, ours = model_part(events)
    assert list(names.values()) == ["counters (in-order model time)"]
    ipc = [e for e in ours if e["name"] == "ipc hart0"]
    assert ipc and all(0 < e["args"]["ipc"] <= 1 for e in ipc)
    # the instruction tracks are still the trace's own, one X per retirement
    assert len([e for e in events if e.get("cat") == "instr"]) == 2 + 3 * 40 + 3


def test_the_barrel_model_adds_its_counters(tmp_path):
    import tessera_phoenix

    program = Path(tessera_phoenix.__file__).parent / "examples" / "sum.s"
    names, ours = model_part(traced(tmp_path, str(program), "--arch", "phoenix", "--cycles", "barrel"))
    assert list(names.values()) == ["counters (barrel model time)"]
    assert any(e["name"].startswith("ipc") for e in ours)


def test_the_tensix_model_adds_unit_spans_and_fifo_counters(tmp_path):
    import tessera_tensix

    run = Path(tessera_tensix.__file__).parent / "tile" / "prebuilt" / "blackhole" / "run.toml"
    names, ours = model_part(traced(tmp_path, str(run), "--cycles", "tensix"))
    assert set(names.values()) == {"units (tensix model time)", "counters"}
    spans = [e for e in ours if e["ph"] == "X"]
    assert spans and all(e["dur"] >= 1 for e in spans)
    fifo = [e for e in ours if e["ph"] == "C" and e["name"].startswith("fifo")]
    assert fifo and max(e["args"]["entries"] for e in fifo) <= TensixParams().fifo_depth


def test_the_tile_model_adds_its_engines(tmp_path):
    from tessera_tile.examples import matmul_source

    program = tmp_path / "matmul.s"
    program.write_text(matmul_source())
    names, ours = model_part(traced(tmp_path, str(program), "--arch", "tile", "--cycles", "tile"))
    assert names
    assert any(e.get("cat") == "operation" for e in ours)
