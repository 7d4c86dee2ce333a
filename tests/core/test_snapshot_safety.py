"""Snapshots are safe to read: no code chosen by the file runs, damage is detected,
and the plugins that made a snapshot must be here, enabled and compatible."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import pickletools
import struct

import pytest

from tessera.errors import SnapshotError
from tessera.machine import Machine
from tessera.machine import snapshot as snapfile
from tessera.plugins import PluginHost
from tessera.version import __version__

from .conftest import new_machine, prog, sum_loop


@pytest.fixture
def good() -> bytes:
    m = new_machine(prog(*sum_loop(30)), cores=1)
    m.run(max_steps=17, raise_on_budget=False)
    return m.snapshot()


def split(data: bytes) -> tuple[dict, bytes]:
    header, payload = snapfile.read_header(data)
    return header, bytes(payload)


def forge(header: dict, payload: bytes) -> bytes:
    """What an attacker can write: the digest is a checksum, not a signature."""
    head = json.dumps(header).encode()
    body = struct.pack(">I", len(head)) + head + payload
    return snapfile.MAGIC + hashlib.sha256(body).digest() + body


# ----------------------------------------------------------------- nothing from the file runs

class Evil:
    """Pickles as ``os.system(command)``: what the old pickle format would have run."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _marker(tmp_path) -> tuple[str, str]:
    path = tmp_path / "payload-ran"
    return str(path), f"touch {path}"


def test_crafted_pickle_payload_does_not_run(tmp_path, good):
    marker, command = _marker(tmp_path)
    header, _ = split(good)
    for payload in (pickle.dumps(Evil(command), protocol=5), pickle.dumps(Evil(command), protocol=0),
                    pickle.dumps({"machine": Evil(command)}, protocol=2)):
        with pytest.raises(SnapshotError, match=r"snapshot refers to (posix|os)\.system, which is "
                                                r"not an allowed class") as info:
            Machine.restore(forge(header, payload))
        assert info.value.exit_code == 75
    assert not os.path.exists(marker)


def test_the_old_unchecked_format_is_refused_without_reading_it(tmp_path):
    marker, command = _marker(tmp_path)
    evil = snapfile.MAGIC + pickle.dumps({"format": 1, "machine": Evil(command)}, protocol=5)
    with pytest.raises(SnapshotError, match="unsupported snapshot format 1"):
        Machine.restore(evil)
    assert not os.path.exists(marker)


def _global(module: str, name: str, args: tuple = (), *, proto: int = 2) -> bytes:
    """A pickle that names ``module.name`` and calls it with ``args`` (REDUCE)."""
    body = pickle.GLOBAL + f"{module}\n{name}\n".encode()
    body += pickle.dumps(args, protocol=proto)[2:-1]  # the tuple, without PROTO/STOP
    return pickle.PROTO + bytes([proto]) + body + pickle.REDUCE + pickle.STOP


@pytest.mark.parametrize("module,name,args,match", [
    # a function of the core, even with harmless arguments: only classes are resolved
    ("tessera.cli.main", "main", (["--version"],), "tessera.cli.main.main, which is not an allowed class"),
    # an attribute chain through an allowed module to os.system
    ("tessera.machine.machine", "os.system", ("true",), "os.system, which is not an allowed class"),
    # a class another package defines, re-exported by an allowed module
    ("tessera.machine.machine", "Callable", (), "not an allowed class"),
    # an allowed class called with arguments from the file: its __init__ would run
    ("tessera.memory.regions", "RAM", ("x", 0, 16), "asks to call tessera.memory.regions.RAM"),
    ("builtins", "eval", ("1",), "builtins.eval, which is not an allowed class"),
    ("builtins", "getattr", (), "builtins.getattr, which is not an allowed class"),
    ("subprocess", "Popen", (["true"],), "subprocess.Popen, which is not an allowed class"),
])
def test_only_classes_of_allowed_packages_are_built(good, module, name, args, match):
    header, _ = split(good)
    with pytest.raises(SnapshotError, match=match):
        Machine.restore(forge(header, _global(module, name, args)))


