"""The commit-log formats' fast path: the core's record operation, and the ledger.

The text and JSON-lines formats record a retirement as a token (and a value) through
the core's record operation (tessera.engine.record) — inside translated blocks
without any call — and format thousands of records at once.  These tests
pin what that must never change: the trace is the same on both engines and across
every buffer boundary (records held, loop iterations per block call, agents
switching), the bulk formatter writes exactly what the per-record one writes, and
filters and the size limit still apply.
"""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trace_support import RV_LOOP, TOY_SEM, instructions, retired, rv_machine, toy_machine, trace, word

import tessera_trace
from tessera.engine import record
from tessera.errors import TesseraError
from tessera_trace import ledger as ledger_module
from tessera_trace.effects import hex_digits
from tessera_trace.ledger import ADDRESS, LITERAL, VALUE, Ledger

# a long pure-ALU loop: every instruction of its body is captured in the fast engine
RV_ALU = """
    li   a0, 0
    li   a1, {n}
    li   a2, 3
loop:
    add  a0, a0, a1
    xor  a3, a0, a2
    slli a4, a3, 3
    addi a1, a1, -1
    bne  a1, zero, loop
    li   a7, 93
    ecall
"""


def both(source: str, fmt: str = "text", **kw) -> tuple[str, str]:
    fast = trace(rv_machine(source, engine="fast"), fmt, max_steps=10_000_000, **kw)
    step = trace(rv_machine(source, engine="step"), fmt, max_steps=10_000_000, **kw)
    return fast, step


COMMIT = ("text", "jsonl")


@pytest.mark.parametrize("fmt", COMMIT)
def test_a_traced_loop_runs_as_a_block_with_captures_and_no_calls(fmt):
    m = rv_machine(RV_ALU.format(n=300), engine="fast")
    out = io.StringIO()
    tracer = tessera_trace.attach(m, fmt, out, autoclose=None)
    m.run()
    loops = [b for b in m.space.decode_cache("rv32im").blocks.values() if b.loop]
    assert loops and loops[0].captured == len(loops[0].ins) == 5 and loops[0].sinks == ("trace",)
    tracer.close()
    assert out.getvalue() == trace(rv_machine(RV_ALU.format(n=300)), fmt)


@pytest.mark.parametrize("fmt", COMMIT)
def test_the_trace_is_the_same_across_every_buffer_and_loop_boundary(fmt):
    n = 3 * record.LOOP_CAP + 7             # several block calls; ~5n records: several drains
    fast, step = both(RV_ALU.format(n=n), fmt)
    assert fast == step
    if fmt == "jsonl":
        rows = [json.loads(line) for line in fast.splitlines()]
        assert [r["index"] for r in rows] == list(range(len(rows)))   # across every drain
        assert rows[-4]["regs"] == {"a1": 0} and rows[-5]["regs"]["a4"] == (rows[-6]["regs"]["a3"] << 3)
        return
    lines = instructions(fast)
    assert len(lines) == 4 + 5 * n + 2 > 2 * ledger_module.DRAIN_AT   # li a1, n is lui + addi
    assert lines[-3].split()[3:] == ["bne", "a1,", "zero,", "0x10010"]
    assert lines[-4].endswith("a1=0x00000000")   # the counter's last value, from the bulk path


@pytest.mark.parametrize("fmt", COMMIT)
def test_loads_and_stores_among_captured_instructions_keep_their_order(fmt):
    fast, step = both(RV_LOOP.replace("li   a1, 10", "li   a1, 3000"), fmt)
    assert fast == step
    assert ("mem[0x00007ffc]<-0x" in fast and "t0=0x" in fast) if fmt == "text" else '[["w",32764,4,' in fast


@pytest.mark.parametrize("fmt", COMMIT)
@pytest.mark.parametrize("kw", [{"window": "100:5000"}, {"pc": "loop:0x10020"}, {"limit": 20_000},
                                {"window": "7000:"}])
def test_filters_and_the_limit_apply_on_the_fast_path(kw, fmt):
    fast, step = both(RV_ALU.format(n=2000), fmt, **kw)
    assert fast == step and fast
    if "limit" in kw:
        assert len(fast.encode()) <= 20_000 + 300 and "trace cut after" in fast.splitlines()[-1]
    if kw.get("window") == "100:5000":
        assert len(instructions(fast)) == 4900


@pytest.mark.parametrize("fmt", COMMIT)
def test_a_windowed_trace_is_compiled_too_and_stops_the_tracer_at_its_end(fmt):
    m = rv_machine(RV_ALU.format(n=3000), engine="fast")
    out = io.StringIO()
    tracer = tessera_trace.attach(m, fmt, out, window="2000:9000", autoclose=None)
    m.run(max_steps=5000, raise_on_budget=False)      # inside the window
    loops = [b for b in m.space.decode_cache("rv32im").blocks.values() if b.loop]
    assert loops and loops[0].captured == 5            # the window filters what the sink records
    assert not tracer.stopped
    m.run()
    assert tracer.stopped                              # record 9000 was reached
    tracer.close()
    assert out.getvalue() == trace(rv_machine(RV_ALU.format(n=3000), engine="step"), fmt, window="2000:9000")
    assert len(instructions(out.getvalue())) == 7000


