"""Bad input: a distinct exit code, exactly one line on stderr, never a traceback."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import time

import pytest
from clitools import Result, assert_one_line_error, clean_env, tessera_command
from elfgen import EM_RISCV, Segment, build_elf
from toyprog import EXIT7, SEM_WAIT_0, code, encode

from tessera.errors import INTERNAL_ERROR_EXIT, all_error_classes

TESSERA_CODES = {cls.exit_code for cls in all_error_classes()}


@pytest.fixture
def exit7_elf(write):
    return write("exit7.elf", build_elf(entry=0x100, segments=[(0x100, EXIT7)]))


def test_every_error_class_has_its_own_exit_code():
    classes = [c for c in all_error_classes() if c.__name__ != "TesseraError"]
    codes = [c.exit_code for c in classes]
    assert len(set(codes)) == len(codes)
    assert {"LoadError": 65, "ConfigError": 64, "DecodeError": 66, "UnhandledTrap": 68,
            "BudgetExceeded": 69, "Deadlock": 71, "PluginError": 72}.items() <= \
        {c.__name__: c.exit_code for c in classes}.items()
    assert 2 not in codes and INTERNAL_ERROR_EXIT not in codes


def test_missing_file(tessera, tmp_path):
    assert_one_line_error(tessera("run", tmp_path / "nope.elf"), 65, "cannot open", "nope.elf")


def test_missing_file_with_arch(tessera, tmp_path):
    assert_one_line_error(tessera("run", "--arch", "toy", tmp_path / "nope.bin"), 65, "cannot open")


def test_random_bytes_without_arch(tessera, write):
    path = write("noise.bin", random.Random(7).randbytes(256))
    assert_one_line_error(tessera("run", path), 64, "--arch is required", "installed: toy")


@pytest.mark.parametrize("seed", range(6))
def test_random_bytes_with_arch_end_in_a_tessera_error_or_a_halt(tessera, write, seed):
    path = write("noise.bin", random.Random(seed).randbytes(1024))
    res = tessera("run", "--arch", "toy", path, "--max-steps", "20000", "--set", "echo=false")
    assert "Traceback" not in res.out + res.err
    assert res.code != INTERNAL_ERROR_EXIT, res.err
    if res.code in TESSERA_CODES:
        assert_one_line_error(res, res.code)
    else:  # the noise happened to halt: its status, and nothing on stderr
        assert 0 <= res.code <= 255 and res.err == ""


def test_random_bytes_take_the_illegal_instruction_trap(tessera, write):
    path = write("noise.bin", random.Random(0).randbytes(256))
    line = assert_one_line_error(tessera("run", "--arch", "toy", path), 68, "unhandled trap",
                                 "illegal instruction", "agent core0")
    assert "word 0x" in line


def test_jump_below_address_zero_reports_a_wrapped_pc(tessera, write):
    # jmp -8 at address 0: the target is 0xfffffff8 on a 32-bit machine, never a negative number
    path = write("neg.bin", code(encode("jmp", joff=-8)))
    line = assert_one_line_error(tessera("run", "--arch", "toy", path), 68, "fetch fault")
    assert "-0x" not in line, line


def test_truncated_elf(tessera, exit7_elf, write):
    with open(exit7_elf, "rb") as fh:
        path = write("trunc.elf", fh.read()[:30])
    assert_one_line_error(tessera("run", path), 65, "truncated")
    assert_one_line_error(tessera("run", "--arch", "toy", path), 65, "truncated")


def test_elf_whose_segment_claims_gigabytes(tessera, write):
    path = write("huge.elf", build_elf(entry=0x100,
                                       segments=[Segment(0x100, EXIT7, memsz=0x7FFF_FFFF)]))
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    res = tessera("run", path, "--auto-map")
    elapsed = time.perf_counter() - t0
    assert_one_line_error(res, 65, "claims 0x7fffffff bytes", "memory cap")
    assert elapsed < 1.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 50 * 1024  # KiB


def test_elf64_whose_segment_claims_16_gib_in_a_process(tessera_proc, write):
    path = write("huge64.elf", build_elf(bits=64, entry=0x100,
                                         segments=[Segment(0x100, EXIT7, memsz=16 << 30)]))
    t0 = time.perf_counter()
    res = tessera_proc("run", "--arch", "toy", "--auto-map", "--memory-cap", "32G", path)
    assert time.perf_counter() - t0 < 10
    assert_one_line_error(res, 65, "64-bit ELF")


def test_elf_for_another_machine(tessera, write):
    path = write("rv.elf", build_elf(machine=EM_RISCV, entry=0x100, segments=[(0x100, EXIT7)]))
    assert_one_line_error(tessera("run", path), 65, "no installed architecture", "0xf3")
    assert_one_line_error(tessera("run", "--arch", "toy", path), 65, "0xf3", "toy")


def test_unknown_arch_lists_the_known_ones(tessera, exit7_elf):
    assert_one_line_error(tessera("run", "--arch", "nosuch", exit7_elf), 64,
                          "unknown architecture 'nosuch'", "known: toy")


def test_directory_as_program(tessera, tmp_path):
    line = assert_one_line_error(tessera("run", tmp_path), 65, "is a directory")
    assert "load error" in line  # docs/errors.md: LoadError, exit status 65


def test_bad_load_value(tessera, exit7_elf):
    assert_one_line_error(tessera("run", "--arch", "toy", exit7_elf, "--load", "xyz"), 2,
                          "--load", "'xyz' is not an address")


def test_negative_entry_value(tessera, exit7_elf):
    assert_one_line_error(tessera("run", exit7_elf, "--entry", "-4"), 2, "--entry")


def test_bad_memory_cap_value(tessera, exit7_elf):
    assert_one_line_error(tessera("run", exit7_elf, "--memory-cap", "lots"), 2, "--memory-cap")


def test_memory_cap_below_the_architecture_map(tessera, exit7_elf):
    assert_one_line_error(tessera("run", exit7_elf, "--memory-cap", "4K"), 64, "memory cap")


def test_load_option_with_an_elf(tessera, exit7_elf):
    assert_one_line_error(tessera("run", exit7_elf, "--load", "0x100"), 65, "--load")


def test_unknown_command_and_option(tessera):
    assert_one_line_error(tessera("frobnicate"), 2, "frobnicate")
    assert_one_line_error(tessera("run", "--frobnicate", "x"), 2, "--frobnicate")


def test_bad_set_value(tessera, exit7_elf):
    assert_one_line_error(tessera("run", exit7_elf, "--set", "novalue"), 2, "KEY=VALUE")


def test_deadlock_names_both_cores(tessera, write):
    path = write("dead.elf", build_elf(entry=0x100, segments=[(0x100, code(SEM_WAIT_0))]))
    line = assert_one_line_error(tessera("run", path), 71, "deadlock")
    assert "core0 waits for semaphore sem0" in line
    assert "core1 waits for semaphore sem0" in line


@pytest.mark.parametrize(("case", "code_"), [
    ("missing", 65), ("truncated", 65), ("deadlock", 71), ("bad-load", 2), ("directory", 65),
    ("noise", 64),
])
def test_bad_input_in_a_real_process(tessera_proc, write, tmp_path, case, code_):
    elf = build_elf(entry=0x100, segments=[(0x100, EXIT7)])
    args = {
        "missing": ["run", tmp_path / "missing.elf"],
        "truncated": ["run", write("t.elf", elf[:30])],
        "deadlock": ["run", write("d.elf", build_elf(entry=0x100,
                                                     segments=[(0x100, code(SEM_WAIT_0))]))],
        "bad-load": ["run", "--arch", "toy", write("p.elf", elf), "--load", "nowhere"],
        "directory": ["run", tmp_path],
        "noise": ["run", write("n.bin", random.Random(3).randbytes(64))],
    }[case]
    assert_one_line_error(tessera_proc(*args), code_)


def test_python_dash_m_entry_point(tessera_proc, tmp_path):
    res = tessera_proc("run", tmp_path / "missing.elf", module=True)
    assert_one_line_error(res, 65, "cannot open")


def test_debug_shows_the_traceback(tessera, tmp_path):
    res = tessera("--debug", "run", tmp_path / "nope.elf")
    assert res.code == 65
    assert "Traceback (most recent call last)" in res.err
    assert "LoadError" in res.err
    assert res.err.splitlines()[-1].startswith("tessera: load error: cannot open")


def test_debug_from_the_environment(tessera_proc, tmp_path):
    res = tessera_proc("run", tmp_path / "nope.elf", env={"TESSERA_DEBUG": "1"})
    assert res.code == 65
    assert "Traceback" in res.err


@pytest.mark.parametrize("option", ["--dump-out", "--snapshot-out"])
def test_output_file_in_a_missing_directory(tessera, exit7_elf, tmp_path, option):
    target = tmp_path / "no" / "such" / "dir" / "out"
    res = tessera("run", exit7_elf, "--dump-state", "json", option, target)
    assert_one_line_error(res, 64, "cannot write", str(target))


def test_asm_output_in_a_missing_directory(tessera, write, tmp_path):
    src = write("p.s", "        halt r0\n")
    target = tmp_path / "missing" / "p.bin"
    assert_one_line_error(tessera("asm", "--arch", "toy", src, "-o", target), 64, "cannot write")


def _limit_address_space():  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_device_as_program_stops_at_the_memory_cap(tmp_path):
    # /dev/zero reports size 0: reading "the whole file" would never end.  The child gets a
    # 3 GiB address-space limit so a regression fails (out of memory) instead of eating the host.
    t0 = time.perf_counter()
    proc = subprocess.run([*tessera_command(), "run", "--arch", "toy", "--memory-cap", "1M",
                           "/dev/zero"], capture_output=True, text=True, env=clean_env(),
                          cwd=tmp_path, timeout=60, preexec_fn=_limit_address_space)
    res = Result(proc.returncode, proc.stdout, proc.stderr)
    assert_one_line_error(res, 65, "/dev/zero", "memory cap")
    assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize("option, value", [("--max-steps", "-5"), ("--max-cycles", "-1"),
                                           ("--max-seconds", "-1"), ("--max-seconds", "0")])
def test_negative_budgets_are_usage_errors(tessera, exit7_elf, option, value):
    assert_one_line_error(tessera("run", exit7_elf, option, value), 2, option)


def test_empty_assembly_file_is_refused(tessera, write):
    src = write("empty.s", "# nothing here\n")
    assert_one_line_error(tessera("run", "--arch", "toy", src), 65, "assembles to no bytes")


def test_repeated_main_calls_do_not_report_false_command_clashes(tessera, tmp_path, monkeypatch):
    (tmp_path / "cmdplug.py").write_text(
        "import click, tessera\n"
        "TESSERA_API_VERSION = 1\n"
        "@tessera.hookimpl\n"
        "def tessera_cli_commands(cli):\n"
        "    @cli.command('hello')\n"
        "    def hello():\n"
        "        click.echo('hello from a plugin')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for _ in range(2):
        res = tessera("--plugin-module", "cmdplug", "hello")
        assert res.code == 0 and res.out.strip() == "hello from a plugin"
        assert "clashes" not in res.err
