"""The public seams plugins use instead of the core's internals (issue 14 §3).

* ``CpuAgent.deliver_trap``: a trap no instruction raises (an interrupt) goes the
  engine's way — listeners, ``stop_on_trap``, the architecture, the count;
* ``AddressSpace.view_cache`` / ``clear_view_caches``: a translated view's decode
  caches live in the physical space, so stores reach them;
* ``machine.ext``: per-plugin state under declared names, carried by snapshots;
* ``SyncObject.wait_for`` / ``wake_waiters`` / ``emit_event`` and
  ``Assembler.assembles`` / ``builtin_directive``: what subclasses use.
"""

from __future__ import annotations

import pickle

import pytest

from tessera.control import StopRequest, Trap
from tessera.engine import DecodeCache
from tessera.errors import ConfigError, SnapshotError, UnhandledTrap
from tessera.isa import Encoder
from tessera.isa.asm import Assembler
from tessera.machine import Machine, MachineExtensions
from tessera.memory import AgentSpace
from tessera.sync import SyncObject
from tessera_toyarch import TOY

enc = Encoder(TOY)


def word(mnemonic, **operands):
    (form,) = TOY.encodings_named(mnemonic)
    return enc.encode(form, operands)


def toy(**config):
    return Machine(TOY, config={"echo": False, "cores": 1, **config})


class Recorder:
    """A host stand-in whose only hooks are the two trap hooks."""

    def __init__(self):
        self.seen = []

    def hook_calls(self, hook):
        from tessera.types import HookCall

        if hook == "tessera_trap":
            return [HookCall("rec", lambda machine, agent, trap: self.seen.append(("trap", trap.cause, agent.pc)),
                             ("machine", "agent", "trap"))]
        if hook == "tessera_trap_taken":
            return [HookCall("rec", lambda machine, agent, trap: self.seen.append(("taken", trap.cause, agent.pc)),
                             ("machine", "agent", "trap"))]
        return []


# --------------------------------------------------------------------------- deliver_trap

def test_deliver_trap_goes_the_engine_way():
    machine = toy()
    recorder = Recorder()
    machine._trap_listeners = recorder.hook_calls("tessera_trap")
    machine._taken_listeners = recorder.hook_calls("tessera_trap_taken")
    core = machine.agent("core0")
    core.c[0] = 0x100
    core.pc = 0x40
    cycles = core.cycles
    core.deliver_trap(Trap(9, name="timer interrupt"))
    assert (core.pc, core.c[1], core.c[2]) == (0x100, 0x40, 9)
    assert core.traps == 1 and core.cycles > cycles
    assert recorder.seen == [("trap", 9, 0x40), ("taken", 9, 0x100)]


def test_deliver_trap_that_nobody_takes_is_unhandled():
    core = toy().agent("core0")
    core.pc = 0x40
    with pytest.raises(UnhandledTrap, match="timer interrupt .*no handler") as info:
        core.deliver_trap(Trap(9, name="timer interrupt"))
    assert info.value.pc == 0x40 and info.value.cause == 9 and core.traps == 0


def test_deliver_trap_under_stop_on_trap_leaves_it_untaken():
    machine = toy()
    machine.stop_on_trap = True
    core = machine.agent("core0")
    core.c[0] = 0x100
    core.pc = 0x40
    with pytest.raises(StopRequest):
        core.deliver_trap(Trap(9, name="timer interrupt"))
    assert core.pc == 0x40 and core.traps == 0 and core.c[2] == 0


# --------------------------------------------------------------------------- translated views

def test_an_address_space_is_an_agent_space_and_keeps_view_caches():
    machine = toy()
    phys = machine.space
    assert isinstance(phys, AgentSpace)
    made = []

    def make():
        made.append(DecodeCache())
        return made[-1]

    cache = phys.view_cache("t0.view", "toy", make)
    assert phys.view_cache("t0.view", "toy", make) is cache and len(made) == 1
    other = phys.view_cache("t1.view", "toy", make)
    cache.add(0x1000, 4, "ins", physical=0x40)
    other.add(0x1000, 4, "ins", physical=0x80)
    phys.mark_code(phys.region_at(0x40), 0x40, 4)
    phys.write(0x40, 4, 0)
    assert 0x1000 not in cache and 0x1000 in other       # only the view whose bytes changed
    cache.add(0x2000, 4, "ins", physical=0x90)
    phys.clear_view_caches("t1.view")
    assert not other and 0x2000 in cache                 # only that view's caches empty


