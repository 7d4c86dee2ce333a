"""The command line prints every assembly error, one ``tessera: FILE:LINE:COLUMN`` line each."""

import os

import pytest

from tessera.cli.main import main
from tessera.isa.asm.report import MAX_SHOWN

SOURCE = """\
start:  li    r1, 3
        beq   r1, r0, done
        addi  r1, r1, 99999
size = 4 +
        li    r2, size
        ld    r3, 0(r99)
        jmpp  start
done:   halt  r0
"""
EXPECTED = [
    "tessera: {f}:3:23: encode error: addi: imm=99999 does not fit in -8192..8191",
    "tessera: {f}:4:11: assembly error: expected a value",
    "tessera: {f}:6:21: assembly error: unknown register 'r99'; did you mean 'r9'?",
    "tessera: {f}:7:9: assembly error: unknown mnemonic 'jmpp'; did you mean 'jmp'?",
]


@pytest.fixture
def tessera(capsys, monkeypatch):
    for name in list(os.environ):
        if name.startswith("TESSERA_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("TESSERA_PLUGINS", "toy")

    def run(*args):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        return exc.value.code, out, err

    return run


@pytest.mark.parametrize("command", [["asm"], ["run", "--set", "cores=1"]])
def test_every_error_is_one_line_with_the_first_errors_status(tessera, tmp_path, command):
    path = tmp_path / "prog.s"
    path.write_text(SOURCE)
    code, out, err = tessera(command[0], path, "--arch", "toy", *command[1:])
    assert code == 74                       # the first error is an encode error
    assert err.splitlines() == [line.format(f=path) for line in EXPECTED]
    assert out == ""


def test_status_73_when_the_first_error_is_not_an_encode_error(tessera, tmp_path):
    path = tmp_path / "prog.s"
    path.write_text("frob\naddi r1, r1, 99999\n")
    code, _, err = tessera("asm", path, "--arch", "toy")
    assert code == 73 and len(err.splitlines()) == 2


def test_many_errors_end_with_a_count(tessera, tmp_path):
    path = tmp_path / "many.s"
    path.write_text("".join(f"frob{i}\n" for i in range(MAX_SHOWN + 3)))
    code, _, err = tessera("asm", path, "--arch", "toy")
    lines = err.splitlines()
    assert code == 73 and len(lines) == MAX_SHOWN + 1
    assert all(line.startswith(f"tessera: {path}:") for line in lines[:-1])
    assert lines[-1] == "tessera: ... and 3 more errors"
