"""``--dump-state text``: the generic rule for plugin state, the ``dump_text`` seam, and
every installed architecture's bundled examples rendered with all of their state."""

from __future__ import annotations

import json
import re

import attrs
import pytest
from clitools import assert_one_line_error

from tessera import dumptext
from tessera.cli.demo import load_example
from tessera.errors import PluginError
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera.session import state_text

HOST = PluginHost(use_environment=False)
ARCHS = HOST.architectures()
EXAMPLES = [pytest.param(name, ex.name, id=f"{name}-{ex.name}")
            for name, (arch, _plugin) in sorted(ARCHS.items()) for ex in arch.examples]


def run_example(arch_name: str, example_name: str) -> Machine:
    arch = HOST.architecture(arch_name)
    example = next(ex for ex in arch.examples if ex.name == example_name)
    machine = Machine(arch, host=HOST)
    load_example(machine, example)   # assembly, or a program file (the tiles' prebuilt kernel)
    machine.run(max_steps=example.max_steps)
    return machine


def agent_block(text: str, name: str) -> str:
    """The lines of agent ``name``: its status line and the indented lines after it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:1] == [name])
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
    return "\n".join(lines[start:end])


# ---------------------------------------------------------------- the generic rule

def test_generic_rule_by_shape():
    extras = {
        "mode": 3, "base": 0xFFFD0000, "name": "boot", "none": None, "ok": True,
        "lanes": [1, 0x100, 0xFFFF],
        "flags": [True, False, True, True, False, False, False, False, True],
        "same": [7] * 8,
        "nested": {"depth": 1, "sub": {"x": 2}},
        "flat": {"a": 1, "b": 2},
        "rows": [{"way": 0, "va": 0x4000}, {"way": 1, "va": 0x8000, "extra": "y"}],
        "matrix": [[1, 2], [3, 4]],
        "empty": [],
    }
    assert dumptext.render(extras) == [
        "mode 3  base 0xfffd0000  name boot  none none  ok true  empty none",
        "lanes 0x0001 0x0100 0xffff",
        "flags 10110000 1",
        "same  all 8 = 0x07",
        "nested",
        "    depth 1",
        "    sub: x 2",
        "flat: a 1  b 2",
        "rows",
        "    way  va     extra",
        "    0    16384",
        "    1    32768  y",
        "matrix[0] 0x01 0x02",
        "matrix[1] 0x03 0x04",
    ]


def test_long_hex_rows_wrap_with_the_index_of_their_first_element():
    lines = dumptext.list_row("v1", list(range(0x100, 0x100 + 16 * 4, 4)), digits=8)
    assert lines[0].split()[0] == "v1" and len(lines[0].split()) == 9
    assert lines[1].split()[0] == "[8]" and lines[1].split()[1] == "0x00000120"
    assert len({line.index("0x") for line in lines}) == 1  # the columns line up


def test_integers_print_decimal_below_0x10000_and_hex_from_there():
    assert [dumptext.scalar(v) for v in (0, 42, 0xFFFF, 0x10000, -5, -0x20000)] == \
        ["0", "42", "65535", "0x10000", "-5", "-0x20000"]


# ---------------------------------------------------------------- the seam

def _toy():
    return HOST.architecture("toy")


def test_dump_text_replaces_the_generic_rendering_of_extras():
    calls = []

    def dump_text(section, name, state):
        calls.append((section, name))
        if section == "agent" and "core_id" in state:
            return [f"core number {state['core_id']}"]
        if name == "sem0":
            return ["custom semaphore"]
        return None

    arch = attrs.evolve(_toy(), dump_text=dump_text)
    machine = Machine(arch, host=HOST, config={"cores": 1, "echo": False})
    text = state_text(machine)
    block = agent_block(text, "core0")
    assert "    core number 0" in block.splitlines()
    assert "core_id" not in block                        # replaced, not added to
    assert "sync sem0 (semaphore)\n    custom semaphore" in text
    assert "sync sem1 (semaphore): value=0" in text      # None: the generic one-liner
    assert ("agent", "core0") in calls and ("sync", "sem1") in calls


@pytest.mark.parametrize("bad", [lambda s, n, st: 1 / 0, lambda s, n, st: "one string"])
def test_a_failing_dump_text_is_a_plugin_error_naming_the_architecture(bad):
    machine = Machine(attrs.evolve(_toy(), dump_text=bad), host=HOST, config={"cores": 1, "echo": False})
    with pytest.raises(PluginError, match=r"architecture toy: dump_text\('agent', 'core0'\)"):
        state_text(machine)


BROKEN_PLUGIN = """
import attrs
import tessera
from tessera_toyarch.isa import TOY

TESSERA_API_VERSION = 1


