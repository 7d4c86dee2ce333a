"""``tessera run`` / ``resume`` on good programs: exit status, state dumps, stop conditions."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest
from clitools import assert_one_line_error, clean_env, tessera_command
from elfgen import build_elf
from toyprog import EXIT7, JMP_SELF, STAGED, SUM30, SUM30_INSTRET, SUM30_WORDS, code, encode


@pytest.fixture
def exit7_elf(write):
    return write("exit7.elf", build_elf(entry=0x100, segments=[(0x100, EXIT7)],
                                        symbols={"_start": 0x100}))


@pytest.fixture
def staged_elf(write):
    return write("staged.elf", build_elf(entry=0x100, segments=[(0x100, STAGED)],
                                         symbols={"_start": 0x100, "target": 0x108}))


@pytest.fixture
def sum_bin(write):
    return write("sum.bin", SUM30)


def dump(res):
    assert res.out.strip(), res.err
    return json.loads(res.out)


def test_run_elf_exits_with_the_program_status(tessera, exit7_elf):
    res = tessera("run", exit7_elf)
    assert res.code == 7
    assert res.err == ""


def test_run_elf_picks_the_arch_from_the_header_or_accepts_it(tessera, exit7_elf):
    assert tessera("run", "--arch", "toy", exit7_elf).code == 7


def test_dump_state_json(tessera, exit7_elf):
    res = tessera("run", exit7_elf, "--dump-state", "json")
    assert res.code == 7
    state = dump(res)
    core0 = state["agents"]["core0"]
    assert state["arch"] == "toy"
    assert core0["pc"] == 0x104  # the halt
    assert core0["registers"]["r"][1] == 7
    assert core0["registers"]["r"][0] == 0
    assert core0["status"] == "halted"
    assert core0["exit_code"] == 7
    assert core0["instret"] == 2
    assert state["agents"]["core1"]["pc"] == 0x104
    assert state["result"]["reason"] == "halted"
    assert state["result"]["exit_code"] == 7


def test_dump_state_json_to_a_file(tessera, exit7_elf, tmp_path):
    out = tmp_path / "state.json"
    res = tessera("run", exit7_elf, "--dump-state", "json", "--dump-out", out)
    assert res.code == 7
    assert res.out == ""
    state = json.loads(out.read_text())
    assert state["agents"]["core0"]["registers"]["r"][1] == 7


def test_dump_state_text(tessera, exit7_elf):
    res = tessera("run", exit7_elf, "--dump-state", "text")
    assert res.code == 7
    lines = res.out.splitlines()
    assert lines[0].startswith("arch toy")
    core0 = next(line for line in lines if line.startswith("core0"))
    assert "halted" in core0 and "pc 0x00000104" in core0 and "exit 7" in core0
    assert "r1=0x00000007" in res.out
    assert "sync sem0 (semaphore)" in res.out


def test_max_steps_on_an_infinite_loop(tessera, write):
    path = write("loop.elf", build_elf(entry=0x100, segments=[(0x100, code(JMP_SELF))]))
    res = tessera("run", path, "--max-steps", "1000")
    assert_one_line_error(res, 69, "budget exceeded", "step budget of 1000")


def test_budget_exceeded_still_dumps_the_state(tessera, write):
    path = write("loop.elf", build_elf(entry=0x100, segments=[(0x100, code(JMP_SELF))]))
    res = tessera("run", path, "--max-steps", "500", "--dump-state", "json")
    assert res.code == 69
    state = dump(res)
    assert state["result"]["reason"] == "budget"
    assert state["steps"] == 500
    assert state["agents"]["core0"]["pc"] == 0x100


def test_until_pc(tessera, sum_bin):
    res = tessera("run", "--arch", "toy", sum_bin, "--until-pc", "0x10", "--dump-state", "json")
    assert res.code == 0
    assert res.err.strip() == "stopped: breakpoint at 0x10 (agent core0)"
    state = dump(res)
    assert state["result"]["reason"] == "breakpoint"
    core0 = state["agents"]["core0"]["registers"]["r"]
    assert state["agents"]["core0"]["pc"] == 0x10
    assert core0[1] == 9 and core0[2] == 3  # one pass of the loop body, before the branch


def test_until_symbol_from_the_elf(tessera, staged_elf):
    res = tessera("run", staged_elf, "--until-symbol", "target", "--dump-state", "json")
    assert res.code == 0
    assert "breakpoint at 0x108" in res.err
    state = dump(res)
    core0 = state["agents"]["core0"]
    assert core0["pc"] == 0x108
    assert core0["registers"]["r"][1:4] == [1, 2, 0]  # target itself did not run
    assert core0["status"] != "halted"


def test_until_unknown_symbol(tessera, staged_elf):
    res = tessera("run", staged_elf, "--until-symbol", "nowhere")
    assert_one_line_error(res, 64, "unknown symbol 'nowhere'")


def _comparable(state):
    return {k: v for k, v in state.items() if k != "result"}


def test_snapshot_then_resume_reaches_the_uninterrupted_state(tessera, sum_bin, tmp_path):
    snap = tmp_path / "mid.snap"
    part = tessera("run", "--arch", "toy", sum_bin, "--max-steps", "15", "--snapshot-out", snap)
    assert_one_line_error(part, 69, "step budget of 15")
    assert snap.stat().st_size > 0

    resumed = tessera("resume", snap, "--dump-state", "json")
    whole = tessera("run", "--arch", "toy", sum_bin, "--dump-state", "json")
    assert whole.code == resumed.code == 30
    a, b = dump(resumed), dump(whole)
    assert a["steps"] == b["steps"] == 2 * SUM30_INSTRET
    assert a["result"]["steps"] == b["steps"] - 15
    assert _comparable(a) == _comparable(b)


def test_snapshot_of_a_finished_run_resumes_as_finished(tessera, exit7_elf, tmp_path):
    snap = tmp_path / "done.snap"
    assert tessera("run", exit7_elf, "--snapshot-out", snap).code == 7
    res = tessera("resume", snap, "--dump-state", "json")
    assert res.code == 7
    assert dump(res)["result"]["steps"] == 0


def test_resume_of_something_that_is_not_a_snapshot(tessera, sum_bin, tmp_path):
    assert_one_line_error(tessera("resume", sum_bin), 75, "not a Tessera snapshot")
    assert_one_line_error(tessera("resume", tmp_path / "none.snap"), 75, "cannot read snapshot")


def test_raw_image_with_load_and_entry(tessera, sum_bin):
    res = tessera("run", "--arch", "toy", sum_bin, "--load", "0x200", "--entry", "0x200",
                  "--dump-state", "json")
    assert res.code == 30
    core0 = dump(res)["agents"]["core0"]
    assert core0["instret"] == SUM30_INSTRET
    assert core0["pc"] == 0x200 + 0x14


def test_raw_image_loaded_high_starts_at_the_reset_pc(tessera, sum_bin):
    # without --entry execution starts at 0 and slides over 0x80 zero words (nop) first
    res = tessera("run", "--arch", "toy", sum_bin, "--load", "0x200", "--dump-state", "json")
    assert res.code == 30
    assert dump(res)["agents"]["core0"]["instret"] == 0x200 // 4 + SUM30_INSTRET


def test_raw_image_format_forced(tessera, write):
    path = write("looks_like.hex", SUM30)  # binary content under a word-list name
    assert tessera("run", "--arch", "toy", "--format", "raw", path).code == 30


def test_word_list_run(tessera, write):
    text = "# sum\n" + "\n".join(f"{w:08x}" for w in SUM30_WORDS) + "\n"
    path = write("sum.hex", text)
    assert tessera("run", "--arch", "toy", path).code == 30
    res = tessera("run", "--arch", "toy", path, "--load", "0x400", "--dump-state", "json")
    assert res.code == 30
    assert dump(res)["agents"]["core0"]["pc"] == 0x400 + 0x14  # entry defaults to --load


def test_word_list_with_a_bad_token(tessera, write):
    path = write("bad.hex", "1440000a\n\n44400000 nothex\n")
    assert_one_line_error(tessera("run", "--arch", "toy", path), 65, f"{path}:3:", "'nothex'")


def test_console_output_reaches_stdout(tessera, write):
    prog = code(encode("li", rd=1, limm=0x30000), encode("li", rd=2, limm=ord("H")),
                encode("st", rd=2, rs1=1, imm=0), encode("li", rd=2, limm=ord("i")),
                encode("st", rd=2, rs1=1, imm=0), encode("halt", rd=0))
    res = tessera("run", "--arch", "toy", write("hi.bin", prog), "--set", "cores=1")
    assert res.code == 0
    assert res.out == "Hi"


def test_run_through_the_console_script(tessera_proc, exit7_elf):
    res = tessera_proc("run", exit7_elf, "--dump-state", "json")
    assert res.code == 7, res.err
    assert json.loads(res.out)["agents"]["core0"]["registers"]["r"][1] == 7
    assert res.err == ""


def test_entry_option_overrides_the_elf_entry(tessera, exit7_elf):
    res = tessera("run", exit7_elf, "--entry", "0x104", "--dump-state", "json")
    assert res.code == 0  # skipped `li r1, 7`: halts with r1 = 0
    assert dump(res)["agents"]["core0"]["instret"] == 1


def test_ctrl_c_stops_a_run_with_130_and_no_traceback(write, tmp_path):
    path = write("loop.elf", build_elf(entry=0x100, segments=[(0x100, code(JMP_SELF))]))
    proc = subprocess.Popen([*tessera_command(), "-v", "run", path, "--max-steps", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env(), cwd=tmp_path)
    try:
        first = proc.stderr.readline()  # the "loaded" log line: the run is about to start
        assert "loaded" in first, first
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err
    assert err.splitlines()[-1] == "interrupted"


# -- architecture-declared run flags -------------------------------------------------------

CONSOLE_PROGRAM = """
_start: cid   r1
        bne   r1, r0, idle
        li    r2, 0x30000
        li    r3, 'H'
        st    r3, 0(r2)
