"""Fuzzing the command line: whatever the arguments and files, the answer is a documented one.

Argument vectors are built from the real option set of every command (the click
commands are introspected, after ``run`` got its tool-plugin options and architecture
flags), with values of each option's type — good, borderline and junk — and random
files: random bytes, truncated ELFs (the RISC-V bench program and a toy ELF),
assembly, word lists, snapshots (whole, truncated, flipped), directories and missing
paths.  For each vector:

* the exit status is one docs/cli.md and docs/errors.md document, and an error line
  ``tessera: <kind>: ...`` carries exactly its class's status (the table is read from
  docs/errors.md, so the docs and the code cannot drift apart);
* never 76 (an internal error is a bug), never a traceback;
* at most a few lines on stderr (an assembly error lists up to 20 errors).

Runs are bounded (``--max-steps``, ``--max-seconds`` come first; the fuzzed values
never ask for an unlimited run), so the test takes seconds.  ``bench`` (it measures
for seconds by design) and ``conformance`` (it runs pytest) are left out.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
from contextlib import redirect_stderr, redirect_stdout
from importlib import resources
from pathlib import Path

import click
import pytest
from clitools import clean_env, tessera_command
from elfgen import build_elf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toyprog import EXIT7

from tessera.cli import commands
from tessera.cli.main import cli, main
from tessera.errors import all_error_classes
from tessera.plugins import PluginHost

DOCS = Path(__file__).resolve().parents[2] / "docs"
SKIPPED_COMMANDS = {"bench", "conformance"}
#: the plugins the fuzzed commands run with (those installed of these)
WANTED_PLUGINS = ("toy", "riscv", "trace")
BUDGET = ["--max-steps", "3000", "--max-seconds", "2"]
#: how often each command is drawn, relative to the others (1 if not named)
COMMAND_WEIGHTS = {"run": 5, "resume": 2, "asm": 2, "disasm": 2}
#: (no NUL: a real command line cannot hold one)
JUNK = ["", "-", "--", "x", "-1", "nan", "0x", "1e309", "\x01", "é", "--bogus", "0" * 40, "%s", "{}"]


def documented_statuses() -> dict[str, int]:
    """``{kind: exit status}`` from the table in docs/errors.md (``configuration error`` -> 64)."""
    table = {}
    for line in (DOCS / "errors.md").read_text().splitlines():
        m = re.match(r"\|\s*`\w+`\s*\|\s*(\d+)\s*\|\s*`(?:FILE:LINE:COLUMN: )?([a-z ]+):`", line)
        if m:
            table[m.group(2)] = int(m.group(1))
    return table


KINDS = documented_statuses()


def test_the_error_table_is_read_from_the_docs():
    assert KINDS == {cls.kind: cls.exit_code for cls in all_error_classes()}
    cli_doc = (DOCS / "cli.md").read_text()
    assert "| 2 | command-line usage error" in cli_doc and "| 76 | internal error" in cli_doc


# --------------------------------------------------------------------------- the inputs


def installed_plugins() -> list[str]:
    host = PluginHost(use_environment=False)
    return [name for name in WANTED_PLUGINS if name in host.known_plugins()]


TOY_SOURCE = """\
_start: cid   r1
        li    r2, 0x30000
        li    r3, 'H'
        st    r3, 0(r2)
loop:   addi  r1, r1, 1
        bne   r1, r0, loop
        halt  r0
