"""Fault targets: found from the description and the machine, named, sized, read and written."""

from __future__ import annotations

import json

import pytest
from faults_support import host, rv_machine

import tessera
from tessera.errors import ConfigError, PluginError
from tessera.machine import Machine
from tessera_faults import resolve, targets_of
from tessera_riscv import RV32IM, csrs


def test_a_risc_v_hart_has_its_register_file_its_ram_and_its_instruction_word():
    machine = rv_machine("li a0, 1\n")
    found = targets_of(machine)
    assert [(t.name, t.kind, t.shape, t.bits) for t in found.values()] == [
        ("hart0.x", "register", (32,), 32), ("hart0.csr", "csr", (len(csrs.names(32)),), 32),
        ("mem.ram", "memory", (0x100000,), 8), ("hart0.insn", "decode", (1,), 32)]
    x = found["hart0.x"]
    assert x.exclude == {0} and x.names[10] == "a0" and x.agent == "hart0"
    x.write(10, 0x1_2345_6789)                       # masked to the register's width
    assert machine.agent("hart0").regs["x"][10] == 0x2345_6789 == x.read(10)
    ram = found["mem.ram"]
    ram.write(0x100, 0x1AB)
    assert machine.space.read_bytes(0x100, 1) == b"\xab" and ram.read(0x100) == 0xAB
    assert found["hart0.insn"].read(0) == machine.space.read(0x10000, 4)   # what the hart fetches next


@pytest.mark.parametrize(("text", "label"), [
    ("x5", "hart0.x[5]"), ("t0", "hart0.x[5]"), ("hart0.a0", "hart0.x[10]"), ("x[31]", "hart0.x[31]"),
    ("hart0.x[0x1f]", "hart0.x[31]"), ("mem[0x100]", "mem.ram[0x100]"), ("mem.ram[0xff]", "mem.ram[0xff]"),
    ("insn", "hart0.insn"), ("hart0.x", "hart0.x"),                  # a structure: a random entry of it
])
def test_target_texts_resolve_to_entries(text, label):
    assert resolve(rv_machine("li a0, 1\n"), text).label() == label


