"""The text format: exact lines, fixed columns, determinism, engines, traps, slow paths."""

from __future__ import annotations

import io

import pytest
from trace_support import (
    ENGINES,
    RV_HOT,
    RV_LOOP,
    RV_TINY,
    RV_TINY_TEXT,
    TOY_TINY,
    host,
    instructions,
    retired,
    rv_machine,
    toy_machine,
    trace,
    word,
)

import tessera
import tessera_trace
from tessera.isa.asm import assemble

TOY_TINY_TEXT = [
    "core0  00000000  14400100  li r1, 0x100                      r1=0x00000100",
    "core0  00000004  14800006  li r2, 6                          r2=0x00000006",
    "core0  00000008  14c00007  li r3, 7                          r3=0x00000007",
    "core0  0000000c  0d08c000  mul r4, r2, r3                    r4=0x0000002a",
    "core0  00000010  1d040000  st r4, 0(r1)                      mem[0x00000100]<-0x0000002a",
    "core0  00000014  19440000  ld r5, 0(r1)                      r5=0x0000002a mem[0x00000100]->0x0000002a",
    "core0  00000018  45400000  halt r5",
]


@pytest.mark.parametrize("engine", ENGINES)
def test_rv32im_commit_log_is_exactly_this(engine):
    machine = rv_machine(RV_TINY, engine=engine)
    assert trace(machine, "text").splitlines() == RV_TINY_TEXT
    assert machine.agent("hart0").exit_code == 5


@pytest.mark.parametrize("engine", ENGINES)
def test_toy_commit_log_is_exactly_this(engine):
    # agents core0 and dma: names are padded to the longest, "core0"
    machine = toy_machine(*TOY_TINY, engine=engine)
    assert trace(machine, "text").splitlines() == TOY_TINY_TEXT
    assert machine.agent("core0").exit_code == 42


def test_columns_line_up_and_every_retirement_has_a_line():
    machine = rv_machine(RV_LOOP)
    lines = instructions(trace(machine, "text"))
    assert len(lines) == retired(machine) == 3 + 5 * 10 + 2
    assert {(line[5:7], line[15:17], line[25:27]) for line in lines} == {("  ", "  ", "  ")}
    effects = [line for line in lines if "=0x" in line or "mem[" in line]
    assert effects and {(line[59:61], line[61] != " ") for line in effects} == {("  ", True)}


@pytest.mark.parametrize("fmt", list(tessera_trace.FORMATS))
def test_two_runs_give_the_same_trace(fmt):
    assert trace(rv_machine(RV_LOOP), fmt) == trace(rv_machine(RV_LOOP), fmt)
    assert trace(toy_machine(*TOY_TINY), fmt) == trace(toy_machine(*TOY_TINY), fmt)


@pytest.mark.parametrize("fmt", list(tessera_trace.FORMATS))
def test_fast_and_step_engines_give_the_same_trace(fmt):
    fast = rv_machine(RV_HOT, engine="fast")
    out = io.StringIO()
    tracer = tessera_trace.attach(fast, fmt, out, autoclose=None)
    fast.run()
    assert fast.space.decode_cache("rv32im").blocks          # the loop did run as a translated block
    tracer.close()
    assert out.getvalue() == trace(rv_machine(RV_HOT, engine="step"), fmt)


def test_tracing_changes_nothing_in_the_machine():
    plain = rv_machine(RV_LOOP)
    plain.run(max_steps=10_000)
    traced = rv_machine(RV_LOOP)
    trace(traced, "text")
    assert traced.state_hash() == plain.state_hash()


