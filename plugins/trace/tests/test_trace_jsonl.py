"""The JSON-lines format: every line parses and says what the text line says."""

from __future__ import annotations

import json

import pytest
from trace_support import (
    ENGINES,
    RV_LOOP,
    RV_TINY,
    TOY_TINY,
    instructions,
    records,
    retired,
    rv_machine,
    toy_machine,
    trace,
)

KEYS = {"agent", "pc", "word", "asm", "regs", "mem", "index"}


def as_text(rec: dict, width: int) -> str:
    """The text line a JSON record stands for (32-bit registers, 8-digit addresses)."""
    effects = [f"{name}=0x{value:08x}" for name, value in rec["regs"].items()]
    effects += [f"mem[0x{addr:08x}]{'<-' if kind == 'w' else '->'}0x{value:0{2 * size}x}"
                for kind, addr, size, value in rec["mem"]]
    head = f"{rec['agent']:<{width}}  {rec['pc']:08x}  {rec['word']:08x}  "
    return head + (f"{rec['asm']:<32}  {' '.join(effects)}" if effects else rec["asm"])


@pytest.mark.parametrize("build, width", [(lambda: rv_machine(RV_LOOP), 5), (lambda: rv_machine(RV_TINY), 5),
                                          (lambda: toy_machine(*TOY_TINY), 5)])
def test_records_carry_the_text_format_s_content(build, width):
    text = instructions(trace(build(), "text"))
    machine = build()
    jsonl = trace(machine, "jsonl")
    recs = records(jsonl)
    assert all(set(rec) == KEYS for rec in recs)
    assert [rec["index"] for rec in recs] == list(range(retired(machine)))
    assert [as_text(rec, width) for rec in recs] == text


def test_values_are_plain_integers_and_memory_entries_are_kind_address_size_value():
    recs = records(trace(rv_machine(RV_TINY), "jsonl"))
    assert recs[0] == {"agent": "hart0", "index": 0, "pc": 0x10000, "word": 0x00500513,
                       "asm": "addi a0, zero, 5", "regs": {"a0": 5}, "mem": []}
    assert recs[2]["mem"] == [["w", 0x100, 4, 5]]
    assert recs[3]["regs"] == {"a1": 5} and recs[3]["mem"] == [["r", 0x100, 4, 5]]


# narrow stores of a wide register, in a loop so the fast engine runs them in blocks
RV_NARROW = """
    li   a0, 0x12345678
    li   t1, 0x100
    li   t2, 40
loop:
    sb   a0, 0(t1)
    sh   a0, 2(t1)
    lw   a1, 0(t1)
    addi a0, a0, 0x111
    addi t2, t2, -1
    bnez t2, loop
    li   a7, 93
    ecall
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_a_narrow_store_shows_the_bytes_stored_in_both_formats(engine):
    text = instructions(trace(rv_machine(RV_NARROW, engine=engine), "text"))
    recs = records(trace(rv_machine(RV_NARROW, engine=engine), "jsonl"))
    assert [as_text(rec, 5) for rec in recs] == text
    # (li a0 is two instructions) the text format used to show the whole register: <-0x12345678
    assert text[4].endswith("mem[0x00000100]<-0x78") and text[5].endswith("mem[0x00000102]<-0x5678")
    assert text[6].endswith("a1=0x56780078 mem[0x00000100]->0x56780078")
    assert recs[-8]["mem"] == [["w", 0x100, 1, (0x12345678 + 39 * 0x111) & 0xFF]]


def test_a_trap_is_a_note_record():
    from trace_support import word

    machine = toy_machine(word("li", rd=1, limm=7), 0xFFFF_FFFF, word("halt", rd=1))
    machine.agent("core0").c[0] = 0x8            # tvec: the halt
    rows = [json.loads(line) for line in trace(machine, "jsonl").splitlines()]
    assert rows[1] == {"note": "trap", "agent": "core0", "pc": 4, "trap": "illegal instruction",
                       "cause": 2, "tval": 0xFFFF_FFFF, "regs": {"epc": 4, "cause": 2}}  # trap entry set these
    assert [r["pc"] for r in rows if "note" not in r] == [0, 0x8]
    assert rows[2]["regs"] == {}  # the handler's halt changed nothing itself