def test_decode_cache_without_a_maker_names_the_space():
    with pytest.raises(KeyError, match="no decode cache 'toy' in address space 'main'"):
        toy().space.decode_cache("toy")


# --------------------------------------------------------------------------- machine.ext

def test_ext_declares_once_and_reads_back():
    machine = toy()
    state = machine.ext.declare("probe", {"n": 1})
    assert machine.ext["probe"] is state and machine.probe is state
    assert list(machine.ext) == ["probe"] and len(machine.ext) == 1 and "probe" in machine.ext
    assert machine.ext.get("tile") is None
    with pytest.raises(KeyError, match=r"no machine extension 'tile' is declared \(declared: probe\)"):
        machine.ext["tile"]
    with pytest.raises(AttributeError, match="no attribute 'tile'"):
        machine.tile  # noqa: B018 - the read itself must raise
    with pytest.raises(ConfigError, match="'probe' is already declared"):
        machine.ext.declare("probe", {})
    assert machine.ext["probe"] is state


@pytest.mark.parametrize("name", ["space", "run", "ext", "_hidden", "not a name", "class", ""])
def test_ext_refuses_names_the_shorthand_could_not_reach(name):
    machine = toy()
    with pytest.raises(ConfigError, match="machine extension name"):
        machine.ext.declare(name, 1)
    assert not machine.ext


def test_ext_travels_in_snapshots():
    machine = toy()
    machine.ext.declare("probe", {"loads": [1, 2, 3]})
    machine.space.write_bytes(0, enc.to_bytes(word("halt", rd=0)))
    again = Machine.restore(machine.snapshot())
    assert isinstance(again.ext, MachineExtensions)
    assert again.ext["probe"] == {"loads": [1, 2, 3]} and again.probe is again.ext["probe"]
    with pytest.raises(ConfigError, match="already declared"):  # the restored machine's own ext
        again.ext.declare("probe", {})
    assert again.run(max_steps=10).reason == "halted"


def test_a_snapshot_without_ext_is_refused():
    machine = toy()
    del machine.__dict__["ext"]  # what a machine pickled before machine.ext looks like
    with pytest.raises(SnapshotError, match=r"without plugin extensions \(machine.ext\)"):
        Machine.restore(machine.snapshot())


def test_ext_of_a_machine_under_plain_pickle_keeps_its_owner():
    machine = toy()
    machine.ext.declare("probe", 7)
    again = pickle.loads(pickle.dumps(machine))
    assert again.probe == 7
    with pytest.raises(ConfigError, match="already an attribute"):
        again.ext.declare("agents", 1)


# --------------------------------------------------------------------------- subclass helpers

class Gate(SyncObject):
    kind = "gate"

    def __init__(self, name):
        super().__init__(name)
        self.open = False

    def pass_through(self, agent):
        if not self.open:
            raise self.wait_for(agent, f"gate {self.name} to open")

    def set_open(self, agent=None):
        self.open = True
        self.emit_event("open", agent)
        self.wake_waiters()


def test_sync_subclass_helpers_park_and_wake():
    machine = toy()
    gate = machine.add_sync(Gate("g"))
    core = machine.agent("core0")
    with pytest.raises(Exception) as info:
        gate.pass_through(core)
    signal = info.value
    assert type(signal).__name__ == "WaitFor" and signal.obj is gate and "gate g to open" in signal.reason
    core.park(gate, signal.reason)
    assert gate.waiters == [core] and core.status == "waiting"
    gate.set_open()
    assert gate.waiters == [] and core.status == "runnable"
    assert Gate._wait is SyncObject.wait_for and Gate._changed is SyncObject.wake_waiters


def test_assembler_subclass_chooses_rows_and_reuses_builtins():
    class Picky(Assembler):
        def assembles(self, encoding):
            return encoding.mnemonic != "halt"

        def directive(self, name, args_text, ctx):
            if name == ".long":
                return self.builtin_directive(".word", ctx)
            return False

    program = Picky(TOY).assemble(".long 7\n")
    assert program.segments == ((0, (7).to_bytes(4, "little")),)
    with pytest.raises(Exception, match="unknown mnemonic 'halt'"):
        Picky(TOY).assemble("halt r0\n")
    assert Assembler(TOY).assemble("halt r0\n").segments