def test_opcodes_that_call_classes_directly_are_refused(good):
    header, _ = split(good)
    inst = pickle.MARK + pickle.INST + b"tessera.sync\nSemaphore\n" + pickle.STOP
    with pytest.raises(SnapshotError, match="opcode that calls code directly"):
        Machine.restore(forge(header, inst))
    obj = pickle.MARK + pickle.GLOBAL + b"tessera.sync\nSemaphore\n" + pickle.OBJ + pickle.STOP
    with pytest.raises(SnapshotError, match="opcode that calls code directly"):
        Machine.restore(forge(header, obj))


def test_header_naming_a_foreign_package_is_refused_before_unpickling(good):
    header, payload = split(good)
    header["packages"] = [*header["packages"], "os"]
    with pytest.raises(SnapshotError, match="package 'os', which is neither the core nor an active plugin"):
        Machine.restore(forge(header, payload))


def test_every_global_of_a_real_snapshot_is_a_class_or_plain_data(good):
    """The allow-list is not just wide enough: what real machines need is classes."""
    _, payload = split(good)
    ops = {op.name for op, _arg, _pos in pickletools.genops(payload)}
    assert "REDUCE" in ops or "NEWOBJ" in ops
    assert not ops & {"INST", "OBJ", "EXT1", "EXT2", "EXT4"}


# ----------------------------------------------------------------- damage is detected

