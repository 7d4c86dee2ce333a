"""Injecting one fault into a run: arming it, firing it, and the record it leaves.

:func:`inject` arms a fault on a machine that has not reached its trigger; the
machine is then run as usual (``machine.run()``, ``tessera run``), and the fault
fires on its own:

* a *counted* trigger (``retired``, ``step``, ``cycle``) arms a pause
  (``Machine.pause_at``): the run is cut there as a step budget would cut it, exactly
  and on every engine, the fault is applied, and the same run goes on.  Until then
  nothing is called per instruction and the fast engine runs its blocks untouched;
* a ``pc`` or ``class`` trigger, a skipped or corrupted instruction and a stuck-at
  window instrument just the instructions concerned (``tessera_execute_instrument``:
  the plugin's hook asks :func:`instrument`), which the engine then runs one at a time.

Every fault keeps a record in ``machine.ext["faults"]`` (plain data, so snapshots
carry it): its status (``armed``, ``pending``, ``stuck``, ``injected``, ``not reached``,
``no destination``), where it fired (step, agent, PC), the entry, the bits, the old and
new values, and its counters.  A machine restored from a snapshot and armed with the
same fault again (``tessera resume --fault ...``) goes on from the record: a fault
injected before the snapshot is not injected twice, a count is not restarted.
"""

from __future__ import annotations

import random
import weakref
from collections.abc import Callable
from typing import Any

from tessera.errors import ConfigError
from tessera.logs import get_logger
from tessera_faults.corrupt import run_word
from tessera_faults.models import STUCK_MODELS, VALUE_MODELS, apply, choose_bits, mask_of
from tessera_faults.spec import Fault, as_fault
from tessera_faults.targets import Entry, Target, resolve, targets_of
from tessera_faults.triggers import check_class, max_step_cycles, resolve_pc, retired, row_classes

log = get_logger("tessera_faults")

#: the name of the records in ``machine.ext``
EXT = "faults"
#: statuses after which a fault does nothing more
DONE = ("injected", "not reached", "no destination")
#: register fields an instruction writes, when comparing registers found no change
DEST_FIELDS = ("rd", "vd", "fd", "dst", "dest", "d")

#: machine -> its injectors (which hold nothing of the machine: see Injector)
INJECTORS: weakref.WeakKeyDictionary[Any, list[Injector]] = weakref.WeakKeyDictionary()


def inject(machine: Any, fault: Fault | str) -> dict[str, Any]:
    """Arm ``fault`` (a :class:`Fault` or its text) on ``machine``; returns its live record.

    Checks everything it can now — the target, the trigger's agent, PC symbol and
    class, the bits — and raises :class:`ConfigError` for what cannot work.  Faults
    that instrument instructions need this plugin on the machine's host (it is, when
    installed: ``tessera_faults.plugin``).
    """
    injector = Injector(as_fault(fault))
    armed = INJECTORS.setdefault(machine, [])
    if any(i.key == injector.key for i in armed):
        raise ConfigError(f"fault {injector.key} is armed on this machine already")
    injector.arm(machine)
    armed.append(injector)
    return injector.record(machine)


def records(machine: Any) -> list[dict[str, Any]]:
    """Every fault's record on ``machine``, in the order they were armed."""
    store = machine.ext.get(EXT)
    return list(store.values()) if store else []


def instrument(machine: Any, arch: Any, ins: Any) -> tuple[Any, Any] | None:
    """The callbacks the machine's faults want around ``ins`` (``tessera_execute_instrument``)."""
    injectors = INJECTORS.get(machine)
    if not injectors:
        return None
    pairs = [p for p in (i.instrument(machine, ins) for i in injectors) if p is not None]
    if not pairs:
        return None
    if len(pairs) == 1:
        return pairs[0]
    befores = [b for b, _ in pairs if b is not None]
    afters = [a for _, a in pairs if a is not None]

    def before(agent: Any, ins: Any) -> int | None:
        for b in befores:
            redirect = b(agent, ins)
            if redirect is not None:
                return int(redirect)
        return None

    def after(agent: Any, ins: Any) -> None:
        for a in afters:
            a(agent, ins)

    return (before if befores else None), (after if afters else None)