"""
ASM_LINES = ["li r1, 5", "halt r1", "1:", "j 1b", "bne r1, r0, 1f", "ld r1, [r2]", ".word 0x12345678",
             ".org 0x10", "label:", "li r1, undefined_symbol", "addi r1, r1, 99999999999", "nop nop",
             "add r1", ".ascii \"hi\"", "\t; comment", "li r1, (1 + 2) * 3", ".align 3", "bogus r9"]


class Files:
    """The file pool: made once per module in a temporary directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        rv32 = resources.files("tessera_riscv").joinpath("data", "bench", "sum-rv32im.elf").read_bytes()
        toy = build_elf(entry=0x100, segments=[(0x100, EXIT7)])
        self.paths: list[str] = []
        self.add("rv32.elf", rv32)
        self.add("toy.elf", toy)
        for cut in (4, 16, 52, 60, len(rv32) // 3, len(rv32) - 7):
            self.add(f"rv32-cut{cut}.elf", rv32[:cut])
        for cut in (20, 40, len(toy) - 3):
            self.add(f"toy-cut{cut}.elf", toy[:cut])
        flipped = bytearray(rv32)
        flipped[18] ^= 0xFF  # e_machine
        self.add("rv32-machine.elf", bytes(flipped))
        self.add("toy.s", TOY_SOURCE)
        self.add("toy.words", "14800007\n0x44800000\n")
        self.add("bad.words", "zz\n0x1ffffffff\n")
        self.add("empty.bin", b"")
        self.add("zeros.bin", bytes(64))
        self.add("text.txt", "hello\n")
        (root / "adir").mkdir(exist_ok=True)
        self.paths += [str(root / "adir"), str(root / "missing.elf"), str(root / "nodir" / "x.bin")]
        out = root.parent / "out"
        out.mkdir(exist_ok=True)
        #: where outputs may go: a fresh file, a directory, a missing directory, stdout
        self.outputs = [str(out / "x.out"), str(out), str(out / "nodir" / "x.out"), "-"]
        self.random = str(root / "random.bin")
        self.random_asm = str(root / "random.s")
        self.paths += [self.random, self.random_asm]
        self.snapshots()

    def add(self, name: str, content: bytes | str) -> str:
        path = self.root / name
        if isinstance(content, str):
            path.write_text(content)
        else:
            path.write_bytes(content)
        self.paths.append(str(path))
        return str(path)

    def snapshots(self) -> None:
        snap = self.root / "toy.snap"
        code, _out, err = run_in_process(["run", "--arch", "toy", str(self.root / "toy.s"),
                                          "--max-steps", "7", "--snapshot-out", str(snap)])
        assert snap.exists(), (code, err)
        data = snap.read_bytes()
        self.paths.append(str(snap))
        self.add("cut.snap", data[: len(data) // 2])
        middle = bytearray(data)
        middle[len(data) // 2] ^= 0x01
        self.add("flipped.snap", bytes(middle))


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code: object = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code
    return (code if isinstance(code, int) else 1), out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------- the arguments


def command_table() -> dict[str, list[click.Parameter]]:
    """The parameters of every built-in command, ``run`` with the options it gets on demand
    (a copy: the next invocation may give ``run`` other ones)."""
    run_in_process(["run", "--help"])  # gives run its tool options and architecture flags
    return {name: list(commands.load(name).params) for name in commands.BUILTIN_COMMANDS
            if name not in SKIPPED_COMMANDS}


def numbers() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-3, 70_000).map(str),
        st.integers(0, 2**70).map(hex),
        st.sampled_from(["4K", "1M", "64G", "100T", "0x1ffffffffffffffff", "10**26", "1_000", "0b101",
                         "0o17", "-0x10", "2.5", "inf"]),
    )


def mostly(good: st.SearchStrategy[str], bad: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``good`` four times in five: junk everywhere would only ever test the option parser."""
    return st.sampled_from((good, good, good, good, bad)).flatmap(lambda chosen: chosen)


def one_in(n: int) -> st.SearchStrategy[bool]:
    return st.sampled_from([True] + [False] * (n - 1))


def values(param: click.Parameter, files: Files, archs: list[str], settings_keys: list[str],
           plugins: list[str]) -> st.SearchStrategy[str]:
    """Values of ``param``'s type (mostly plausible ones) for the option or argument ``param``."""
    name = (param.name or "").lower()
    paths = st.sampled_from(files.paths)
    junk = st.sampled_from(JUNK)
    if name == "max_steps":  # never 0: that is "unlimited"
        return mostly(st.integers(1, 5000).map(str), junk)
    if name == "max_seconds":
        return mostly(st.sampled_from(["0.01", "0.5", "2"]), st.sampled_from(["0", "-1", "nan", "1e-9"]))
    if name == "settings":
        key = st.sampled_from([*settings_keys, "nope", "cfg.NOPE"])
        value = mostly(st.one_of(numbers(), st.sampled_from(["true", "off", "checker", "1K"])), junk)
        return mostly(st.builds(lambda k, v: f"{k}={v}", key, value), junk)
    if name in ("arch_name", "only", "arch"):
        return mostly(st.sampled_from(archs), st.sampled_from(["nope", "RV32IM", ""]))
    if name in ("no_plugin", "only_plugin"):
        return mostly(st.sampled_from(plugins), st.just("nosuch"))
    if name == "plugin_module":
        return st.sampled_from(["json", "no_such_module_xyz", "x=os.path:join"])
    if name == "words":
        return mostly(st.integers(0, 2**40).map(lambda v: f"{v:x}"), junk)
    if name in ("until_symbol", "trace_agent", "name"):
        return st.sampled_from(["_start", "loop", "main", "core0", "hart0", "nope", "acme-isa", "zork",
                                "tessera_x", "class", "Bad Name"])
    if name in ("trace_pc", "trace_window"):
        return mostly(st.builds(lambda a, b: f"{a}:{b}", numbers(), numbers()), junk)
    if isinstance(param.type, click.Choice):
        return mostly(st.sampled_from(list(param.type.choices)), junk)
    if name.endswith("_out") or name in ("output", "dir"):  # never over an input file
        return st.sampled_from(files.outputs)
    if isinstance(param.type, click.Path):
        return paths
    if isinstance(param.type, click.types.StringParamType):
        return st.one_of(paths, numbers(), junk, st.sampled_from(archs))
    return mostly(numbers(), junk)  # ints, floats, addresses, sizes, seconds


@st.composite
def argvs(draw: st.DrawFn, table: dict[str, list[click.Parameter]], files: Files, archs: list[str],
          settings_keys: list[str], plugins: list[str]) -> list[str]:
    argv: list[str] = []
    for param in cli.params:  # a few of the group's own options (not --debug/-v: they add output)
        if isinstance(param, click.Option) and param.name in ("no_plugin", "only_plugin",
                                                              "plugin_module", "log_format"):
            if draw(one_in(10)):
                argv += [param.opts[0], draw(values(param, files, archs, settings_keys, plugins))]
    name = draw(st.sampled_from([n for n in COMMAND_WEIGHTS for _ in range(COMMAND_WEIGHTS[n]) if n in table]
                                + sorted(set(table) - set(COMMAND_WEIGHTS))))
    argv.append(name)
    if name in ("run", "resume"):
        argv += BUDGET
    pieces: list[list[str]] = []
    params = [p for p in table[name] if p.name != "help" and not getattr(p, "hidden", False)]
    for param in [p for p in params if isinstance(p, click.Argument) and p.nargs == 1]:
        if not draw(one_in(10)):  # sometimes missing
            pieces.append([draw(values(param, files, archs, settings_keys, plugins))])
    options = [p for p in params if isinstance(p, click.Option)]
    arch = [p for p in options if p.name == "arch_name"]
    if arch and not draw(one_in(4)):  # the option most runs need
        pieces.append([arch[0].opts[0], draw(values(arch[0], files, archs, settings_keys, plugins))])
    for param in draw(st.lists(st.sampled_from(options), max_size=5)) if options else []:
        if param.is_flag or param.count:
            pieces.append([draw(st.sampled_from([*param.opts, *param.secondary_opts]))])
        else:
            pieces.append([draw(st.sampled_from(param.opts)),
                           draw(values(param, files, archs, settings_keys, plugins))])
    if draw(one_in(15)):
        pieces.append([draw(st.sampled_from(JUNK))])
    for piece in draw(st.permutations(pieces)):
        argv += piece
    return argv


# --------------------------------------------------------------------------- the checks


def check(argv: list[str], code: int, out: str, err: str) -> None:
    """The invariants every answer keeps (see the module docstring)."""
    shown = f"argv={argv!r} exit={code} stderr={err!r}"
    assert "Traceback" not in out and "Traceback" not in err, shown
    assert code != 76 and "internal error" not in err, shown
    lines = err.splitlines()
    errors = [line for line in lines if line.startswith("tessera: ")]
    assert len(lines) <= (22 if code in (73, 74) else 4), shown
    if not errors:  # success, a failed demo example, or the program's own exit status
        command = next((a for a in argv if a in commands.BUILTIN_COMMANDS), None)
        assert code in (0, 1) or command in ("run", "resume"), shown
        return
    first = errors[0][len("tessera: "):]
    if first.startswith("usage error:"):
        assert code == 2, shown
        return
    found = [kind for kind in KINDS if first.startswith(f"{kind}:") or f": {kind}:" in first]
    assert found, f"undocumented error kind: {shown}"
    assert code == KINDS[max(found, key=len)], shown


# --------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        for var in [v for v in os.environ if v.startswith("TESSERA_")]:
            mp.delenv(var)
        plugins = installed_plugins()
        mp.setenv("TESSERA_PLUGINS", ",".join(plugins))
        root = tmp_path_factory.mktemp("fuzz")
        mp.chdir(root)
        files = Files(root / "files")
        table = command_table()
        host = PluginHost()
        archs = sorted(host.architectures())
        keys = sorted({s.name for a, _ in host.architectures().values()
                       for s in getattr(getattr(a, "settings", None), "items", ())})
        yield files, table, archs, keys, plugins


@pytest.fixture
def fuzz_env(pool, monkeypatch):
    files, table, archs, keys, plugins = pool
    monkeypatch.setenv("TESSERA_PLUGINS", ",".join(plugins))
    monkeypatch.chdir(files.root.parent)
    return pool


FUZZ = settings(max_examples=int(os.environ.get("TESSERA_FUZZ_EXAMPLES", "60")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(data=st.data(), blob=st.binary(max_size=300), asm=st.lists(st.sampled_from(ASM_LINES), max_size=8))
def test_random_command_lines_get_documented_answers(fuzz_env, data, blob, asm):
    files, table, archs, keys, plugins = fuzz_env
    Path(files.random).write_bytes(blob)
    Path(files.random_asm).write_text("\n".join(asm) + "\n")
    argv = data.draw(argvs(table, files, archs, keys, plugins), label="argv")
    code, out, err = run_in_process(argv)
    check(argv, code, out, err)


@pytest.mark.parametrize("make_argv", [
    lambda f: ["run", *BUDGET, "--arch", "toy", f.random],
    lambda f: ["run", *BUDGET, str(f.root / "rv32-cut52.elf")],
    lambda f: ["resume", *BUDGET, str(f.root / "flipped.snap")],
], ids=["random-bytes", "truncated-elf", "flipped-snapshot"])
def test_the_same_answers_from_a_real_process(fuzz_env, make_argv):
    files, *_ = fuzz_env
    Path(files.random).write_bytes(bytes(range(256)) * 2)
    Path(files.random_asm).write_text("li r1, undefined_symbol\nbogus r9\n")
    argv = make_argv(files)
    proc = subprocess.run([*tessera_command(), *argv], capture_output=True, text=True, timeout=60,
                          env=clean_env({"TESSERA_PLUGINS": os.environ["TESSERA_PLUGINS"]}),
                          cwd=files.root.parent)
    check(argv, proc.returncode, proc.stdout, proc.stderr)
