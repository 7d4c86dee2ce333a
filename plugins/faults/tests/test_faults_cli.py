"""``tessera run/resume --fault SPEC``: a fault changes a RISC-V program's result; bad specs
are one line and exit status 64; a resumed run goes on with the fault as one run would."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from faults_support import LOOP, SUM


@pytest.fixture
def prog(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sum.s").write_text(SUM)
    (tmp_path / "loop.s").write_text(LOOP)
    return tmp_path


def test_a_fault_changes_the_exit_status_and_its_record_is_written(prog, tessera_cli):
    assert tessera_cli("run", "sum.s", "--arch", "rv32im") == (10, "", "")
    code, out, err = tessera_cli("run", "sum.s", "--arch", "rv32im", "--fault", "target=x10,model=flip,bit=1,at=retired:1",
                                 "--fault-out", "faults.json")
    assert (code, out, err) == (14, "", "")                         # a0 = 5 ^ 2 = 7, doubled
    (record,) = json.loads((prog / "faults.json").read_text())
    assert record == {"fault": "target=x10,bit=1,at=retired:1", "status": "injected", "target": "hart0.x[10]",
                      "name": "hart0.x", "index": 10, "bits": [1], "old": 5, "new": 7, "step": 1}


@pytest.mark.parametrize(("spec", "status"), [
    ("model=skip,at=pc:loop#20", 209),                              # the last add (of 1) is skipped
    ("target=t0,model=zero,at=retired:4", 20),                      # the loop ends after one round
    ("target=insn,bit=5,at=pc:loop", 210 - 20 + 5),                 # the first add is addi a0, a0, 5
    ("model=stuck1,bit=7,at=class:alu#3", 210 | 128),               # a0 bit 7 held to the end
])
def test_faults_on_a_risc_v_loop(prog, tessera_cli, spec, status):
    code, _out, err = tessera_cli("run", "loop.s", "--arch", "rv32im", "--fault", spec)
    assert (code, err) == (status & 0xFF, "")


def test_a_word_list_program(prog, tessera_cli):
    code, _out, _err = tessera_cli("asm", "sum.s", "--arch", "rv32im", "--base", "0x10000", "--format", "words",
                                   "-o", "sum.hex")
    assert code == 0
    args = ("run", "sum.hex", "--arch", "rv32im", "--load", "0x10000")
    assert tessera_cli(*args)[0] == 10
    assert tessera_cli(*args, "--fault", "target=insn,bit=5,at=pc:0x10010")[0] == 16   # add -> addi a0, a0, 11


@pytest.mark.skipif(shutil.which("riscv64-unknown-elf-gcc") is None, reason="needs riscv64-unknown-elf-gcc")
def test_a_compiled_c_program_prints_something_else(prog, tessera_cli):
    (prog / "hello.c").write_text(r"""
long write(int fd, const void *buf, unsigned long count);
char msg[] = "hello from RISC-V\n";
int main(void) { write(1, msg, sizeof msg - 1); return msg[0] & 0x7f; }
""")
    _code, start, _err = tessera_cli("riscv-start")
    subprocess.run(["riscv64-unknown-elf-gcc", "-march=rv32im", "-mabi=ilp32", "-ffreestanding", "-fno-builtin",
                    "-nostdlib", "-O2", "-o", "hello.elf", "hello.c", start.strip()], check=True)
    assert tessera_cli("run", "hello.elf") == (0x68, "hello from RISC-V\n", "")
    code, out, _err = tessera_cli("run", "hello.elf", "--fault", "target=mem[msg],bit=5,at=retired:0")
    assert (code, out) == (0x48, "Hello from RISC-V\n")             # 'h' ^ 0x20
    code, out, _err = tessera_cli("run", "hello.elf", "--fault", "target=mem[msg+6],model=zero,at=retired:0")
    assert (code, out) == (0x68, "hello \0rom RISC-V\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--fault", "target=x5"], "needs at=TRIGGER"),
    (["--fault", "target=y5,at=retired:3"], "unknown fault target 'y5' on rv32im"),
    (["--fault", "target=x5,at=when:3"], "at=when:3: write one of"),
    (["--fault", "target=x5,at=retired:3@hart7"], "no agent named 'hart7'"),
    (["--fault", "target=x5,at=pc:nowhere"], "no such symbol"),
    (["--fault", "target=x5,bit=40,at=retired:3"], "bit=40: hart0.x has bits 0..31"),
    (["--fault", "model=zero,at=class:vector"], "no instruction of rv32im is of class 'vector'"),
    (["--fault-out", "f.json"], "--fault-out needs --fault SPEC"),
    (["--fault", "target=x5,at=step:1", "--fault-out", "."], "it is a directory"),
    (["--fault", "target=x5,at=step:1", "--fault", "target=x5,at=step:1"], "is armed on this machine already"),
])
def test_bad_specs_are_one_line_and_exit_status_64(prog, tessera_cli, args, message):
    code, out, err = tessera_cli("run", "sum.s", "--arch", "rv32im", *args)
    assert (code, out) == (64, "")
    assert err.startswith("tessera: configuration error: ") and message in err and err.count("\n") == 1


@pytest.mark.parametrize("cut", [2, 7, 30, 59])
def test_resume_goes_on_with_the_fault_as_one_run_would(prog, tessera_cli, cut):
    fault = ("--fault", "target=a0,bit=4,at=retired:30")
    whole = tessera_cli("run", "loop.s", "--arch", "rv32im", *fault, "--dump-state", "json")
    assert tessera_cli("run", "loop.s", "--arch", "rv32im", *fault, "--max-steps", str(cut),
                       "--snapshot-out", "cut.snap")[0] == 69
    code, out, _err = tessera_cli("resume", "cut.snap", *fault, "--dump-state", "json", "--fault-out", "r.json")
    assert code == whole[0] != 210
    assert json.loads(out)["agents"] == json.loads(whole[1])["agents"]
    (record,) = json.loads((prog / "r.json").read_text())
    assert record["status"] == "injected" and record["step"] == 30        # once: before or after the cut


def test_a_fault_that_never_fires_says_so_and_changes_nothing(prog, tessera_cli):
    code, out, err = tessera_cli("run", "sum.s", "--arch", "rv32im", "--fault", "target=a0,at=retired:1000",
                                 "--fault-out", "r.json")
    assert (code, out) == (10, "")
    assert "fault not injected: the run ended before its trigger" in err
    assert json.loads((prog / "r.json").read_text())[0]["status"] == "not reached"


def test_the_options_are_in_the_help(prog, tessera_cli):
    code, out, _err = tessera_cli("run", "--help")
    assert code == 0 and "--fault SPEC" in out and "--fault-out FILE" in out
    code, out, _err = tessera_cli("faults", "--help")
    assert code == 0 and "targets" in out
