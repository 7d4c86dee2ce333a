"""``--cycles-trace`` with the ``tile`` model: the engines' operation spans, the harts' stall
spans and the counters agree with the model's report and with the hand-counted cycles of
test_cycles_tilex's worked example; the VCD is a valid dump; nothing is recorded (and
nothing changes) unless the option is given."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from test_cycles_tilex import LOAD_MMA, host, machine

import tessera_cycles
from tessera.machine import Machine
from tessera_cycles import cli as cycles_cli

#: the worked example's times (test_cycles_tilex: the load dispatched at 6, 32 busy + 300;
#: the MMA dispatched at 340 once `twait all` let go at 338, 16 busy + 8)
LOAD_AT, LOAD_DONE, MMA_AT, MMA_DONE = 6, 338, 340, 364


def run_cli(tmp_path: Path, source: str, trace: str | None, *settings: str) -> dict[str, Any]:
    """``tessera run`` of ``source`` under the tile model (one thread per PE, perfect caches
    unless ``settings`` say otherwise); the report it wrote."""
    from tessera.cli.main import cli

    program = tmp_path / "prog.s"
    program.write_text(source)
    report = tmp_path / "report.json"
    args = ["run", str(program), "--arch", "tile", "--cycles", "tile", "--set", "tile.threads_per_pe=1",
            "--set", "echo=false", "--set", "cycles.caches=false", "--cycles-report", str(report)]
    for item in settings:
        args += ["--set", item]
    if trace is not None:
        args += ["--cycles-trace", str(tmp_path / trace)]
    cli.main(args=args, prog_name="tessera", standalone_mode=False, obj=host())
    return json.loads(report.read_text())


def load(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["traceEvents"]


def tracks(events: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The ``X`` spans per track name, in time order."""
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    out: dict[str, list[dict[str, Any]]] = {}
    for e in events:
        if e["ph"] == "X":
            out.setdefault(names[e["tid"]], []).append(e)
    for spans in out.values():
        spans.sort(key=lambda e: e["ts"])
    return out


def operations(by_track: dict[str, list[dict[str, Any]]], prefix: str) -> list[dict[str, Any]]:
    """The operation spans of engine track ``prefix`` (``hart0 MMA``) over all its lanes."""
    return [e for name, spans in by_track.items() for e in spans
            if e["cat"] == "operation" and (name == prefix or name.startswith(prefix + " #"))]


def disjoint(spans: list[dict[str, Any]]) -> bool:
    return all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(spans, spans[1:]))


def counters(events: list[dict[str, Any]], name: str) -> list[tuple[int, int]]:
    return [(e["ts"], e["args"]["operations"]) for e in events if e["ph"] == "C" and e["name"] == name]


def test_the_worked_example_draws_each_operation_and_wait_at_its_hand_counted_cycles(tmp_path):
    rep = run_cli(tmp_path, LOAD_MMA, "tl.json")
    events = load(tmp_path / "tl.json")
    by_track = tracks(events)
    lsu, mma = operations(by_track, "hart0 LSU"), operations(by_track, "hart0 MMA")
    assert [(e["name"], e["ts"], e["ts"] + e["dur"]) for e in lsu] == [("tld.g.us", LOAD_AT, LOAD_DONE)]
    assert [(e["ts"], e["ts"] + e["dur"]) for e in mma] == [(MMA_AT, MMA_DONE)]
    assert mma[0]["name"].startswith("tmma") and mma[0]["args"]["dispatch"] == MMA_AT
    assert lsu[0]["args"]["bytes"] == 1024 and lsu[0]["args"]["space"] == "global"
    # the ends are the report's completions; the busy spans its busy cycles
    assert LOAD_DONE == rep["units"]["hart0.lsu"]["done_at"] and MMA_DONE == rep["units"]["hart0.mma"]["done_at"]
    assert [e["dur"] for e in by_track["hart0 MMA busy"]] == [rep["units"]["hart0.mma"]["busy"]] == [16]
    # the stalls: `twait all` in EX at 7 held until the load completed, `twait mma` at 341 until 364
    stalls = [(e["name"], e["ts"], e["ts"] + e["dur"]) for e in by_track["hart0 tile stall"]]
    assert stalls == [("twait all", 7, LOAD_DONE), ("twait mma", 341, MMA_DONE)]
    assert sum(e["dur"] for e in by_track["hart0 tile stall"]) == rep["agents"]["hart0"]["stalls"]["tile"]
    assert counters(events, "outstanding hart0 LSU") == [(LOAD_AT, 1), (LOAD_DONE, 0)]
    assert counters(events, "outstanding hart0 MMA") == [(MMA_AT, 1), (MMA_DONE, 0)]