def dump_text(section, name, state):
    return [str(1 // 0)]


@tessera.hookimpl
def tessera_architectures():
    return [attrs.evolve(TOY, name="toy-broken", dump_text=dump_text)]
"""


def test_a_failing_dump_text_on_the_command_line_is_one_line_exit_72(tessera, tmp_path, monkeypatch):
    (tmp_path / "dump_text_broken_plugin.py").write_text(BROKEN_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    source = tmp_path / "halt.s"
    source.write_text("li r1, 3\nhalt r1\n")
    res = tessera("--plugin-module", "broken=dump_text_broken_plugin", "run", source,
                  "--arch", "toy-broken", "--set", "cores=1", "--dump-state", "text")
    assert_one_line_error(res, 72, "architecture toy-broken: dump_text", "ZeroDivisionError")


def test_without_dump_text_extras_follow_the_generic_rule():
    machine = Machine(_toy(), host=HOST, config={"cores": 2, "echo": False})
    text = state_text(machine)
    assert "    core_id 1" in agent_block(text, "core1").splitlines()


# ---------------------------------------------------------------- every architecture

@pytest.mark.parametrize(("arch_name", "example_name"), EXAMPLES)
def test_every_example_shows_all_its_state(arch_name, example_name):
    machine = run_example(arch_name, example_name)
    state = machine.state()
    json.dumps(state)  # the JSON dump is unchanged plain data
    text = state_text(machine, state)
    for name, agent in state["agents"].items():
        block = agent_block(text, name)
        for key in dumptext.extras(agent):
            assert re.search(rf"\b{re.escape(key)}\b", block), (name, key, block)
    for name in state["sync"]:
        assert re.search(rf"^sync {re.escape(name)} ", text, re.MULTILINE), name
    for space, regions in state["memory"].items():
        assert f"memory {space}" in text
        for region in regions:
            assert re.search(rf"^    {re.escape(region['name'])}\s", text, re.MULTILINE), region
    # readable: no Python lists of integers, no line longer than a wide terminal
    assert not re.search(r"\[\d+, \d+", text), text
    assert max(len(line) for line in text.splitlines()) <= 140


@pytest.mark.skipif("phoenix" not in ARCHS, reason="tessera-phoenix is not installed")
def test_phoenix_thread_state_and_tlb_table():
    from tessera_phoenix.mmu.tlb import R_BIT, W_BIT, set_of

    machine = run_example("phoenix", "vcopy")
    va, pa, asid = 0x0040_4000, 0x1234_4000, 5
    words = [((pa >> 14) << 10) | R_BIT | W_BIT, ((va >> 24) << 24) | (asid << 12) | (pa >> 36)]
    machine.phoenix.mmu.tlb.write(1, set_of(va), words + [0] * 10)
    text = state_text(machine)
    t0 = agent_block(text, "t0")
    assert "mode 3 (machine)" in t0 and "depth 1" in t0 and "sp_alias r62" in t0
    thread = machine.agent("t0")
    assert f"status_word {thread.status_word:#010x}" in t0
    v1 = next(line for line in t0.splitlines() if line.split()[:1] == ["v1"])
    assert v1.split()[1:3] == [f"{int(thread.vr[1][0]):#010x}", f"{int(thread.vr[1][1]):#010x}"]
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.strip().startswith("tlb:"))
    assert lines[head + 1].split() == ["way", "set", "va", "asid", "pa", "flags", "lvl", "valid",
                                       "other", "words"]
    rows = [line.split() for line in lines[head + 2:] if line.startswith("        ")]
    assert ["1", f"{set_of(va):#05x}", "0x00404000", "5", "0x12344000", "-----rw-", "0", "yes"] in rows
    assert "pma: enabled" in text and "region  start" in text


@pytest.mark.skipif("phoenix" not in ARCHS, reason="tessera-phoenix is not installed")
def test_phoenix_cause_is_named():
    text = state_text(run_example("phoenix", "trap"))
    cause = next(line for line in agent_block(text, "t0").splitlines() if line.split()[:1] == ["cause"])
    assert cause.split()[-2:] == ["37", "(UNIMP)"]  # machine mode's CAUSE


@pytest.mark.skipif("rv32im" not in ARCHS, reason="tessera-riscv is not installed")
@pytest.mark.parametrize("arch_name", ["rv32im", "rv64im", "tile"])
def test_riscv_csrs_are_hex_at_xlen(arch_name):
    if arch_name not in ARCHS:
        pytest.skip(f"{arch_name} is not installed")
    machine = run_example(arch_name, HOST.architecture(arch_name).examples[0].name)
    state = machine.state()
    text = state_text(machine, state)
    hart = state["agents"]["hart0"]
    digits = hart["xlen"] // 4
    for csr, value in hart["csrs"].items():
        assert f"{csr}={value:#0{digits + 2}x}" in text, csr
    if arch_name == "tile":  # the tile extension's CSRs, staged words and thread position
        block = agent_block(text, "hart0")
        for csr, value in hart["tile"]["csrs"].items():
            assert f"{csr} {dumptext.scalar(value)}" in block, csr
        assert "thread: tid 0  pe 0  cluster 0" in block and "staged:" in block


# ---------------------------------------------------------------- the command line

@pytest.mark.skipif("phoenix" not in ARCHS, reason="tessera-phoenix is not installed")
def test_command_line_text_and_json_dumps_of_one_run(tessera, tmp_path, monkeypatch):
    monkeypatch.setenv("TESSERA_PLUGINS", "phoenix")
    arch = HOST.architecture("phoenix")
    source = tmp_path / "trap.s"
    source.write_text(next(ex for ex in arch.examples if ex.name == "trap").source)
    text = tessera("run", source, "--arch", "phoenix", "--set", "threads=1", "--dump-state", "text")
    data = tessera("run", source, "--arch", "phoenix", "--set", "threads=1", "--dump-state", "json")
    assert text.code == data.code == 0, text.err + data.err
    state = json.loads(data.out)
    tlb = state["sync"]["cr0"]["mmu"]["tlb"]
    assert all(isinstance(word, int) for entry in tlb for word in entry)  # JSON keeps the raw words
    assert "tlb: 16 stored entries" in text.out
    assert text.out.count("global  0xfff") == len(tlb)                     # text: one row per entry
    assert "result halted  exit 0" in text.out
    assert f"eip {state['agents']['t0']['eip']:#010x}" in text.out
