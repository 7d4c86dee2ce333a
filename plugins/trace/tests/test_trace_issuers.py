"""Instructions issued by other instructions, and execution-unit tracks: the core's two
seams for tools (``Instruction.issued_by`` with the ``expands`` flag, ``Encoding.unit``),
seen through a variant of the toy architecture.

The variant adds two expanders, in the way Tensix's MOP works: ``rep rd, rs1, n`` issues
``add rd, rd, rs1`` n times; ``wrep rd, rs1, n`` first issues ``sem.wait 0`` (which may
park the core in the middle of the expansion: the rest stays queued and the expander
resumes it when run again), then the same adds.  Its ALU and load/store rows name a unit.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from typing import Any

import attrs
import pytest
from trace_support import ENGINES, host, instructions, records, trace

from tessera.isa import Encoder, Encoding
from tessera.machine import Machine
from tessera_toyarch import TOY

OPC = 0xFC00_0000
UNITS = {"add": "ALU", "addi": "ALU", "li": "ALU", "cid": "ALU", "mul": "MUL", "ld": "LSU", "st": "LSU"}
#: core -> the instructions its expander still has to issue (a parked expansion)
QUEUES: dict[Any, deque[Any]] = {}


def _issue(cpu: Any, ins: Any, words: list[int]) -> None:
    """Run ``words`` as issued by ``ins``, each through its own observers (as Tensix's front
    end does); a wait leaves the rest queued for when ``ins`` runs again."""
    queue = QUEUES.get(cpu)
    if queue is None:
        machine, arch = cpu.machine, cpu.arch
        queue = QUEUES[cpu] = deque()
        for w in words:
            issued = machine.decoder(arch).decode(w, ins.address)
            resolve = getattr(issued.run, "resolve", None)
            if resolve is not None:
                issued.run = resolve()
            issued.issued_by = ins.mnemonic.upper()
            found = (impl(machine=machine, arch=arch, ins=issued)
                     for impl in machine.hook_calls("tessera_execute_observe"))
            issued.observers = tuple(ob for ob in found if ob is not None)
            queue.append(issued)
    while queue:
        issued = queue[0]
        issued.run(cpu, issued)           # may park the core: the expander runs again when woken
        for observe in issued.observers:
            observe(cpu, issued)
        queue.popleft()
    del QUEUES[cpu]


def rep(cpu: Any, ins: Any) -> None:
    _issue(cpu, ins, [ADD(ins.rd, ins.rs1)] * ins.imm)


def wrep(cpu: Any, ins: Any) -> None:
    _issue(cpu, ins, [word("sem.wait", sem=0)] + [ADD(ins.rd, ins.rs1)] * ins.imm)


EXPANDERS = (Encoding("rep", 30 << 26, OPC, "{rd}, {rs1}, {imm}", rep, "alu", {"expands"}),
             Encoding("wrep", 31 << 26, OPC, "{rd}, {rs1}, {imm}", wrep, "alu", {"expands", "wait"}))
ARCH = attrs.evolve(TOY, name="toy-expanders",
                    encodings=tuple(attrs.evolve(e, unit=UNITS.get(e.mnemonic, "")) for e in TOY.encodings)
                    + EXPANDERS)
ENC = Encoder(ARCH)


def word(mnemonic: str, **operands: int) -> int:
    (form,) = ARCH.encodings_named(mnemonic)
    return ENC.encode(form, operands)


def ADD(rd: int, rs: int) -> int:
    return word("add", rd=rd, rs1=rd, rs2=rs)


def machine(*words: int, cores: int = 1, engine: str = "step", arch: Any = ARCH) -> Machine:
    m = Machine(arch, host=host(), config={"echo": False, "cores": cores}, quantum=1, engine=engine)
    m.space.write_bytes(0, b"".join(ENC.to_bytes(w) for w in words))
    return m


PROGRAM = (word("li", rd=2, limm=5), word("rep", rd=3, rs1=2, imm=3), word("halt", rd=3))

# two cores: core1's expander waits in its expansion until core0 posts sem0
SEM = (
    word("cid", rd=1),
    word("beq", rd=1, rs1=0, boff=16),      # core0 -> the producer at 0x14
    word("li", rd=2, limm=7),               # core1
    word("wrep", rd=3, rs1=2, imm=2),       # 0xc: sem.wait 0, then r3 += r2 twice
    word("halt", rd=3),
    word("nop"),                            # 0x14: core0, a little late
    word("nop"),
    word("sem.post", sem=0),
    word("halt", rd=0),
)


def text_line(pc: int, w: int, asm: str, effect: str = "") -> str:
    return f"core0  {pc:08x}  {w:08x}  {asm:<32}  {effect}" if effect else f"core0  {pc:08x}  {w:08x}  {asm}"


def test_the_core_s_seams_default_to_nothing():
    """Without an architecture saying so, no instruction is issued and no row has a unit."""
    assert all(e.unit == "" for e in TOY.encodings)
    ins = Machine(TOY, host=host(), config={"echo": False}).decoder(TOY).decode(PROGRAM[0], 0)
    assert ins.issued_by is None


@pytest.mark.parametrize("engine", ENGINES)
def test_an_expander_is_listed_before_what_it_issued(engine):
    m = machine(*PROGRAM, engine=engine)
    lines = instructions(trace(m, "text"))
    add = ADD(3, 2)
    assert lines == [
        text_line(0, PROGRAM[0], "li r2, 5", "r2=0x00000005"),
        text_line(4, PROGRAM[1], "rep r3, r2, 3"),
        text_line(4, add, "  add r3, r3, r2  (REP)", "r3=0x00000005"),
        text_line(4, add, "  add r3, r3, r2  (REP)", "r3=0x0000000a"),
        text_line(4, add, "  add r3, r3, r2  (REP)", "r3=0x0000000f"),
        text_line(8, PROGRAM[2], "halt r3"),
    ]
    assert m.agent("core0").exit_code == 15 and m.agent("core0").instret == 3


def test_an_expander_that_issues_nothing_is_listed_where_it_retires():
    program = (word("li", rd=2, limm=5), word("rep", rd=3, rs1=2, imm=0), word("halt", rd=3))
    lines = instructions(trace(machine(*program), "text"))
    assert lines[1:] == [text_line(4, program[1], "rep r3, r2, 0"), text_line(8, program[2], "halt r3")]
    evs = json.loads(trace(machine(*program), "perfetto"))["traceEvents"]
    (event,) = [e for e in evs if e.get("name") == "rep"]
    assert event["ph"] == "X"                    # an instruction, not a span


@pytest.mark.parametrize("engine", ENGINES)
def test_jsonl_marks_issued_records_and_the_window_counts_the_expander_once(engine):
    rows = records(trace(machine(*PROGRAM, engine=engine), "jsonl"))
    assert [(r["index"], r["pc"], r["asm"], r.get("issued_by")) for r in rows] == [
        (0, 0, "li r2, 5", None), (1, 4, "rep r3, r2, 3", None), (2, 4, "add r3, r3, r2", "REP"),
        (3, 4, "add r3, r3, r2", "REP"), (4, 4, "add r3, r3, r2", "REP"), (5, 8, "halt r3", None)]
    assert [r["regs"] for r in rows[2:5]] == [{"r3": 5}, {"r3": 10}, {"r3": 15}]
    window = records(trace(machine(*PROGRAM, engine=engine), "jsonl", window=(1, 3)))
    assert [(r["index"], r["asm"]) for r in window] == [(1, "rep r3, r2, 3"), (2, "add r3, r3, r2")]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wait_in_the_expansion_lists_the_expander_when_it_parks(engine):
    """core1 parks on the sem.wait its ``wrep`` issued: ``wrep`` is listed then, before the
    lines core0 retires meanwhile, and once only although it runs again when woken."""
    text = trace(machine(*SEM, cores=2, engine=engine), "text")
    asm = [line.split("  ", 3)[-1].split("   ")[0].strip() for line in instructions(text)]
    core1 = [line for line in instructions(text) if line.startswith("core1")]
    assert [line.split("  ", 3)[-1].split("   ")[0].rstrip() for line in core1] == [
        "cid r1", "beq r1, r0, 0x14", "li r2, 7", "wrep r3, r2, 2", "  sem.wait 0  (WREP)",
        "  add r3, r3, r2  (WREP)", "  add r3, r3, r2  (WREP)", "halt r3"]
    assert asm.index("wrep r3, r2, 2") < asm.index("sem.post 0") < asm.index("sem.wait 0  (WREP)")


@pytest.mark.parametrize("engine", ENGINES)
def test_perfetto_spans_an_expander_over_what_it_issued_and_its_waits(engine):
    evs = json.loads(trace(machine(*SEM, cores=2, engine=engine), "perfetto"))["traceEvents"]
    tid = {e["args"]["name"].split()[0]: e["tid"] for e in evs
           if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1}
    mine = [e for e in evs if e.get("pid") == 1 and e.get("tid") == tid["core1"] and e["ph"] != "M"]
    (begin,) = [e for e in mine if e["ph"] == "B"]
    (end,) = [e for e in mine if e["ph"] == "E"]
    assert begin["name"] == "wrep" and begin["args"] == {"pc": "0x0000000c", "asm": "wrep r3, r2, 2"}
    (wait,) = [e for e in mine if e.get("name", "").startswith("wait sem0")]
    issued = [e for e in mine if e["ph"] == "X" and e["args"].get("issued_by") == "WREP"]
    assert [e["name"] for e in issued] == ["sem.wait", "add", "add"]
    inside = [wait, *issued]
    assert all(begin["ts"] <= e["ts"] and e["ts"] + e["dur"] <= end["ts"] for e in inside)
    assert begin["ts"] == wait["ts"]             # listed when it parked
    assert_nested(evs)


@pytest.mark.parametrize("engine", ENGINES)
def test_perfetto_has_a_track_per_unit_and_agent(engine):
    evs = json.loads(trace(machine(*SEM, cores=2, engine=engine), "perfetto"))["traceEvents"]
    (units,) = [e for e in evs if e["ph"] == "M" and e["name"] == "process_name" and e["args"]["name"] == "units"]
    lanes = {e["tid"]: e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == units["pid"]}
    assert sorted(lanes.values()) == ["ALU (core0)", "ALU (core1)"]   # cid and li: ALU; nop, sem.*: none
    instr = [e for e in evs if e.get("cat") == "instr" and e["ph"] == "X"]
    on_units = [e for e in evs if e.get("cat") == "unit"]
    agent_of = {e["tid"]: e["args"]["name"].split()[0] for e in evs
                if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == 1}
    want = sorted((agent_of[e["tid"]], e["ts"], e["dur"], e["name"]) for e in instr
                  if UNITS.get(e["name"]))
    got = sorted((lanes[e["tid"]].split("(")[1].rstrip(")"), e["ts"], e["dur"], e["name"]) for e in on_units)
    assert got == want and {lanes[e["tid"]].split()[0] for e in on_units} == {"ALU"}
    assert ("core1", "add") in {(lanes[e["tid"]][5:-1], e["name"]) for e in on_units}   # issued ones too
    assert_nested(evs)


def test_an_architecture_without_units_has_no_unit_tracks():
    program = (word("li", rd=2, limm=5), word("halt", rd=2))
    evs = json.loads(trace(machine(*program, arch=TOY), "perfetto"))["traceEvents"]
    assert {e["pid"] for e in evs if "pid" in e} == {1}
    assert not [e for e in evs if e.get("cat") == "unit"]


def assert_nested(evs: list[dict[str, Any]]) -> None:
    """Duration events on one track nest (Perfetto drops slices that overlap otherwise)."""
    spans: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    opened: dict[tuple[int, int], list[int]] = defaultdict(list)
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
        for start, end in sorted(intervals, key=lambda s: (s[0], -s[1])):
            while stack and stack[-1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1], (key, start, end, stack)
            stack.append(end)