def test_back_to_back_loads_queue_on_the_busy_track_and_overlap_on_two_lanes(tmp_path):
    source = LOAD_MMA.replace("tld.g.us t4, (a0)", "tld.g.us t4, (a0)\n        tld.g.us t5, (a0)")
    rep = run_cli(tmp_path, source, "tl.json")
    events = load(tmp_path / "tl.json")
    by_track = tracks(events)
    # the second load (dispatched at 8) waits for the LSU until 38 and completes at 370 while
    # the first is still in its latency: a second lane; the busy spans are back to back
    assert [(e["ts"], e["ts"] + e["dur"]) for e in by_track["hart0 LSU"]] == [(6, 338)]
    assert [(e["ts"], e["ts"] + e["dur"], e["args"]["queued"]) for e in by_track["hart0 LSU #2"]] == [(38, 370, 30)]
    assert [(e["ts"], e["dur"]) for e in by_track["hart0 LSU busy"]] == [(6, 32), (38, 32)]
    assert rep["units"]["hart0.lsu"]["queued"] == 30 and rep["units"]["hart0.lsu"]["done_at"] == 370
    assert counters(events, "queue hart0 LSU") == [(6, 0), (8, 1), (38, 0)]


@pytest.mark.parametrize("mode", ["eager", "timed"])
def test_both_engines_and_tile_modes_draw_the_same_timeline(tmp_path, mode):
    drawn = []
    for engine in ("step", "fast"):
        out = tmp_path / f"{engine}.json"
        m = machine(LOAD_MMA, engine, cycles="tile", **{"tile.mode": mode, "cycles.caches": False})
        cycles_cli.configure(m, {"cycles_trace": str(out)})
        m.run(max_steps=10_000)
        cycles_cli.write_report(m)
        drawn.append(out.read_text())
    assert drawn[0] == drawn[1]
    assert '"name":"tld.g.us"' in drawn[0]     # the form is found in timed mode too (the engine prices it)


def matmul_run(tmp_path: Path, trace: str | None) -> tuple[Machine, dict[str, Any]]:
    """The tile architecture's tiled-matmul example (two harts: TMA, MMA, ALU, LSU and
    their waits), checked, under the model; ``trace`` a file name for --cycles-trace."""
    from tessera.cli.demo import load_example

    h = host()
    arch = h.architecture("tile")
    example = next(e for e in arch.examples if e.name == "tiled-matmul")
    m = Machine(arch, host=h, config={"echo": False, "cycles": "tile"}, engine="fast")
    load_example(m, example)
    if trace is not None:
        cycles_cli.configure(m, {"cycles_trace": str(tmp_path / trace)})
    result = m.run(max_steps=example.max_steps)
    assert example.check(m, result) is None
    cycles_cli.write_report(m)
    rep = tessera_cycles.report(m)
    assert rep is not None
    return m, rep


def test_the_matmul_example_spans_agree_with_the_report(tmp_path):
    _m, rep = matmul_run(tmp_path, "mm.json")
    events = load(tmp_path / "mm.json")
    by_track = tracks(events)
    ops = [e for e in events if e["ph"] == "X" and e["cat"] == "operation"]
    # one span per tile operation the harts dispatched (the report counts them twice over)
    assert len(ops) == sum(a["tile_ops"] for a in rep["agents"].values()) \
        == sum(u["instructions"] for u in rep["units"].values()) > 8
    assert {"hart0", "hart1"} == {name.split()[0] for name in by_track}
    for key, unit in rep["units"].items():
        hart, engine = key.split(".")
        track = f"{hart} {engine.upper()}"
        spans = operations(by_track, track)
        busy = by_track[f"{track} busy"]
        assert disjoint(busy), track                     # the engine itself is serial
        assert sum(e["dur"] for e in busy) == unit["busy"], track
        assert sum(e["args"]["queued"] for e in spans) == unit["queued"], track
        assert max(e["ts"] + e["dur"] for e in spans) == unit["done_at"], track
        assert all(e["args"]["done"] == e["ts"] + e["dur"] and e["ts"] >= e["args"]["dispatch"] for e in spans)
        for name, lane in by_track.items():              # each lane's operations never overlap
            if name == track or name.startswith(track + " #"):
                assert disjoint(lane), name
        for label in ("queue", "outstanding"):
            levels = counters(events, f"{label} {track}")
            assert min(v for _t, v in levels) >= 0 and levels[-1][1] == 0, (label, track)
    for hart, agent in rep["agents"].items():
        stalls = by_track[f"{hart} tile stall"]
        assert disjoint(stalls) and sum(e["dur"] for e in stalls) == agent["stalls"]["tile"] > 0
        # the IPC counters: the intervals' instructions add up to the hart's (4-digit rounding)
        ipc = [(e["ts"], e["args"]["ipc"]) for e in events if e["ph"] == "C" and e["name"] == f"ipc {hart}"]
        ends = [t for t, _ in ipc[1:]] + [agent["cycles"]]
        counted = sum(v * (end - t) for (t, v), end in zip(ipc, ends))
        assert abs(counted - agent["instructions"]) <= 0.001 * agent["cycles"], hart


