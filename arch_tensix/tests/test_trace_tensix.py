"""Tracing the coprocessor (docs/tensix.md, "Tracing the coprocessor"; docs/trace.md).

``--trace text`` lists the instructions each MOP and REPLAY expands to under the
instruction that made them; ``--trace perfetto`` has a track per thread and one per
execution unit and thread, and a thread's wait span names the exact condition.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import tessera_tensix.plugin
import tessera_trace
from tessera.errors import Deadlock
from tessera.isa.asm import assemble
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_tensix.arch import TENSIX_BH, TENSIX_WH
from tessera_tensix.isa import FRONT_END, resource, row_info
from tessera_tensix.mop import expand

ENGINES = ("fast", "step")
NOP = 0x0200_0000
INC1, INC3 = 0x7900_1115, 0x7900_3115        # sfpiadd L1,L1,1,5 / L1 += 3
INC_L2 = 0x7900_2225                         # sfpiadd L2,L2,2,5
#: MopCfg of the MOP kernels: template 1, 2 outer x 2 inner, LoopOp = a REPLAY of entries
#: 4-5, its last-iteration ops L1 += 1 / += 3
MOP_CFG = [2, 2, NOP, NOP, NOP, 0x0401_0020, NOP, INC1, INC3]

# one thread: load two replay entries (no execute), a MOP whose expansion replays them,
# then a REPLAY of its own
EXPANSIONS = f"""
    ttreplay 4,2,0,1          # 0x00: record the next two, do not execute
    sfpiadd L1,L1,0x001,5     # 0x04
    sfpiadd L2,L2,0x002,5     # 0x08
    ttmop 1,0,0               # 0x0c
    ttreplay 4,2,0,0          # 0x10
    end
mop:
    .word {", ".join(hex(w) for w in MOP_CFG)}
"""

# three threads: T1's MOP waits for T0's SEMPOST (SEMWAIT latched in front of it), then
# T1 waits for ever on a STALLWAIT condition (SrcA never reaches the matrix unit)
THREADS = """
unpack:
    ttseminit 1,0,2
    ttsetdmareg 0,0,0,1
    ttsempost 2               # MATH_PACK: T1 may go on
    end
math:
    ttsemwait 256,2,1         # block the SFPU while MATH_PACK is 0
    ttmop 1,0,0
    ttsemget 2
    ttstallwait 64,{cond}     # block MATH until SrcA bank 0 is the matrix unit's: never
    {zeroacc}
    end
math_mop:
    .word 1, 2, 0x02000000, 0x02000000, 0x02000000
    .word 0x79001115, 0x02000000, 0x79001115, 0x79001115
