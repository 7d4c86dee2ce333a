"""``tessera run/resume --trace ...``: outputs, several formats, and one-line refusals (exit 64)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from trace_support import RV_TINY, RV_TINY_TEXT

HELLO = """
    li   a0, 1
    la   a1, msg
    li   a2, 6
    li   a7, 64
    ecall
    li   a0, 3
    li   a7, 93
    ecall
msg: .ascii "hello\\n"
"""


@pytest.fixture
def prog(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.s").write_text(RV_TINY)
    (tmp_path / "hello.s").write_text(HELLO)
    return tmp_path


def test_run_writes_the_trace_and_keeps_the_program_s_exit_status(prog, tessera_cli):
    code, out, err = tessera_cli("run", "tiny.s", "--arch", "rv32im", "--trace", "text", "--trace-out", "t.txt")
    assert (code, out, err) == (5, "", "")
    assert (prog / "t.txt").read_text().splitlines() == RV_TINY_TEXT


def test_without_trace_out_each_format_has_its_default_file(prog, tessera_cli):
    code, _out, _err = tessera_cli("run", "tiny.s", "--arch", "rv32im", "--trace", "text", "--trace", "jsonl",
                                   "--trace", "perfetto", "--trace", "profile")
    assert code == 5
    assert (prog / "trace.txt").read_text().splitlines() == RV_TINY_TEXT
    assert len((prog / "trace.jsonl").read_text().splitlines()) == 7
    assert json.loads((prog / "trace.perfetto.json").read_text())["traceEvents"]
    assert (prog / "trace.profile.txt").read_text().startswith("# tessera trace profile: 7 instructions")


def test_several_formats_take_their_outputs_in_order(prog, tessera_cli):
    code, out, _err = tessera_cli("run", "hello.s", "--arch", "rv32im", "--trace", "profile", "--trace", "text",
                                  "--trace-out", "p.txt", "--trace-out", "-", "--trace-top", "1")
    assert code == 3
    assert "hello\n" in out                            # the program's own output
    assert [line for line in out.splitlines() if line.startswith("hart0")][0].endswith("a0=0x00000001")
    assert "# top 1 of 9 PCs" in (prog / "p.txt").read_text()


def test_filters_and_limit_reach_the_tracer(prog, tessera_cli):
    code, _out, _err = tessera_cli("run", "tiny.s", "--arch", "rv32im", "--trace", "jsonl", "--trace-out", "t.jsonl",
                                   "--trace-pc", "0x10004:0x10010", "--trace-agent", "hart0",
                                   "--trace-window", "1:3", "--trace-limit", "1M")
    assert code == 5
    recs = [json.loads(line) for line in (prog / "t.jsonl").read_text().splitlines()]
    assert [(r["index"], r["pc"]) for r in recs] == [(1, 0x10008), (2, 0x1000c)]


def test_resume_takes_the_trace_options_too(prog, tessera_cli):
    code, _out, _err = tessera_cli("run", "tiny.s", "--arch", "rv32im", "--max-steps", "3",
                                   "--snapshot-out", "snap.bin")
    assert code == 69                                 # budget exceeded, snapshot saved
    code, _out, _err = tessera_cli("resume", "snap.bin", "--trace", "text", "--trace-out", "rest.txt")
    assert code == 5
    assert (prog / "rest.txt").read_text().splitlines() == RV_TINY_TEXT[3:]


BAD = [
    (["--trace", "text", "--trace-out", "missing/t.txt"], "does not exist"),
    (["--trace", "text", "--trace-out", "."], "it is a directory"),
    (["--trace", "text", "--trace-agent", "nobody"], "--trace-agent nobody: no such agent (agents: hart0)"),
    (["--trace", "text", "--trace-pc", "0x200:0x100"], "is empty"),
    (["--trace", "text", "--trace-pc", "0xf0000000:0xf0001000"], "outside every mapped region"),
    (["--trace", "text", "--trace-pc", "nowhere:0x100"], "not a number or a symbol"),
    (["--trace", "text", "--trace-window", "10:5"], "is empty"),
    (["--trace-pc", "0x10000:0x10010"], "--trace-pc needs --trace FORMAT"),
    (["--trace-window", "1:2"], "--trace-window needs --trace FORMAT"),
    (["--trace-out", "t.txt"], "--trace-out needs --trace FORMAT"),
    (["--trace-agent", "hart0"], "--trace-agent needs --trace FORMAT"),
    (["--trace", "text", "--trace-out", "a", "--trace-out", "b"], "2 --trace-out for 1 --trace"),
    (["--trace", "text", "--trace", "jsonl", "--trace-out", "x", "--trace-out", "x"], "both write x"),
    (["--trace", "text", "--trace-top", "3"], "--trace-top needs --trace profile"),
]


@pytest.mark.parametrize("args, message", BAD, ids=[" ".join(a) for a, _m in BAD])
def test_bad_input_is_one_line_exit_64_before_the_run(prog, tessera_cli, args, message):
    code, out, err = tessera_cli("run", "hello.s", "--arch", "rv32im", *args)
    assert code == 64
    assert out == ""                                  # the program never ran (it prints hello)
    assert err.count("\n") == 1 and err.startswith("tessera: configuration error: ") and message in err
    assert not (prog / "trace.txt").exists() and not (prog / "a").exists() and not (prog / "x").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_trace_out_is_refused(prog, tessera_cli):
    locked = prog / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _out, err = tessera_cli("run", "hello.s", "--arch", "rv32im", "--trace", "text",
                                      "--trace-out", "locked/t.txt")
    finally:
        locked.chmod(0o700)
    assert code == 64 and "permission denied" in err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_a_trace_out_the_system_refuses_is_one_line_too(prog, tessera_cli):
    # even root cannot create files in /proc: the refusal comes from opening the file
    code, out, err = tessera_cli("run", "hello.s", "--arch", "rv32im", "--trace", "text",
                                 "--trace-out", "/proc/tessera-trace-test.txt")
    assert (code, out) == (64, "")
    assert err.count("\n") == 1 and err.startswith("tessera: configuration error: cannot write trace to /proc/")


def test_an_unknown_format_is_a_usage_error(prog, tessera_cli):
    code, out, err = tessera_cli("run", "hello.s", "--arch", "rv32im", "--trace", "bogus")
    assert code == 2 and out == "" and "'bogus' is not one of" in err


def test_the_installed_command(prog):
    """The console script end to end: the plugin is found through its entry point."""
    script = Path(sys.executable).parent / "tessera"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "tessera.cli.main"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TESSERA_")}
    env["TESSERA_PLUGINS"] = "riscv,trace"
    bad = subprocess.run([*cmd, "run", "hello.s", "--arch", "rv32im", "--trace", "text", "--trace-agent", "x"],
                         capture_output=True, text=True, env=env, cwd=prog, timeout=60)
    assert (bad.returncode, bad.stdout) == (64, "")
    assert bad.stderr.splitlines() == ["tessera: configuration error: --trace-agent x: no such agent (agents: hart0)"]
    good = subprocess.run([*cmd, "run", "tiny.s", "--arch", "rv32im", "--trace", "text", "--trace-out", "-"],
                          capture_output=True, text=True, env=env, cwd=prog, timeout=60)
    assert (good.returncode, good.stdout.splitlines(), good.stderr) == (5, RV_TINY_TEXT, "")