def test_a_trap_is_a_note_and_the_trapping_instruction_has_no_line():
    machine = toy_machine(
        word("li", rd=1, limm=7),
        0xFFFF_FFFF,                            # 0x4: not a toy instruction
        word("halt", rd=1),                     # never reached
        word("nop"),
        word("csrr", rd=2, csr=2),              # 0x10, the handler: r2 = cause
        word("halt", rd=2))
    machine.agent("core0").c[0] = 0x10          # tvec
    text = trace(machine, "text")
    lines = text.splitlines()
    # what taking the trap changed (epc, cause) is the trap's doing: it is on the note ...
    assert lines[1] == ("# core0: trap at 0x00000004: illegal instruction (cause 2, value 0xffffffff); "
                        "entry set epc=0x00000004 cause=0x00000002")
    assert [line.split()[1] for line in instructions(text)] == ["00000000", "00000010", "00000014"]
    # ... not on the handler's first instruction, which shows only what it changed
    assert lines[2].endswith("csrr r2, cause                    r2=0x00000002")
    assert len(instructions(text)) == retired(machine) == 3


class FlushOnTrap:
    """Writes the trace out between the trap and its entry (so the note cannot be completed)."""

    TESSERA_API_VERSION = 1

    def __init__(self) -> None:
        self.tracer = None

    @tessera.hookimpl(trylast=True)
    def tessera_trap(self, agent, trap):
        self.tracer.out.flush()


@pytest.mark.parametrize("engine", ENGINES)
def test_trap_entry_changes_written_after_the_note_get_a_note_of_their_own(engine):
    flusher = FlushOnTrap()
    h = host()
    h.register(flusher, "flusher")
    machine = toy_machine(word("li", rd=1, limm=7), 0xFFFF_FFFF, word("halt", rd=1), word("nop"),
                          word("halt", rd=0), h=h, engine=engine)
    machine.agent("core0").c[0] = 0x10          # tvec
    out = io.StringIO()
    flusher.tracer = tessera_trace.attach(machine, "text", out)
    machine.run(max_steps=100)
    lines = out.getvalue().splitlines()
    assert lines[1] == "# core0: trap at 0x00000004: illegal instruction (cause 2, value 0xffffffff)"
    assert lines[2] == "# core0: trap entry set epc=0x00000004 cause=0x00000002"
    assert lines[3].endswith("halt r0")


def test_registers_set_before_the_run_are_not_the_first_instruction_s_doing():
    machine = rv_machine(RV_TINY)
    tracer = tessera_trace.attach(machine, "text", out := io.StringIO())
    machine.agent("hart0").x[6] = 0x1234        # t1, before the run: not an effect
    machine.run(max_steps=100)
    tracer.close()
    assert out.getvalue().splitlines() == RV_TINY_TEXT


class SecondWrite:
    """Instruments ``add`` to also write t2: an implicit second register effect."""

    TESSERA_API_VERSION = 1

    @tessera.hookimpl
    def tessera_execute_instrument(self, ins):
        if ins.mnemonic != "add":
            return None

        def after(agent, ins):
            agent.x[7] = agent.x[ins.rd] + 1

        return None, after


def test_an_instruction_changing_two_registers_shows_both_in_register_order():
    h = host()
    h.register(SecondWrite(), "second")
    machine = rv_machine(RV_TINY, h=h)
    lines = trace(machine, "text").splitlines()
    assert lines[4].endswith("t2=0x0000000b a2=0x0000000a")         # x7 before x12
    assert lines[:4] == RV_TINY_TEXT[:4] and lines[5:] == RV_TINY_TEXT[5:]


def test_code_written_while_running_is_traced_as_the_new_instruction():
    # the loop rewrites its own `addi a1, a1, -1` into `addi a1, a1, -2` once
    source = """
        li   a1, 5
        la   t0, dec
        lw   t1, 0(t0)
        li   t2, 0xfff00000          # imm -1 -> -2: subtract 1 from bits 31:20
        add  t1, t1, t2
    loop:
        beq  a1, zero, done
    dec:
        addi a1, a1, -1
        sw   t1, 0(t0)
        j    loop
    done:
        li   a7, 93
        ecall
    """
    machine = rv_machine(source)
    asm = [line.split("  ")[3].strip() for line in instructions(trace(machine, "text"))]
    assert asm.count("addi a1, a1, -1") == 1 and asm.count("addi a1, a1, -2") == 2
    program = assemble(machine.arch, source, base=0x10000)
    assert program.symbols["dec"] == 0x1001c
