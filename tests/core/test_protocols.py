"""tessera.protocols names only what the core's objects have (issue 14 §3, "Types").

Two checks keep the protocols honest.  Here, at run time: every member a protocol
names exists on the real objects a hook receives (a machine with its host, its CPU
and engine agents, a decoded instruction, the architecture, the timing model,
``machine.ext``, the command collector), so a protocol cannot promise what the core
does not have.  And under ``tox -e type``, which runs mypy over this file:
:func:`_the_core_satisfies_the_protocols` assigns each concrete class to its protocol,
so the types agree too.  A third test holds the start-up promise: the protocols are
annotations only, never imported on the way to running a program.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from typing import TYPE_CHECKING, Any, Protocol

import pytest

import tessera.protocols as P
from tessera.cli.main import _CommandCollector
from tessera.isa import Decoder, Encoder
from tessera.machine import Machine
from tessera.plugins import PluginHost
from tessera_toyarch import TOY
from tessera_toyarch import plugin as toy_plugin

if TYPE_CHECKING:
    from tessera.engine import Agent, CpuAgent, EngineAgent
    from tessera.isa import Architecture, Instruction
    from tessera.machine import MachineExtensions, NominalTiming

#: Members a type checker reads but no object has as an attribute: ``__getattr__``
#: says that operand fields are ints (checked below on the operands themselves).
_TYPING_ONLY = {"__getattr__"}
#: What ``Protocol`` itself puts in a protocol class's namespace.
_MACHINERY = {"__init__", "__subclasshook__", "__init_subclass__", "__class_getitem__"}


def members(proto: type) -> set[str]:
    """The names a protocol (and the protocols it extends) promises."""
    names: set[str] = set()
    for cls in proto.__mro__:
        if cls in (Protocol, object) or not getattr(cls, "_is_protocol", False):
            continue
        names |= set(cls.__dict__.get("__annotations__", {}))
        for name, value in vars(cls).items():
            if name in _MACHINERY or (name.startswith("__") and not inspect.isfunction(value)):
                continue
            if inspect.isfunction(value) or isinstance(value, property):
                names.add(name)
    return names - _TYPING_ONLY


def missing(obj: Any, proto: type) -> list[str]:
    return sorted(name for name in members(proto) if not hasattr(obj, name))


@pytest.fixture(scope="module")
def machine() -> Machine:
    host = PluginHost(load_entry_points=False, use_environment=False)
    host.register(toy_plugin, "toy")
    m = Machine(TOY, host=host, config={"echo": False, "cores": 2})
    m.prepare()
    return m


def test_every_protocol_names_members() -> None:
    """The check below means something only if it finds the members (properties, methods)."""
    assert {"pc", "next_pc", "regs", "deliver_trap", "name", "halt", "machine"} <= members(P.CpuLike)
    assert {"get", "declare", "__getitem__", "__contains__"} <= members(P.MachineExtensionsLike)
    assert {"mnemonic", "operands", "address"} <= members(P.InstructionLike)
    assert "__getattr__" not in members(P.InstructionLike)


def test_a_machine_and_its_host_have_what_the_protocols_name(machine: Machine) -> None:
    assert missing(machine, P.MachineLike) == []
    assert missing(machine.ext, P.MachineExtensionsLike) == []
    assert missing(machine.host, P.HostLike) == []
    assert missing(machine.timing, P.TimingModel) == []
    assert missing(machine.arch, P.ArchitectureLike) == []
    assert missing(_CommandCollector(), P.CommandCollector) == []


def test_every_agent_has_what_the_agent_protocols_name(machine: Machine) -> None:
    kinds = {type(agent).__name__ for agent in machine.agents}
    assert len(kinds) == 2  # the toy's cores and its DMA engine: both kinds of agent
    for agent in machine.agents:
        assert missing(agent, P.AgentLike) == [], agent
    assert machine.cpus
    for cpu in machine.cpus:
        assert missing(cpu, P.CpuLike) == [], cpu
        assert cpu.machine is machine


def test_a_decoded_instruction_has_what_the_protocol_names() -> None:
    (form,) = TOY.encodings_named("addi")
    ins = Decoder(TOY).decode(Encoder(TOY).encode(form, {"rd": 1, "rs1": 2, "imm": -3}), 0x40)
    assert missing(ins, P.InstructionLike) == []
    assert dict(ins.operands) == {"rd": 1, "rs1": 2, "imm": -3}
    for name, value in ins.operands.items():  # what __getattr__ promises a type checker
        assert isinstance(getattr(ins, name), int) and getattr(ins, name) == value


def test_running_a_program_never_imports_the_protocols(tmp_path: Any) -> None:
    """Hook specifications and plugins import the protocols for type checking only."""
    (tmp_path / "p.s").write_text("        li r1, 7\n        halt r1\n", encoding="utf-8")
    script = ("import sys\nfrom tessera.cli.main import main\n"
              "try:\n    main(sys.argv[1:])\nexcept SystemExit as e:\n    code = e.code\n"
              "import tessera.hookspecs, tessera_trace.plugin, tessera_riscv.plugin\n"
              "print('exit', code, 'protocols' if 'tessera.protocols' in sys.modules else 'none',"
              " file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", script, "run", "--arch", "toy", "p.s"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.stderr.strip().splitlines()[-1] == "exit 7 none", proc.stderr


if TYPE_CHECKING:
    def _the_core_satisfies_the_protocols(
            machine: Machine, cpu: CpuAgent, agent: Agent, engine: EngineAgent, ins: Instruction,
            arch: Architecture, host: PluginHost, timing: NominalTiming, ext: MachineExtensions,
            cli: _CommandCollector) -> None:
        """Never called: mypy (``tox -e type``) checks that each assignment type-checks."""
        m: P.MachineLike = machine
        c: P.CpuLike = cpu
        a: P.AgentLike = agent
        e: P.AgentLike = engine
        i: P.InstructionLike = ins
        r: P.ArchitectureLike = arch
        h: P.HostLike = host
        t: P.TimingModel = timing
        x: P.MachineExtensionsLike = ext
        k: P.CommandCollector = cli
        del m, c, a, e, i, r, h, t, x, k