def test_truncated_snapshots_are_damaged(good):
    for cut in (len(snapfile.MAGIC) + 5, len(snapfile.MAGIC) + 40, len(good) // 3, len(good) - 1):
        with pytest.raises(SnapshotError, match="damaged"):
            Machine.restore(good[:cut])


def test_a_flipped_byte_anywhere_is_detected(good):
    header_end = len(snapfile.MAGIC) + 32 + 4 + len(json.dumps(split(good)[0]))
    positions = [len(snapfile.MAGIC) + 3,  # the digest itself
                 len(snapfile.MAGIC) + 33,  # the header length
                 len(snapfile.MAGIC) + 40, header_end - 5,  # the header
                 header_end + 10, len(good) // 2, len(good) - 2]  # the payload
    for pos in positions:
        for bit in (0x01, 0x80):
            bad = bytearray(good)
            bad[pos] ^= bit
            with pytest.raises(SnapshotError, match="damaged"):
                Machine.restore(bytes(bad))
    bad = bytearray(good)
    bad[2] ^= 0x20  # the magic
    with pytest.raises(SnapshotError, match="bad magic"):
        Machine.restore(bytes(bad))


# ----------------------------------------------------------------- what the file holds

def test_machine_none_and_other_non_machines(good):
    header, _ = split(good)
    for value, kind in ((None, "NoneType"), ({"machine": None}, "dict"), ([1, 2], "list")):
        with pytest.raises(SnapshotError, match=f"holds a {kind}, not a machine"):
            Machine.restore(forge(header, pickle.dumps(value, protocol=5)))


def test_an_inconsistent_machine_is_refused(good):
    machine = Machine.restore(good)
    machine.agents = 5  # state that does not hang together, in a well-formed file
    data = snapfile.dump(machine, snapfile.Registry(None))
    with pytest.raises(SnapshotError, match="inconsistent machine: .*TypeError"):
        Machine.restore(data)


def test_wrong_format_and_header(good):
    header, payload = split(good)
    with pytest.raises(SnapshotError, match="unsupported snapshot format 7"):
        Machine.restore(forge({**header, "format": 7}, payload))
    with pytest.raises(SnapshotError, match="'plugins' missing"):
        Machine.restore(forge({k: v for k, v in header.items() if k != "plugins"}, payload))
    with pytest.raises(SnapshotError, match="unreadable header"):
        head = b"{not json"
        body = struct.pack(">I", len(head)) + head + payload
        Machine.restore(snapfile.MAGIC + hashlib.sha256(body).digest() + body)


# ----------------------------------------------------------------- provenance

def test_header_records_the_plugins_that_made_it(good):
    header, _ = split(good)
    assert header["tessera"] == __version__ and header["arch"] == "toy"
    assert header["architectures"] == {"toy": "toy"}
    (toy,) = [p for p in header["plugins"] if p["name"] == "toy"]
    assert toy["distribution"] == "tessera-toyarch"
    assert {"tessera", "tessera_toyarch"} <= set(header["packages"])


def test_wrong_tessera_version_is_refused(good):
    header, payload = split(good)
    with pytest.raises(SnapshotError, match=r"made by Tessera 9\.0\.0, which this Tessera .* cannot read"):
        Machine.restore(forge({**header, "tessera": "9.0.0"}, payload))


def test_missing_disabled_and_incompatible_plugins_are_refused(good):
    header, payload = split(good)
    missing = {**header, "plugins": [*header["plugins"], {"name": "nosuch", "distribution": "tessera-nosuch",
                                                          "version": "1.0"}]}
    with pytest.raises(SnapshotError, match=r"needs plugin nosuch \(tessera-nosuch 1\.0\), which is not installed"):
        Machine.restore(forge(missing, payload))
    with pytest.raises(SnapshotError, match=r"needs plugin toy \(tessera-toyarch .*\), which is disabled"):
        Machine.restore(good, host=PluginHost(disabled=["toy"], use_environment=False))
    with pytest.raises(SnapshotError, match=r"needs plugin toy .*which is disabled \(not in the allow-list\)"):
        Machine.restore(good, host=PluginHost(only=["riscv"], use_environment=False))
    newer = {**header, "plugins": [dict(p, version="3.1.0") if p["name"] == "toy" else p
                                   for p in header["plugins"]]}
    with pytest.raises(SnapshotError, match=r"needs plugin toy \(tessera-toyarch 3\.1\.0\), but "
                                            r"tessera-toyarch .* is installed \(another release series\)"):
        Machine.restore(forge(newer, payload))


def test_release_series_rule():
    assert snapfile.compatible("0.1.0", "0.1.7") and not snapfile.compatible("0.1.0", "0.2.0")
    assert snapfile.compatible("2.0.0", "2.5.1") and not snapfile.compatible("1.9", "2.0")
    assert snapfile.compatible("-", "-") and not snapfile.compatible("-", "0.1.0")


def test_a_test_only_architecture_must_be_supplied(good):
    import attrs

    from tessera_toyarch import TOY

    mine = attrs.evolve(TOY, name="toy-copy")
    m = Machine(mine, config={"echo": False, "cores": 1})
    m.space.write_bytes(0, prog(*sum_loop(5)))
    m.run(max_steps=4, raise_on_budget=False)
    data = m.snapshot()
    assert split(data)[0]["architectures"] == {"toy-copy": None}
    with pytest.raises(SnapshotError, match="'toy-copy', which no plugin provides"):
        Machine.restore(data)
    again = Machine.restore(data, architectures=[mine])
    assert again.arch is mine
    m.run()
    again.run()
    assert again.state_hash() == m.state_hash()


def test_a_plugin_package_used_as_a_library_needs_installing_not_enabling():
    """The tile architecture's harts are tessera_riscv classes: the riscv plugin's package is
    a library of the snapshot (installed, compatible), while tile itself must be enabled."""
    from tessera_tile import TILE

    machine = Machine(TILE, host=PluginHost(only=["tile"], use_environment=False))
    data = machine.snapshot()
    header, payload = split(data)
    assert [p["name"] for p in header["plugins"]] == ["tile"]
    assert [(lib["name"], lib["package"]) for lib in header["libraries"]] == [("riscv", "tessera_riscv")]
    # riscv disabled: its hooks are off, its classes still restore the harts
    again = Machine.restore(data, host=PluginHost(only=["tile"], use_environment=False))
    assert again.state_hash() == machine.state_hash()
    with pytest.raises(SnapshotError, match="needs plugin tile .*disabled"):
        Machine.restore(data, host=PluginHost(only=["riscv"], use_environment=False))
    gone = {**header, "libraries": [dict(lib, name="nosuch") for lib in header["libraries"]]}
    with pytest.raises(SnapshotError, match="uses package tessera_riscv of plugin nosuch .*not installed"):
        Machine.restore(forge(gone, payload))
    old = {**header, "libraries": [dict(lib, version="5.0") for lib in header["libraries"]]}
    with pytest.raises(SnapshotError, match="another release series"):
        Machine.restore(forge(old, payload))
    lying = {**header, "libraries": [dict(lib, package="os") for lib in header["libraries"]]}
    with pytest.raises(SnapshotError, match="names package os for plugin riscv"):
        Machine.restore(forge(lying, payload))