def run_finished(machine: Any, result: Any) -> None:
    """A halted machine never reaches a trigger still armed: say so (``tessera_run_finished``)."""
    if result.reason != "halted":
        return
    for injector in INJECTORS.get(machine, ()):
        if not isinstance(injector, Injector):
            continue  # a campaign's class counter shares the registry
        rec = injector.record(machine)
        if rec["status"] in ("armed", "pending"):
            rec["status"] = "not reached"
            log.warning("fault not injected: the run ended before its trigger", fault=injector.key,
                        steps=machine.total_steps)


def plugin_hooked(machine: Any) -> bool:
    """Does the machine's host call this plugin's ``tessera_execute_instrument``?"""
    from tessera_faults import plugin

    return any(getattr(call, "function", None) is plugin.tessera_execute_instrument
               for call in machine.hook_calls("tessera_execute_instrument"))


class Injector:
    """One armed fault.  Keeps nothing of its machine (the registry holds machines weakly):
    its state is the record in ``machine.ext``, the machine comes with every call."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        self.trigger = fault.trigger
        self.key = str(fault)
        self.rng = random.Random(fault.seed)
        self.pc: int | None = None
        self._classes: dict[Any, bool] = {}
        self._stuck: weakref.ref[Target] | None = None

    # ------------------------------------------------------------------ arming

    def record(self, machine: Any) -> dict[str, Any]:
        return machine.ext[EXT][self.key]

    def arm(self, machine: Any) -> None:
        store = machine.ext.get(EXT)
        if store is None:
            store = machine.ext.declare(EXT, {})
        self.check(machine)
        rec = store.get(self.key)
        if rec is None:
            rec = store[self.key] = {"fault": self.key, "status": "armed"}
        status = rec["status"]
        if status in DONE:
            return  # injected before a snapshot this machine was restored from
        if self.needs_hook(rec) and not plugin_hooked(machine):
            raise ConfigError(f"fault {self.key}: instruments instructions, so the faults plugin must be "
                              "registered on the machine's host (tessera_faults.plugin)")
        if status == "armed" and self.trigger.counted:
            self.arm_counted(machine, rec)
        else:
            machine.flush_caches()  # entries filled before this fault: ask the hook again

    def needs_hook(self, rec: dict[str, Any]) -> bool:
        return (not self.trigger.counted or self.fault.model == "skip" or self.fault.model in STUCK_MODELS
                or self.decode_fault or rec["status"] in ("pending", "stuck"))

    @property
    def decode_fault(self) -> bool:
        """Corrupts the instruction word (a decode target) rather than stored state."""
        return self.fault.target is not None and self.fault.target.split("[")[0].split(".")[-1] == "insn"

    def check(self, machine: Any) -> None:
        """Everything that can be checked before the run (a ConfigError naming the problem)."""
        trig, fault = self.trigger, self.fault
        if trig.agent is not None:
            agent = machine.agent(trig.agent)
            if trig.kind == "retired" and agent not in machine.cpus:
                raise ConfigError(f"at={trig}: {trig.agent} is not a processor: it retires no instructions")
        if trig.kind == "pc":
            self.pc = resolve_pc(machine, trig)
        if trig.kind == "class":
            archs = {cpu.arch.name: cpu.arch for cpu in machine.cpus}
            errors = []
            for arch in archs.values():
                try:
                    check_class(arch, trig.name)
                    break
                except ConfigError as exc:
                    errors.append(exc)
            else:
                raise errors[0] if errors else ConfigError(f"at={trig}: the machine has no processor")
        if fault.target is not None:
            entry = resolve(machine, fault.target, trig.agent)
            self.check_entry(entry)

    def check_entry(self, entry: Entry) -> None:
        target, fault = entry.target, self.fault
        if target.kind == "decode":
            if fault.model not in VALUE_MODELS and fault.model != "skip":
                raise ConfigError(f"fault {self.key}: the instruction word takes flip, random, zero or skip, "
                                  f"not {fault.model}")
        elif fault.model == "skip":
            raise ConfigError(f"fault {self.key}: skip skips the instruction at the trigger; give no target "
                              "(or insn)")
        if entry.index is not None and entry.index in target.exclude:
            raise ConfigError(f"fault {self.key}: {entry.label()} holds no state (hard-wired)")
        if fault.model != "skip" and fault.model != "random" and fault.model != "zero":
            choose_bits(target.bits, k=fault.k, bit=fault.bit, spread=fault.spread, rng=random.Random(0),
                        what=target.name)

    def arm_counted(self, machine: Any, rec: dict[str, Any]) -> None:
        """A pause at the trigger; pauses again until the count is reached exactly."""
        trig = self.trigger
        if trig.kind == "step":
            if machine.total_steps > trig.value:
                raise ConfigError(f"at={trig}: the machine is past it ({machine.total_steps} steps)")
            machine.pause_at(trig.value, self.reached, plugin=EXT)
            return
        if trig.kind == "retired":
            now = retired(machine, trig.agent)
            if now > trig.value:
                raise ConfigError(f"at={trig}: the machine is past it ({now} instructions retired)")

            def count(m: Any) -> None:
                done = retired(m, trig.agent)
                if done >= trig.value:
                    self.reached(m)
                else:
                    m.pause_at(m.total_steps + trig.value - done, count, plugin=EXT)

            machine.pause_at(machine.total_steps + trig.value - now, count, plugin=EXT)
            return
        cost = max_step_cycles(machine)

        def clock(m: Any) -> None:
            now = m.clock
            if now >= trig.value:
                self.reached(m)
            else:
                m.pause_at(m.total_steps + max(1, (trig.value - now) // cost), clock, plugin=EXT)

        if machine.total_steps and machine.clock > trig.value:
            raise ConfigError(f"at={trig}: the machine is past it (clock {machine.clock})")
        machine.pause_at(machine.total_steps, clock, plugin=EXT)

    # ------------------------------------------------------------------ firing

    def reached(self, machine: Any) -> None:
        """A counted trigger fired (between two steps)."""
        rec = self.record(machine)
        if rec["status"] != "armed":
            return
        rec["step"] = machine.total_steps  # exact: a pause is between two steps
        hint = self.trigger.agent
        if self.fault.model == "skip" or self.decode_fault:
            self.make_pending(machine, rec, hint)
            return
        entry = resolve(machine, self.fault.target or "", hint)
        self.hit(machine, rec, entry, None)

    def make_pending(self, machine: Any, rec: dict[str, Any], hint: str | None) -> None:
        """Skip or corrupt the next instruction of the agent (its own, when the target names one)."""
        name = hint
        if name is None and self.fault.target is not None:
            name = resolve(machine, self.fault.target, None).target.agent
        agent = machine.agent(name) if name is not None else (machine.cpus[0] if machine.cpus else None)
        if agent is None or agent not in machine.cpus or agent.status == "halted":
            rec["status"] = "not reached"
            return
        rec.update(status="pending", agent=agent.name, pc=int(agent.pc))
        machine.flush_caches()  # between slices: the next fill of that PC asks the hook

    def hit(self, machine: Any, rec: dict[str, Any], entry: Entry, agent: Any) -> None:
        """Apply a value or stuck-at model to ``entry`` (a random entry of it when it names none)."""
        target, fault = entry.target, self.fault
        index = entry.index if entry.index is not None else self.choose_index(target)
        bits = () if fault.model in ("random", "zero") else choose_bits(
            target.bits, k=fault.k, bit=fault.bit, spread=fault.spread, rng=self.rng, what=target.name)
        old = int(target.read(index))
        new = apply(fault.model, old, target.bits, bits, self.rng)
        machine.disturb()
        target.write(index, new)
        stuck = fault.model in STUCK_MODELS
        rec.update(status="stuck" if stuck else "injected", target=target.label(index), name=target.name,
                   index=index, bits=list(bits), old=old, new=new)
        if agent is not None:
            rec.update(agent=agent.name)
        log.info("fault injected", fault=self.key, target=rec["target"], old=hex(old), new=hex(new))
        if stuck:
            rec["left"] = fault.window
            self._stuck = weakref.ref(target)
            machine.flush_caches()  # every instruction of the window re-applies it

    def choose_index(self, target: Target) -> int:
        if len(target.exclude) >= target.entries:
            raise ConfigError(f"fault {self.key}: {target.name} has no entry a fault can change")
        while True:
            index = self.rng.randrange(target.entries)
            if index not in target.exclude:
                return index

    def fire_before(self, machine: Any, rec: dict[str, Any], agent: Any, ins: Any) -> int | None:
        """Fire inside an instruction's ``before``: skip it, run a corrupted word, or hit the target."""
        rec.update(agent=agent.name, pc=int(ins.address))
        if self.fault.model == "skip":
            rec.update(status="injected", target=f"{agent.name}.insn", old=int(ins.word))
            log.info("fault injected: instruction skipped", fault=self.key, pc=hex(ins.address))
            return int(ins.next)
        if self.decode_fault:
            return self.corrupt(rec, agent, ins)
        entry = resolve(machine, self.fault.target or "", agent.name)
        self.hit(machine, rec, entry, agent)
        return None

    def corrupt(self, rec: dict[str, Any], agent: Any, ins: Any) -> int:
        width = agent.arch.word_bits
        bits = rec.get("bits")
        if bits is None:
            bits = [] if self.fault.model != "flip" else list(choose_bits(
                width, k=self.fault.k, bit=self.fault.bit, spread=self.fault.spread, rng=self.rng,
                what="the instruction word"))
        old = int(ins.word)
        new = apply(self.fault.model, old, width, bits, self.rng)
        rec.update(status="injected", target=f"{agent.name}.insn", bits=list(bits), old=old, new=new)
        log.info("fault injected: instruction word corrupted", fault=self.key, pc=hex(ins.address),
                 old=hex(old), new=hex(new))
        return run_word(agent, int(ins.address), new)

    # ------------------------------------------------------------------ instrumentation

    def instrument(self, machine: Any, ins: Any) -> tuple[Any, Any] | None:
        rec = self.record(machine)
        status = rec["status"]
        if status == "armed":
            if self.trigger.kind == "pc" and ins.address == self.pc:
                return self.pc_callback(machine, rec), None
            if self.trigger.kind == "class" and self.of_class(ins.encoding):
                return self.class_callbacks(machine, rec)
        elif status == "pending" and ins.address == rec["pc"]:
            return self.pending_callback(machine, rec), None
        elif status == "stuck":
            return self.stuck_callbacks(machine, rec)
        return None

    def of_class(self, encoding: Any) -> bool:
        got = self._classes.get(encoding)
        if got is None:
            got = self._classes[encoding] = self.trigger.name in row_classes(encoding)
        return got

    def wanted(self, agent: Any) -> bool:
        return self.trigger.agent is None or agent.name == self.trigger.agent

    def pc_callback(self, machine: Any, rec: dict[str, Any]) -> Callable[[Any, Any], int | None]:
        def before(agent: Any, ins: Any) -> int | None:
            if rec["status"] != "armed" or not self.wanted(agent):
                return None
            rec["count"] = rec.get("count", 0) + 1
            if rec["count"] < self.trigger.count:
                return None
            return self.fire_before(machine, rec, agent, ins)

        return before

    def pending_callback(self, machine: Any, rec: dict[str, Any]) -> Callable[[Any, Any], int | None]:
        def before(agent: Any, ins: Any) -> int | None:
            if rec["status"] != "pending" or agent.name != rec["agent"]:
                return None
            return self.fire_before(machine, rec, agent, ins)

        return before

    def class_callbacks(self, machine: Any, rec: dict[str, Any]) -> tuple[Any, Any]:
        """Count completed instructions of the class; hit the N-th one's destination."""
        before_state: dict[str, Any] = {}

        def before(agent: Any, ins: Any) -> None:
            if rec["status"] == "armed" and self.wanted(agent) and rec.get("count", 0) == self.trigger.count - 1:
                before_state.clear()
                before_state.update(destination_candidates(machine, agent))
            return None

        def after(agent: Any, ins: Any) -> None:
            if rec["status"] != "armed" or not self.wanted(agent):
                return
            rec["count"] = rec.get("count", 0) + 1
            if rec["count"] == self.trigger.count:
                rec.update(pc=int(ins.address), mnemonic=ins.mnemonic)
                entry = self.destination(machine, agent, ins, before_state)
                if entry is None:
                    rec.update(status="no destination", agent=agent.name)
                    log.warning("fault not injected: the instruction changed no register", fault=self.key,
                                pc=hex(ins.address), mnemonic=ins.mnemonic)
                    return
                self.hit(machine, rec, entry, agent)

        return before, after

    def destination(self, machine: Any, agent: Any, ins: Any, before: dict[str, Any]) -> Entry | None:
        """What the instruction wrote: the entries that changed (one, chosen with the seed, of
        the first structure that changed), else the register its ``rd``-like field names."""
        after = destination_candidates(machine, agent)
        for name, (target, old) in before.items():
            new = after[name][1] if name in after else old
            changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b and i not in target.exclude]
            if changed:
                return Entry(target, self.rng.choice(changed))
        targets = {t.name: t for t, _ in after.values()}
        for field in DEST_FIELDS:
            reg = ins.operands.get(field) if hasattr(ins, "operands") else None
            form = agent.arch.field_map.get(field)
            if reg is None or form is None or form.kind != "reg":
                continue
            target = targets.get(f"{agent.name}.{form.regfile}")
            if target is not None and 0 <= reg < target.entries and reg not in target.exclude:
                return Entry(target, reg)
        return None

    def stuck_target(self, machine: Any, rec: dict[str, Any]) -> Target:
        """The stuck-at's structure (looked up again after a snapshot or a cache flush)."""
        target = self._stuck() if self._stuck is not None else None
        if target is None:
            target = targets_of(machine)[rec["name"]]
            self._stuck = weakref.ref(target)
        return target

    def stuck_callbacks(self, machine: Any, rec: dict[str, Any]) -> tuple[Any, Any]:
        """Re-apply the stuck bits before and after every instruction of the window."""
        target, index = self.stuck_target(machine, rec), int(rec["index"])
        mask = mask_of(rec["bits"])
        one = self.fault.model == "stuck1"

        def hold() -> None:
            value = target.read(index)
            held = value | mask if one else value & ~mask
            if held != value:
                machine.disturb()
                target.write(index, held)

        def before(agent: Any, ins: Any) -> None:
            if rec["status"] != "stuck":
                return None
            left = rec.get("left")
            if left is not None:
                if left <= 0:
                    rec["status"] = "injected"
                    machine.flush_caches()  # the window is over: every instruction at full speed again
                    return None
                rec["left"] = left - 1
            hold()
            return None

        def after(agent: Any, ins: Any) -> None:
            if rec["status"] == "stuck":
                hold()

        return before, after


def destination_candidates(machine: Any, agent: Any) -> dict[str, tuple[Target, list[int]]]:
    """The structures an instruction of ``agent`` may write, with their values now: the agent's
    own (registers, lanes, CSRs) and the machine's (an accelerator's register files)."""
    out = {}
    for target in targets_of(machine).values():
        if target.kind in ("memory", "decode") or target.agent not in (None, agent.name):
            continue
        out[target.name] = (target, target.snapshot())
    return out
