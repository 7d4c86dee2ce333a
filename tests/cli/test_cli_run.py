"""``tessera run`` / ``resume`` on good programs: exit status, state dumps, stop conditions."""

from __future__ import annotations

import json
import os
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
    # before the run starts: "interrupted"; during it: "interrupted after N steps" (cli.md)
    last = err.splitlines()[-1]
    assert last == "interrupted" or last.startswith("interrupted after "), last


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
        "from tessera.settings import Setting\n"
        "from tessera_toyarch import TOY\n"
        "TESSERA_API_VERSION = 1\n"
        "SETTINGS = attrs.evolve(TOY.settings, items=TOY.settings.items + (Setting('fast', 'bool', False),))\n"
        "OTHER = attrs.evolve(TOY, name='toy2', cli_flags={'fast': ('fast', True, 'go fast')},\n"
        "                     settings=SETTINGS)\n"
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
        "from tessera.settings import Setting\n"
        "from tessera_toyarch import TOY\n"
        "TESSERA_API_VERSION = 1\n"
        "SETTINGS = attrs.evolve(TOY.settings, items=TOY.settings.items + (Setting('greeting', 'str'),))\n"
        "OPT = attrs.evolve(TOY, name='toyopt', cli_options={'greeting': ('greeting', 'say it')},\n"
        "                   settings=SETTINGS)\n"
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


# --------------------------------------------------------------------------- program paths, ELF choice


@pytest.mark.parametrize("argv", [
    ["run"], ["run", "--arch", "toy"], ["disasm"], ["disasm", "--arch", "toy"], ["asm", "--arch", "toy"],
], ids=["run", "run-arch", "disasm", "disasm-arch", "asm"])
def test_a_directory_as_the_program_is_a_load_error(tessera, tmp_path, argv):
    assert_one_line_error(tessera(*argv, tmp_path), 65, "load error", "is a directory")


def test_a_directory_as_the_snapshot_is_a_snapshot_error(tessera, tmp_path):
    assert_one_line_error(tessera("resume", tmp_path), 75, "cannot read snapshot", "directory")


def test_any_elf_machine_loads_a_foreign_elf_and_needs_arch(tessera, write):
    from elfgen import EM_RISCV

    path = write("rv.elf", build_elf(machine=EM_RISCV, entry=0x100, segments=[(0x100, EXIT7)]))
    assert_one_line_error(tessera("run", "--arch", "toy", path), 65, "0xf3 (RISC-V)", "--any-elf-machine")
    res = tessera("run", "--arch", "toy", "--any-elf-machine", path)
    assert res.code == 7, res.err
    assert_one_line_error(tessera("run", "--any-elf-machine", path), 2, "--any-elf-machine needs --arch")


def test_disasm_and_until_symbol_ignore_mapping_symbols(tessera, write):
    from elfgen import STB_LOCAL, STT_NOTYPE, Symbol

    symbols = [Symbol("$xrv32i2p1_m2p0", 0x100, STT_NOTYPE, STB_LOCAL), Symbol("main", 0x100),
               Symbol("$d", 0x104, STT_NOTYPE, STB_LOCAL)]
    path = write("m.elf", build_elf(entry=0x100, segments=[(0x100, EXIT7)], symbols=symbols))
    res = tessera("disasm", path)
    assert res.code == 0, res.err
    assert "main:" in res.out and "$" not in res.out
    assert_one_line_error(tessera("run", path, "--until-symbol", "$d"), 64, "unknown symbol '$d'")


@pytest.mark.parametrize("arch_name", ["phoenix", "tensix"])
def test_coprocessor_architectures_load_em_none_elfs_only(tessera, write, arch_name):
    plugin = pytest.importorskip(f"tessera_{arch_name}")
    from tessera.isa.asm import assemble
    from tessera.plugins import PluginHost

    arch = PluginHost(only=[arch_name], use_environment=False).architecture(arch_name)
    assert (arch.elf_machine, arch.elf_class) == (0, 32), plugin.__name__
    example = arch.examples[0]
    start, blob = assemble(arch, example.source, base=example.load_address).image()
    ok = write("none.elf", build_elf(machine=0, entry=start, segments=[(start, blob)]))
    res = tessera("--only-plugin", arch_name, "run", "--arch", arch_name, ok, "--dump-state", "json")
    assert res.code == 0 and dump(res)["result"]["reason"] == "halted", res.err
    foreign = write("x86.elf", build_elf(machine=62, entry=start, segments=[(start, blob)]))
    assert_one_line_error(tessera("--only-plugin", arch_name, "run", "--arch", arch_name, foreign), 65,
                          "0x3e (x86-64)", f"not {arch_name}", "--any-elf-machine")
    res = tessera("--only-plugin", arch_name, "run", "--arch", arch_name, "--any-elf-machine", foreign)
    assert res.code == 0, res.err
    assert_one_line_error(tessera("--only-plugin", arch_name, "run", ok), 64, "EM_NONE", "--arch")