@pytest.mark.parametrize("fmt", COMMIT)
@pytest.mark.parametrize("resync", [True, False])
def test_registers_poked_between_runs_are_reported_the_same_on_both_engines(fmt, resync):
    got = {}
    for engine in ("fast", "step"):
        m = rv_machine(RV_ALU.format(n=400), engine=engine)
        out = io.StringIO()
        tracer = tessera_trace.attach(m, fmt, out, autoclose=None)
        m.run(max_steps=1000, raise_on_budget=False)
        hart = m.agent("hart0")
        hart.x[14] = 0x5EED                    # a4: an ALU instruction of the loop writes it
        hart.x[20] = 0xBEEF                    # s4: no instruction writes it
        if resync:
            tracer.resync()
        m.run()
        tracer.close()
        got[engine] = out.getvalue()
    assert got["fast"] == got["step"]
    shown = ("a4=0x00005eed", "s4=0x0000beef") if fmt == "text" else ('"a4":24301', '"s4":48879')
    assert shown[0] not in got["fast"]         # the next xor writes a4: its own value is shown
    # only an instruction whose writes are not known (the ecall) compares s4
    assert (shown[1] in got["fast"]) is not resync


@pytest.mark.parametrize("fmt", COMMIT)
def test_two_agents_interleave_in_retirement_order_on_both_engines(fmt):
    loop = (word("cid", rd=1), word("li", rd=2, limm=500), word("add", rd=3, rs1=3, rs2=2),
            word("addi", rd=2, rs1=2, imm=-1), word("bne", rd=2, rs1=0, boff=-8), word("halt", rd=3))
    traces = {}
    for engine in ("fast", "step"):
        m = toy_machine(*loop, cores=2, engine=engine, quantum=37)
        traces[engine] = trace(m, fmt)
        assert len(instructions(traces[engine])) == retired(m)
    assert traces["fast"] == traces["step"]
    heads = [line.split()[0] if fmt == "text" else json.loads(line)["agent"]
             for line in instructions(traces["fast"])]
    assert heads.count("core0") == heads.count("core1") and heads[:37] == ["core0"] * 37
    assert heads[37:74] == ["core1"] * 37          # the quantum: agents switch, records stay in order


def test_an_agent_filter_leaves_the_other_agent_out_on_both_engines():
    loop = (word("li", rd=2, limm=300), word("addi", rd=2, rs1=2, imm=-1), word("bne", rd=2, rs1=0, boff=-4),
            word("halt", rd=0))
    got = {e: trace(toy_machine(*loop, cores=2, engine=e, quantum=50), "text", agents="core1")
           for e in ("fast", "step")}
    assert got["fast"] == got["step"]
    assert {line.split()[0] for line in instructions(got["fast"])} == {"core1"}
    assert len(instructions(got["fast"])) == 1 + 2 * 300 + 1


def test_sync_notes_and_traps_stay_in_order_with_held_records():
    assert trace(toy_machine(*TOY_SEM, cores=2, engine="fast"), "text") == \
        trace(toy_machine(*TOY_SEM, cores=2, engine="step"), "text")


# --------------------------------------------------------------------------- the ledger itself


class Sink:
    def __init__(self) -> None:
        self.data = b""
        self.lines = 0

    def put(self, data: bytes, lines: int | None = None) -> None:
        self.data += bytes(data)
        self.lines += lines if lines is not None else data.count(b"\n")


class State:
    head = "hart0  "


# how records are written: (hex values, indexed, the suffix after a value)
KINDS = {"text": (True, False, ""), "jsonl": (False, True, '},"mem":[]}'), "hex-indexed": (True, True, ";"),
         "hex-suffix": (True, False, " <-")}


def ledger_with(values: list, widths: list[int], kind: str = "text") -> tuple[Ledger, Sink]:
    hexed, indexed, suffix = KINDS[kind]
    sink = Sink()
    led = Ledger(sink, hexed=hexed, indexed=indexed, first=5)
    led.enter(object(), State())
    bare = led.token("00010000  00000013  nop")
    for i, (v, w) in enumerate(zip(values, widths, strict=True)):
        tok = led.token(f"0001{i:04x}  00000000  op                                a{i}=0x", w, suffix)
        led.record(tok)
        led.remember(v)
        led.record(bare)
        if i % 3 == 0:
            led.record(LITERAL)
            led.lits.append(f"0001{i:04x}  00000000  sw                               mem[0x10]<-0x{i:08x}\n")
    return led, sink