"""
CHIPS = {"tensix": (TENSIX_BH, 1 << 7, "ttzeroacc 1,0,0,0,0"), "tensix-wh": (TENSIX_WH, 1 << 10, "ttzeroacc 1,0,0,0")}


def host() -> PluginHost:
    h = PluginHost(load_entry_points=False, use_environment=False)
    h.register(tessera_tensix.plugin, "tensix")
    h.register(tessera_trace.plugin, "trace")
    return h


def machine(arch: Any, source: str, engine: str) -> Machine:
    m = Machine(arch, host=host(), config={}, engine=engine)
    program = assemble(arch, source)
    for address, blob in program.segments:
        m.space.write_bytes(address, bytes(blob))
    m.symbols.update(program.symbols)
    return m


def trace(m: Machine, fmt: str) -> str:
    out = io.StringIO()
    tracer = tessera_trace.attach(m, fmt, out, autoclose=None)
    try:
        m.run(max_steps=10_000)
    except Deadlock:
        pass
    tracer.close()
    return out.getvalue()


def column(line: str) -> tuple[int, str]:
    """(pc, disassembly column) of a text-trace line: ``AGENT  PC  WORD  ASM`` (no effects:
    Tensix state is not in register lists)."""
    agent, pc = line.split()[:2]
    return int(pc, 16), line[len(agent) + 2 + 8 + 2 + 8 + 2:].rstrip()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("arch", [TENSIX_BH, TENSIX_WH], ids=lambda a: a.name)
def test_text_lists_each_expansion_under_its_mop_or_replay(arch, engine):
    lines = trace(machine(arch, EXPANSIONS, engine), "text").splitlines()
    got = [column(line) for line in lines]
    # what the MOP issues, from the expander's own model: REPLAYs and L1 increments
    words = expand(1, 0, 0, MOP_CFG)
    assert words == [0x0401_0020, INC3, 0x0401_0020, INC1]
    replayed = ["    sfpiadd L1,L1,0x001,5  (REPLAY from MOP)", "    sfpiadd L2,L2,0x002,5  (REPLAY from MOP)"]
    assert got == [
        (0x00, "ttreplay 4,2,0,1"),              # the two recorded words did not execute: no lines
        (0x0C, "ttmop 1,0,0"),                   # the MOP first, then what it issued
        (0x0C, "  ttreplay 4,2,0,0  (MOP)"), *[(0x0C, r) for r in replayed],
        (0x0C, "  sfpiadd L1,L1,0x003,5  (MOP)"),
        (0x0C, "  ttreplay 4,2,0,0  (MOP)"), *[(0x0C, r) for r in replayed],
        (0x0C, "  sfpiadd L1,L1,0x001,5  (MOP)"),
        (0x10, "ttreplay 4,2,0,0"),
        (0x10, "  sfpiadd L1,L1,0x001,5  (REPLAY)"), (0x10, "  sfpiadd L2,L2,0x002,5  (REPLAY)"),
        (0x14, "end"),
    ]
    # jsonl says the same as data: each issued record names its issuer
    rows = [json.loads(line) for line in trace(machine(arch, EXPANSIONS, engine), "jsonl").splitlines()]
    assert [r.get("issued_by") for r in rows] == [None, None, *(["MOP"] + ["REPLAY from MOP"] * 2 + ["MOP"]) * 2,
                                                  None, "REPLAY", "REPLAY", None]


def test_the_cli_prints_the_same_text_trace(tmp_path):
    src = tmp_path / "k.s"
    src.write_text(EXPANSIONS)
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "tensix,trace"
    if os.environ.get("TESSERA_ENGINE"):
        env["TESSERA_ENGINE"] = os.environ["TESSERA_ENGINE"]
    res = subprocess.run(cmd + ["run", "--arch", "tensix", str(src), "--trace", "text", "--trace-out", "-"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout == trace(machine(TENSIX_BH, EXPANSIONS, "fast"), "text")
    assert "t0  0000000c  01800000  ttmop 1,0,0\n" in res.stdout


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(CHIPS))
def test_perfetto_has_thread_and_unit_tracks_and_names_each_wait(name, engine):
    arch, cond, zeroacc = CHIPS[name]
    evs = json.loads(trace(machine(arch, THREADS.format(cond=cond, zeroacc=zeroacc), engine),
                           "perfetto"))["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    track = {n.split()[0]: key for key, n in names.items() if key[0] == 1}
    assert {"t0", "t1", "machine"} <= set(track)
    # every instruction with a backend unit is also on its unit's track for that thread
    unit_of = {enc.mnemonic: resource(row_info(enc).name) for enc in arch.encodings
               if row_info(enc) is not None and row_info(enc).name not in FRONT_END}
    by_track = {key: n.split()[0] for key, n in names.items()}
    instr = [e for e in evs if e.get("cat") == "instr" and e["ph"] == "X"]
    want = sorted((unit_of[e["name"]], by_track[(1, e["tid"])], e["ts"], e["name"]) for e in instr
                  if unit_of.get(e["name"], "NONE") != "NONE")
    got = sorted((names[(e["pid"], e["tid"])].split()[0], names[(e["pid"], e["tid"])].split()[1][1:-1],
                  e["ts"], e["name"]) for e in evs if e.get("cat") == "unit")
    assert got == want
    assert {u for u, *_ in got} == {"SYNC", "THCON", "SFPU"}
    assert ("SFPU", "t1", "sfpiadd") in {(u, a, n) for u, a, _ts, n in got}   # the MOP issued them
    # T1's waits, on its track, named by their exact condition
    t1 = [e for e in evs if (e.get("pid"), e.get("tid")) == track["t1"] and e["ph"] != "M"]
    waits = [e for e in t1 if e.get("cat") == "sync" and e["ph"] == "X"]
    assert [w["name"].split(" (")[0] for w in waits] == [
        "wait tensix: T1 SEMWAIT MATH_PACK", f"wait tensix: T1 STALLWAIT C{cond.bit_length() - 1}: "
        "SrcA bank 0 is owned by the unpackers"]
    sempost = next(e for e in instr if e["name"] == "ttsempost")
    assert waits[0]["ts"] + waits[0]["dur"] == sempost["ts"]    # woken by T0's SEMPOST
    assert waits[1]["args"]["unfinished"] is True              # the deadlock
    # the MOP is a span over what it issued and the wait of its first issued instruction
    (begin,), (end,) = [e for e in t1 if e["ph"] == "B"], [e for e in t1 if e["ph"] == "E"]
    assert begin["name"] == "ttmop" and begin["ts"] == waits[0]["ts"]
    issued = [e for e in t1 if e["ph"] == "X" and "issued_by" in e.get("args", {})]
    assert len(issued) == 2 and all(begin["ts"] <= e["ts"] and e["ts"] + e["dur"] <= end["ts"] for e in issued)
    _assert_nested(evs)


def test_a_tracer_attached_later_sees_expansions_decoded_before():
    """Expanded words are cached with their observers; attaching a tracer flushes the
    machine's caches, and that cache with them."""
    m = machine(TENSIX_BH, EXPANSIONS, "fast")
    core = m.ext.get("tensix")
    before = core.decode(INC1, 0x0C, "MOP")
    assert before.issued_by == "MOP" and before.observers == ()
    assert core.decode(INC1, 0x0C, "MOP") is before              # cached
    tracer = tessera_trace.attach(m, "text", io.StringIO(), autoclose=None)
    after = core.decode(INC1, 0x0C, "MOP")
    assert after is not before and len(after.observers) == 1
    tracer.close()


def _assert_nested(evs: list[dict[str, Any]]) -> None:
    """Duration events on one track nest (Perfetto drops slices that overlap otherwise)."""
    spans: dict[Any, list[tuple[int, int]]] = defaultdict(list)
    opened: dict[Any, list[int]] = defaultdict(list)
    for e in evs:
        key = (e.get("pid"), e.get("tid"))
        if e["ph"] == "X":
            spans[key].append((e["ts"], e["ts"] + e["dur"]))
        elif e["ph"] == "B":
            opened[key].append(e["ts"])
        elif e["ph"] == "E":
            spans[key].append((opened[key].pop(), e["ts"]))
    assert not any(opened.values())
    for key, intervals in spans.items():
        stack: list[int] = []
        for start, stop in sorted(intervals, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= start:
                stack.pop()
            assert not stack or stop <= stack[-1], (key, start, stop, stack)
            stack.append(stop)