# --------------------------------------------------------------------------- a C program for RV64IM

_REQUIRE_TOOLS = os.environ.get("TESSERA_REQUIRE_DIFF_TOOLS") == "1"  # read before fixtures clean it

RV64_PROGRAM = r"""
typedef unsigned long u64;
static long sys3(long n, long a0, long a1, long a2)
{
    register long r0 __asm__("a0") = a0;
    register long r1 __asm__("a1") = a1;
    register long r2 __asm__("a2") = a2;
    register long r7 __asm__("a7") = n;
    __asm__ volatile("ecall" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r7) : "memory");
    return r0;
}
static void put(const char *s) { long n = 0; while (s[n]) n++; sys3(64, 1, (long)s, n); }
static void putnum(long v)
{
    char buf[24]; int i = 23; u64 u = v < 0 ? -(u64)v : (u64)v;
    buf[i] = 0;
    do { buf[--i] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) buf[--i] = '-';
    put(buf + i);
    put("\n");
}
static volatile long seed = 12345;
int main(void)
{
    u64 acc = 1;
    for (int i = 1; i <= 25; i++) acc = acc * (u64)(i + seed) % 1000000007u;
    putnum((long)acc);
    putnum(-123456789L / 1000 + seed % 7);
    putnum((long)((u64)seed * 0x9E3779B97F4A7C15u >> 40));
    put("rv64 done\n");
    return 3;
}
__asm__(".section .text._start, \"ax\", @progbits\n"
        ".globl _start\n_start:\n"
        ".option push\n.option norelax\nla gp, __global_pointer$\n.option pop\n"
        "andi sp, sp, -16\ncall start_c\n1: j 1b\n");
void __attribute__((used, noreturn)) start_c(void) { sys3(93, main(), 0, 0); for (;;) { } }
"""


def _rv64_tools() -> None:
    import shutil

    for tool in ("riscv64-unknown-elf-gcc", "qemu-riscv64"):
        if shutil.which(tool) is None:
            why = f"{tool} is not installed (apt-get install gcc-riscv64-unknown-elf qemu-user)"
            if _REQUIRE_TOOLS:
                pytest.fail(f"differential tests required but {why}")
            pytest.skip(why)


def _compile_rv64(tmp_path, march: str):
    src = tmp_path / "prog.c"
    src.write_text(RV64_PROGRAM)
    out = tmp_path / f"prog-{march}.elf"
    subprocess.run(["riscv64-unknown-elf-gcc", f"-march={march}", "-mabi=lp64", "-O2", "-ffreestanding",
                    "-nostdlib", "-static", "-fno-tree-loop-distribute-patterns", "-o", str(out), str(src)],
                   check=True, capture_output=True, timeout=120)
    return out


def test_a_plain_rv64im_c_program_runs_like_qemu_with_the_tile_plugin_installed(tessera_proc, tmp_path):
    pytest.importorskip("tessera_riscv")
    pytest.importorskip("tessera_tile")
    _rv64_tools()
    elf = _compile_rv64(tmp_path, "rv64im")
    qemu = subprocess.run(["qemu-riscv64", str(elf)], capture_output=True, timeout=60)
    assert qemu.returncode == 3 and b"rv64 done" in qemu.stdout
    both = {"TESSERA_PLUGINS": "riscv,tile"}  # two architectures run EM_RISCV ELFCLASS64
    res = tessera_proc("run", elf, "--dump-out", tmp_path / "state.json", "--dump-state", "json",
                       env=both, timeout=120)
    assert (res.code, res.out.encode(), res.err) == (qemu.returncode, qemu.stdout, "")
    assert json.loads((tmp_path / "state.json").read_text())["arch"] == "rv64im"
    # the same program built for the tile extension chooses tile (its harts each run it)
    tiled = _compile_rv64(tmp_path, "rv64im_xtile1p0")
    res = tessera_proc("run", tiled, "--dump-out", tmp_path / "tile.json", "--dump-state", "json",
                       env=both, timeout=120)
    assert res.code == 3 and "rv64 done" in res.out, res.err
    assert json.loads((tmp_path / "tile.json").read_text())["arch"] == "tile"