def exact_text(led: Ledger) -> bytes:
    return bytes(led._exact(led.state.head))


@pytest.mark.parametrize(("values", "widths"), [
    ([0, 1, 0xFFFF_FFFF, 0x1234_5678], [4, 4, 4, 4]),
    ([0xFFFF_FFFF_FFFF_FFFF, 5, 1 << 40], [8, 8, 8]),
    ([0xAB, 0xABCD, 0xDEAD_BEEF, 0x0123_4567_89AB_CDEF], [1, 2, 4, 8]),       # mixed widths
    ([-5, 3], [4, 4]),                                                        # negative: exact path
    ([1 << 33, 7], [4, 4]),                                                   # too wide for its register
    ([1.5, 2], [4, 4]),                                                       # not an integer
    ([np.uint32(7), np.int64(9), True], [4, 4, 4]),                           # numpy scalars, bool
    ([1 << 70, 1], [16, 16]),                                                 # 128-bit registers
])
@pytest.mark.parametrize("kind", list(KINDS))
def test_bulk_formatting_writes_exactly_what_per_record_formatting_writes(values, widths, kind):
    led, sink = ledger_with(values, widths, kind)
    expected = exact_text(led)
    held = len(led.ids)
    led.drain()
    assert sink.data == expected and sink.lines == held == expected.count(b"\n")
    assert not led.ids and not led.values and not led.lits
    if KINDS[kind][1]:                           # indexed: numbered from `first`, then on
        assert expected.startswith(b"hart0  5") and led.index == 5 + held