def test_the_timeline_as_a_value_change_dump(tmp_path):
    pytest.importorskip("vcd", reason="VCD output needs pyvcd (pip install 'tessera-cycles[vcd]')")
    run_cli(tmp_path, LOAD_MMA, "tl.vcd")
    header, _, body = (tmp_path / "tl.vcd").read_text().partition("$enddefinitions $end")
    ids, scope = {}, []
    for line in header.splitlines():       # $scope module mma $end ... $var wire 1 % busy $end
        parts = line.split()
        if parts[:1] == ["$scope"]:
            scope.append(parts[2])
        elif parts[:1] == ["$upscope"]:
            scope.pop()
        elif parts[:1] == ["$var"]:
            ids[".".join(scope[1:] + [parts[4]])] = parts[3]
    assert {"hart0.stall", "hart0.lsu.busy", "hart0.mma.busy", "hart0.mma.outstanding"} <= set(ids)
    times: list[int] = []
    seen: dict[str, list[tuple[int, str]]] = {}
    now = 0
    for line in body.splitlines():           # "#340", "1%", "b1 '" (an identifier may be "#")
        if line.startswith("#") and line[1:].isdigit():
            now = int(line[1:])
            times.append(now)
        elif line[:1] in ("0", "1"):
            seen.setdefault(line[1:], []).append((now, line[0]))
        elif line.startswith("b"):
            value, ident = line[1:].split()
            seen.setdefault(ident, []).append((now, str(int(value, 2))))
    assert times == sorted(set(times))               # time only moves forward
    assert seen[ids["hart0.mma.busy"]] == [(0, "0"), (MMA_AT, "1"), (MMA_AT + 16, "0")]
    assert seen[ids["hart0.stall"]] == [(0, "0"), (7, "1"), (LOAD_DONE, "0"), (341, "1"), (MMA_DONE, "0")]
    assert seen[ids["hart0.lsu.outstanding"]][-1] == (LOAD_DONE, "0")


def test_nothing_is_recorded_or_changed_without_the_option(tmp_path):
    traced = run_cli(tmp_path, LOAD_MMA, "tl.json")
    plain = run_cli(tmp_path, LOAD_MMA, None)
    assert traced == plain
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog.s", "report.json", "tl.json"]
    quiet, _ = matmul_run(tmp_path, None)
    assert quiet.timing.times.timeline is None and quiet.timing.samples is None
    drawn, drawn_rep = matmul_run(tmp_path, "mm.json")
    assert drawn.timing.times.timeline is not None
    assert tessera_cycles.report(quiet) == drawn_rep
    assert quiet.agent("hart0").x == drawn.agent("hart0").x
    assert quiet.tile.threads["hart1"].state() == drawn.tile.threads["hart1"].state()


def test_a_snapshot_keeps_the_times_not_the_drawing(tmp_path):
    m = machine(LOAD_MMA, cycles="tile")
    cycles_cli.configure(m, {"cycles_trace": str(tmp_path / "tl.json")})
    m.run(max_steps=10_000)
    assert m.timing.times.timeline.ops
    times = pickle.loads(pickle.dumps(m.timing.times))
    assert times.timeline is None and times.report() == m.timing.times.report()


def test_a_perfetto_tracer_gets_the_same_tracks():
    """``record_timeline``/``trace_events`` (the hook --trace perfetto asks): the operations
    and stalls --cycles-trace draws, in the model's own pids."""
    m = machine(LOAD_MMA, cycles="tile", **{"cycles.caches": False})
    assert m.timing.record_timeline() is True
    m.run(max_steps=10_000)
    events = m.timing.trace_events()
    assert {e["pid"] for e in events} == {1, 2}
    spans = [(e["name"], e["ts"], e["ts"] + e["dur"]) for e in events if e["ph"] == "X" and e["cat"] != "busy"]
    assert spans == [("twait all", 7, LOAD_DONE), ("twait mma", 341, MMA_DONE), ("tld.g.us", LOAD_AT, LOAD_DONE),
                     (next(e["name"] for e in events if e.get("cat") == "operation" and e["ts"] == MMA_AT),
                      MMA_AT, MMA_DONE)]
    assert any(e["name"] == "ipc hart0" for e in events)


def test_other_models_are_still_refused_with_the_updated_message(tmp_path, capsys):
    from tessera.cli.main import main

    program = tmp_path / "prog.s"
    program.write_text(LOAD_MMA)
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(program), "--arch", "tile", "--cycles-trace", str(tmp_path / "x.json")])
    assert exit_.value.code == 64
    assert "needs the tensix, tile, inorder or barrel cycle model" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