@pytest.mark.parametrize(("text", "message"), [
    ("y5", "unknown fault target 'y5' on rv32im"),
    ("hart1.x5", "unknown fault target"),
    ("x[32]", "index 32 of dimension 0 is outside 0..31"),
    ("mem[0x200000]", "no RAM of the main address space holds 0x200000"),
    ("mem.ram[0x100000]", "outside mem.ram"),
    ("x[a]", "the index must be numbers"),
    ("x[1,2]", "has 1 dimensions"),
])
def test_bad_target_texts_are_configuration_errors(text, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        resolve(rv_machine("li a0, 1\n"), text)


def test_rfphoenix_vector_lanes_follow_the_lanes_setting():
    h = host()
    machine = Machine(h.architecture("phoenix"), host=h, config={"lanes": 4, "threads": 2, "dram": 0x100000})
    found = targets_of(machine)
    v = found["t1.v"]
    assert (v.kind, v.shape, v.bits, v.agent, v.plugin) == ("lanes", (64, 4), 32, "t1", "phoenix")
    entry = resolve(machine, "t1.v[3,2]")
    assert entry.index == 3 * 4 + 2
    v.write(entry.index, 0xDEAD_BEEF)
    vr = machine.agent("t1").vr
    assert int(vr[3, 2]) == 0xDEAD_BEEF and int(vr.sum()) == 0xDEAD_BEEF   # exactly one lane changed
    assert v.snapshot()[14] == 0xDEAD_BEEF
    assert {"t0.r", "t1.r", "t0.v", "t1.v", "t0.insn", "t1.insn", "mem.dram"} <= set(found)
    assert found["t0.r"].exclude == {0, 59}                          # r0 and the PC register


def test_tensix_lregs_dest_and_source_cells():
    h = host()
    machine = Machine(h.architecture("tensix"), host=h)
    found = targets_of(machine)
    shapes = {name: (found[name].shape, found[name].bits) for name in ("sfpu.lreg", "dest", "srca", "srcb")}
    assert shapes == {"sfpu.lreg": ((17, 32), 32), "dest": ((1024, 16), 16), "srca": ((2, 64, 16), 19),
                      "srcb": ((2, 64, 16), 19)}
    core = machine.ext["tensix"]
    lreg = resolve(machine, "sfpu.lreg[3,31]")
    found["sfpu.lreg"].write(lreg.index, 0x1234_5678)
    assert int(core.sfpu.lreg[3, 31]) == 0x1234_5678
    dest = resolve(machine, "dest[1023,15]")
    found["dest"].write(dest.index, 0x1_BEEF)                       # 16-bit cells
    assert int(core.dest.bits[1023, 15]) == 0xBEEF
    srcb = resolve(machine, "srcb[1,63,0]")
    found["srcb"].write(srcb.index, 0xFFFF_FFFF)                   # 19-bit cells
    assert int(core.srcb.rows[1, 63, 0]) == (1 << 19) - 1


class Extra:
    """A plugin adding one structure (and, in the failing variants, a malformed one)."""

    TESSERA_API_VERSION = 1

    def __init__(self, items):
        self.items = items

    @tessera.hookimpl
    def tessera_fault_targets(self, machine):
        return self.items(machine)


def test_a_plugin_adds_a_target_through_the_hook():
    store = [0] * 6

    def items(machine):
        return [{"name": "acc", "kind": "array", "shape": (2, 3), "bits": 12, "read": store.__getitem__,
                 "write": store.__setitem__, "doc": "an accumulator"}]

    machine = rv_machine("li a0, 1\n", host=host(Extra(items)))
    acc = targets_of(machine)["acc"]
    assert (acc.entries, acc.plugin, acc.agent, acc.size_text()) == (6, "extra0", None, "2×3 × 12 bits")
    entry = resolve(machine, "acc[1,2]")
    acc.write(entry.index, 9)
    assert store == [0, 0, 0, 0, 0, 9] and entry.label() == "acc[1,2]"


@pytest.mark.parametrize(("item", "message"), [
    ("nonsense", "returned str, not a dict"),
    ({"name": "a", "kind": "k", "bits": 8, "read": len}, "misses write"),
    ({"name": "a", "kind": "k", "bits": 8, "read": len, "write": len, "colour": 1}, "unknown keys colour"),
    ({"name": "a b", "kind": "k", "bits": 8, "read": len, "write": len}, "is not a name"),
    ({"name": "a", "kind": "k", "bits": 0, "entries": 3, "read": len, "write": len}, "1..4096 bits"),
    ({"name": "a", "kind": "k", "bits": 8, "entries": 3, "read": 1, "write": len}, "must be callables"),
    ({"name": "hart0.x", "kind": "k", "bits": 8, "entries": 3, "read": len, "write": len}, "supplied by both"),
])
def test_malformed_hook_items_are_plugin_errors_naming_the_plugin(item, message):
    machine = rv_machine("li a0, 1\n", host=host(Extra(lambda machine: [item])))
    with pytest.raises(PluginError, match=message) as info:
        targets_of(machine)
    assert info.value.plugin == "extra0"


def test_tessera_faults_targets_lists_them(tessera_cli):
    code, out, err = tessera_cli("faults", "targets", "--arch", "phoenix", "--set", "lanes=8", "--set", "threads=1")
    assert (code, err) == (0, "")
    assert "t0.v" in out and "64×8 × 32 bits" in out and "mem.dram" in out
    code, out, _ = tessera_cli("faults", "targets", "--arch", "rv32im", "--json")
    assert code == 0
    listed = {t["name"]: t for t in json.loads(out)}
    assert listed["hart0.x"]["entries"] == 32 and listed["hart0.x"]["exclude"] == [0]
    assert listed["mem.ram"]["base"] == 0 and listed["hart0.insn"]["bits"] == 32
    code, _out, err = tessera_cli("faults", "targets", "--arch", "nosuch")
    assert code == 64 and err.startswith("tessera: configuration error: unknown architecture 'nosuch'")
    assert err.count("\n") == 1


def test_the_hook_is_a_hookspec_with_the_machine():
    h = host()
    machine = Machine(RV32IM, host=h, config={"ram": 0x100000})
    answers = [(p, [t["name"] for t in got]) for p, got in h.call_each("tessera_fault_targets", machine=machine)
               if got]
    assert answers == [("riscv", ["hart0.csr"])]   # RISC-V: its CSRs; the other architectures: none