idle:   halt  r0
"""


def test_architecture_flag_sets_its_configuration(tessera, write):
    src = write("hello.s", CONSOLE_PROGRAM)
    assert tessera("run", "--arch", "toy", src).out == "H"
    quiet = tessera("run", "--arch", "toy", src, "--no-echo")
    assert quiet.code == 0 and quiet.out == ""
    assert "--no-echo" in tessera("run", "--help").out


def test_architecture_flag_for_another_architecture_is_refused(tessera, write, tmp_path, monkeypatch):
    (tmp_path / "flagarch.py").write_text(
        "import attrs, tessera\n"
        "from tessera_toyarch import TOY\n"
        "TESSERA_API_VERSION = 1\n"
        "OTHER = attrs.evolve(TOY, name='toy2', cli_flags={'fast': ('fast', True, 'go fast')})\n"
        "@tessera.hookimpl\n"
        "def tessera_architectures():\n"
        "    return [OTHER]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    src = write("hello.s", CONSOLE_PROGRAM)
    res = tessera("--plugin-module", "flagarch", "run", "--arch", "toy", src, "--fast")
    assert res.code == 64 and "--fast does not apply to architecture toy" in res.err


def test_architecture_option_with_a_value_reaches_the_machine_config(tessera, write, tmp_path,
                                                                      monkeypatch):
    (tmp_path / "optarch.py").write_text(
        "import attrs, click, tessera\n"
        "from tessera_toyarch import TOY\n"
        "TESSERA_API_VERSION = 1\n"
        "OPT = attrs.evolve(TOY, name='toyopt', cli_options={'greeting': ('greeting', 'say it')})\n"
        "@tessera.hookimpl\n"
        "def tessera_architectures():\n"
        "    return [OPT]\n"
        "@tessera.hookimpl\n"
        "def tessera_run_finished(machine, result):\n"
        "    click.echo('greeting=' + str(machine.config.get('greeting')))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    src = write("hello.s", CONSOLE_PROGRAM)
    res = tessera("--plugin-module", "optarch", "run", "--arch", "toyopt", src, "--no-echo",
                  "--greeting", "hi")
    assert res.code == 0 and "greeting=hi" in res.out
    res = tessera("--plugin-module", "optarch", "run", "--arch", "toy", src, "--greeting", "hi")
    assert res.code == 64 and "--greeting does not apply to architecture toy" in res.err