@pytest.mark.parametrize(("values", "digits"), [
    ([0x1234_5678, 0x10, 0xAB], (8, 8, 2)),                   # a load: register, address, byte
    ([0x0FFF_FFFC, 0x1234], (9, 4)),                          # a 9-digit address (36-bit space)
    ([0xDEAD_BEEF, 0x1_0000_0000, 7], (8, 9, 8)),             # an address wider than 8 digits
    ([1 << 36, 5], (9, 4)),                                   # too wide for its hole: exact path
    ([-1, 5], (9, 4)),                                        # negative: exact path
    ([3, 0], (2, 0)),                                         # a zero-byte access writes no digits
])
def test_templates_with_several_holes_write_what_per_record_formatting_writes(values, digits):
    """Memory records are templates with a hole per number: the bulk path must agree with the
    exact one wherever the holes are, whatever their widths, mixed with one-hole tokens."""
    sink = Sink()
    led = Ledger(sink, hexed=True)
    led.enter(object(), State())
    texts = ["00010000  0000a283  lw a0, 0(a1)" + " " * 12] + [f" part{i} 0x" for i in range(len(digits) - 1)] + [""]
    holes = [(d, ADDRESS if d % 2 else VALUE) for d in digits]
    tok = led.template(texts, holes)
    single = led.token("00010004  00000013  addi a1, a1, 1   a1=0x", 4)
    bare = led.token("00010008  00000013  nop")
    for i in range(300):   # several batches' worth, interleaved with other records
        led.record(tok)
        for v in values:
            led.remember(v)
        led.record(single)
        led.remember(i)
        led.record(bare)
    expected = exact_text(led)
    held = len(led.ids)
    led.drain()
    assert sink.data == expected and sink.lines == held
    first = expected.split(b"\n")[0].decode()
    want = "".join(t + (format(v, f"0{d}x") if how == ADDRESS else hex_digits(v, d // 2))
                   for t, v, (d, how) in zip(texts, values, holes, strict=False)) + texts[-1]
    assert first == "hart0  " + want


def test_a_template_needs_one_text_more_than_holes_and_even_widths_for_values():
    led = Ledger(Sink(), hexed=True)
    with pytest.raises(ValueError, match="one text more than holes"):
        led.template(["a", "b"], [(8, VALUE), (8, VALUE)])
    with pytest.raises(ValueError, match="an even one for a value"):
        led.template(["a", "b"], [(9, VALUE)])
    assert led.template(["a", "b"], [(9, ADDRESS)]) == 1


def test_decimal_values_are_written_as_python_writes_them():
    led, sink = ledger_with([0, 7, 1 << 64, -3], [4, 4, 8, 4], "jsonl")
    led.drain()
    lines = sink.data.decode().splitlines()
    assert lines[0].endswith("a0=0x0},\"mem\":[]}") and lines[1] == "hart0  600010000  00000013  nop"
    assert f"a2=0x{1 << 64}}}" in sink.data.decode() and "a3=0x-3}" in sink.data.decode()


def test_bulk_formatting_matches_hex_digits_for_random_values():
    rng = np.random.default_rng(7)
    values = [int(v) for v in rng.integers(0, 1 << 63, 500, dtype=np.int64)]
    widths = [8 if i % 2 else 4 for i in range(500)]
    values = [v & 0xFFFF_FFFF if w == 4 else v for v, w in zip(values, widths, strict=True)]
    led, sink = ledger_with(values, widths)
    expected = exact_text(led)
    led.drain()
    assert sink.data == expected
    first = expected.split(b"\n")[0].decode()
    assert first.endswith(f"a0=0x{values[0]:08x}")


def test_a_cut_text_trace_stops_the_tracer_and_the_machine_runs_untraced_after():
    m = rv_machine(RV_ALU.format(n=5000), engine="fast")
    out = io.StringIO()
    tracer = tessera_trace.attach(m, "text", out, limit=5000, autoclose=None)
    m.run(max_steps=1000, raise_on_budget=False)
    assert tracer.stopped and "# trace cut after" in out.getvalue()
    m.run()                                   # the rest of the run: no observer is woven in
    cache = m.space.decode_cache("rv32im")
    assert not any(b.captured for b in cache.blocks.values())
    assert m.agent("hart0").exit_code is not None
    tracer.close()
    assert len(out.getvalue().encode()) < 5000 + 300


# --------------------------------------------------------------------------- random programs

BODY = st.sampled_from(["add", "sub", "mul", "addi", "li", "ld", "st"])


@st.composite
def random_toy_loop(draw) -> tuple[int, ...]:
    """A toy loop with a random body over r3..r7; r9 points at data or, sometimes, at the
    loop's own code (stores then rewrite instructions); it ends in a halt, an illegal
    word or a fault, with or without a trap handler."""
    body = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(BODY)
        rd, rs1, rs2 = (draw(st.integers(3, 7)) for _ in range(3))
        if op in ("add", "sub", "mul"):
            body.append(word(op, rd=rd, rs1=rs1, rs2=rs2))
        elif op == "addi":
            body.append(word(op, rd=rd, rs1=rs1, imm=draw(st.integers(-100, 100))))
        elif op == "li":
            body.append(word(op, rd=rd, limm=draw(st.integers(-1000, 1000))))
        else:
            body.append(word(op, rd=rd, rs1=9, imm=4 * draw(st.integers(0, 12))))
    loop_at = 12
    data_at = 0x200
    target = draw(st.sampled_from([data_at, data_at, loop_at]))
    end = draw(st.sampled_from([[], [0xFFFF_FFFF], [word("ld", rd=3, rs1=10, imm=0)]]))
    n = len(body) + 2
    return (word("li", rd=1, limm=draw(st.integers(1, 40))), word("li", rd=9, limm=target),
            word("li", rd=10, limm=0x4_0000), *body, word("addi", rd=1, rs1=1, imm=-1),
            word("bne", rd=1, rs1=0, boff=-4 * n), *end, word("halt", rd=3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=random_toy_loop(), split=st.integers(1, 200), handler=st.booleans(), fmt=st.sampled_from(COMMIT))
def test_random_programs_trace_the_same_on_both_engines(words, split, handler, fmt):
    hot = os.environ.get("TESSERA_BLOCK_HOT")
    os.environ["TESSERA_BLOCK_HOT"] = "2"    # translate even short loops
    try:
        got = {}
        for engine in ("fast", "step"):
            m = toy_machine(*words, engine=engine)
            if handler:
                m.agent("core0").c[0] = 4 * (len(words) - 1)   # traps go to the final halt
            out = io.StringIO()
            tracer = tessera_trace.attach(m, fmt, out, autoclose=None)
            results = []
            for budget in (split, 5_000):
                try:
                    results.append(m.run(max_steps=budget, raise_on_budget=False).reason)
                except TesseraError as err:
                    results.append(type(err).__name__)
                    break
            tracer.close()
            got[engine] = (results, out.getvalue(), retired(m))
    finally:
        if hot is None:
            os.environ.pop("TESSERA_BLOCK_HOT", None)
        else:
            os.environ["TESSERA_BLOCK_HOT"] = hot
    assert got["fast"] == got["step"]
    results, text, count = got["fast"]
    if fmt == "text":
        assert len(instructions(text)) == count
    else:
        assert len([line for line in text.splitlines() if '"note"' not in line]) == count


@pytest.mark.parametrize("first", [0, 995, 999_990, 12_345_678])
def test_record_indices_are_right_across_powers_of_ten(first):
    sink = Sink()
    led = Ledger(sink, hexed=False, indexed=True, first=first)
    led.enter(object(), State())
    token = led.token(",x")
    for _ in range(2100):
        led.record(token)
    led.drain()
    numbers = [int(line.removeprefix("hart0  ").removesuffix(",x")) for line in sink.data.decode().splitlines()]
    assert numbers == list(range(first, first + 2100)) and led.index == first + 2100
