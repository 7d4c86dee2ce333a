"""Checks that run programs: examples, cases, determinism, snapshots, budgets, faults, hooks, timing."""

from __future__ import annotations

import os
import time
from collections import Counter as Tally
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tessera.control import WaitFor
from tessera.engine import RUNNABLE, WAITING, CpuAgent
from tessera.errors import (
    BudgetExceeded,
    Deadlock,
    MemoryFault,
    PluginError,
    TesseraError,
)
from tessera.machine import Machine, NominalTiming
from tessera.sync import Semaphore
from tessera_conformance.probes import (
    Observer,
    Recorder,
    RegisterBounds,
    Watcher,
    chunk_digests,
    unwatched_changes,
)
from tessera_conformance.programs import check_expectations, run
from tessera_conformance.runs import (
    RECORDER,
    ProgramBroken,
    build,
    configure,
    first_difference,
    host_for,
    reference,
    state_difference,
    state_of,
)
from tessera_conformance.strategies import fixed, random_words

#: ``TESSERA_BLOCK_HOT`` while engine-equivalence runs: the fast engine translates a block at
#: the second visit of its start (the default waits for 16), so loops of a few iterations
#: already run as blocks.  Code that runs only once is stepped on both engines, blocks or
#: not: docs/conformance.md says how to write a case whose code becomes hot.
EQUIVALENCE_HOT = 2


def _fail(message: str) -> None:
    pytest.fail(message, pytrace=False)


def _reference(suite, program):
    try:
        return reference(suite, program)
    except ProgramBroken as exc:
        _fail(str(exc))


# --------------------------------------------------------------------------- programs


def test_examples(example_target, conformance_suite):
    """The bundled example runs and its check passes (what `tessera demo` does)."""
    program = example_target.payload
    ref = _reference(conformance_suite, program)
    wrong = check_expectations(program, ref.machine, ref.outcome)
    if wrong:
        _fail(f"{program.label()}: " + "; ".join(wrong))


def test_cases(case_target, conformance_suite):
    """The conformance case ends as its `expect` (and `stdout`, `check`) says."""
    program = case_target.payload
    if program.problem is not None:
        _fail(program.problem)
    ref = _reference(conformance_suite, program)
    wrong = check_expectations(program, ref.machine, ref.outcome)
    if wrong:
        _fail(f"{program.label()} (from plugin {program.provider}): " + "; ".join(wrong))


def test_determinism(program_target, conformance_suite):
    """Two runs of one program give the same outcome, state hash and instruction trace."""
    suite, program = conformance_suite, program_target.payload
    ref = _reference(suite, program)
    log: list[tuple[Any, ...]] = []
    machine = build(suite, program, (RECORDER, Recorder(log)))
    outcome = run(machine, program.max_steps)
    trace = [(e[1], e[2], e[3]) for e in log if e[0] == "B"]
    if outcome.signature() != ref.outcome.signature():
        _fail(f"{program.label()}: the first run ended with {ref.outcome.detail!r}, the second with "
              f"{outcome.detail!r}")
    if trace != ref.trace():
        _fail(f"{program.label()}: the instruction traces differ ({first_difference(ref.trace(), trace)})")
    if machine.state_hash() != ref.hash:
        a = state_of(machine)
        _fail(f"{program.label()}: the final state hashes differ "
              f"({state_difference(ref.state, a) if a != ref.state else 'memory differs'})")


def test_snapshot(program_target, conformance_suite):
    """Snapshot half-way, restore, continue: the same state hash and trace as one uninterrupted run."""
    suite, program = conformance_suite, program_target.payload
    ref = _reference(suite, program)
    total = ref.steps
    if total < 2:
        pytest.skip(f"{program.label()} ends after {total} step(s): nothing to cut in half")
    half = total // 2
    first_log: list[tuple[Any, ...]] = []
    machine = build(suite, program, (RECORDER, Recorder(first_log)))
    first = run(machine, half)
    if first.reason != "budget" or machine.total_steps != half:
        _fail(f"{program.label()}: a run with max_steps={half} ended with {first.detail!r} after "
              f"{machine.total_steps} steps; the uninterrupted run took {total}")
    try:
        data = machine.snapshot()
        second_log: list[tuple[Any, ...]] = []
        restored = Machine.restore(data, host=host_for(suite, program, (RECORDER, Recorder(second_log))))
    except TesseraError as exc:
        _fail(f"{program.label()}: snapshot/restore after {half} steps failed: {exc}")
    try:
        configure(suite, program, restored)  # the tool options again, as `tessera resume` gives them
    except ProgramBroken as exc:
        _fail(f"after the restore: {exc}")
    rest = run(restored, program.max_steps - half)
    if rest.signature() != ref.outcome.signature():
        _fail(f"{program.label()}: restored at step {half}, the run ended with {rest.detail!r}; "
              f"uninterrupted: {ref.outcome.detail!r}")
    trace = [(e[1], e[2], e[3]) for e in first_log + second_log if e[0] == "B"]
    if trace != ref.trace():
        _fail(f"{program.label()}: trace before the snapshot + after the restore differs from the "
              f"uninterrupted trace ({first_difference(ref.trace(), trace)})")
    if restored.state_hash() != ref.hash:
        a = state_of(restored)
        _fail(f"{program.label()}: restored at step {half}, the final state differs "
              f"({state_difference(ref.state, a) if a != ref.state else 'memory differs'})")


def test_engine_equivalence(program_target, conformance_suite):
    """The fast engine (translated blocks) and the step engine give identical runs.

    Each engine runs the program twice over — once straight through, once cut by a
    step budget at a third and two thirds — with an observer probe (which keeps
    blocks), and the outcomes, retirement sequences (traps and waits included) and
    final state hashes must be equal.  The observer also checks register widths;
    ``register-width`` reports what it found.
    """
    suite, program = conformance_suite, program_target.payload
    ref = _reference(suite, program)
    cuts = sorted({c for c in (ref.steps // 3, 2 * ref.steps // 3) if c > 0})
    seen: dict[str, Any] = {}
    bounds = RegisterBounds()
    hot = os.environ.get("TESSERA_BLOCK_HOT")
    os.environ["TESSERA_BLOCK_HOT"] = str(EQUIVALENCE_HOT)  # translate short loops too: compare blocks
    try:
        _run_both_engines(suite, program, cuts, seen, bounds)
    finally:
        if hot is None:
            os.environ.pop("TESSERA_BLOCK_HOT", None)
        else:
            os.environ["TESSERA_BLOCK_HOT"] = hot
    suite.cache[_bounds_key(program)] = list(bounds.found)
    for (step, fast), how in zip(zip(seen["step"], seen["fast"], strict=True),
                                 ("straight through", f"cut at steps {cuts}"), strict=True):
        if step[0] != fast[0]:
            _fail(f"{program.label()} ({how}): the step engine ended with {step[0]}, the fast engine "
                  f"with {fast[0]}")
        if step[1] != fast[1]:
            _fail(f"{program.label()} ({how}): retirements differ ({first_difference(step[1], fast[1])})")
        if step[2] != fast[2]:
            _fail(f"{program.label()} ({how}): the final states differ "
                  f"({state_difference(step[3], fast[3]) if step[3] != fast[3] else 'memory differs'})")


def _run_both_engines(suite: Any, program: Any, cuts: list[int], seen: dict[str, Any],
                      bounds: RegisterBounds) -> None:
    for engine in ("step", "fast"):
        runs = []
        for plan in ((), tuple(cuts)):
            log: list[tuple[Any, ...]] = []
            machine = build(suite, program, ("conformance-observer", Observer(log, bounds=bounds)))
            machine.set_engine(engine)
            done, outcomes = 0, []
            for cut in plan:
                outcomes.append(run(machine, cut - done).signature())
                done = cut
            total = None if program.max_steps is None else program.max_steps - done
            outcomes.append(run(machine, total).signature())
            _check_final(machine, bounds)
            runs.append((outcomes, log, machine.state_hash(), state_of(machine)))
        seen[engine] = runs


def _bounds_key(program: Any) -> tuple[str, str, str]:
    return ("register-width", program.arch.name, program.name)


def _check_final(machine: Machine, bounds: RegisterBounds) -> None:
    for agent in machine.agents:
        if isinstance(agent, CpuAgent):
            bounds.check_all(agent, "when the run ended")


def test_register_width(program_target, conformance_suite):
    """After every instruction, every register holds an int within its file's declared width.

    The check rides on ``engine-equivalence``'s runs (both engines, each retirement
    observed; see :class:`~tessera_conformance.probes.Observer`) when they ran in this
    session, and otherwise runs the program once on the step engine with the same
    observer.
    """
    suite, program = conformance_suite, program_target.payload
    arch = program.arch
    if not any(rf.storage for rf in arch.register_files):
        pytest.skip(f"{arch.name} declares no register file with storage: no register to check")
    _reference(suite, program)  # a broken program fails here, as in every other check
    found = suite.cache.get(_bounds_key(program))
    if found is None:
        bounds = RegisterBounds()
        machine = build(suite, program, ("conformance-observer", Observer([], bounds=bounds)))
        machine.set_engine("step")
        run(machine, program.max_steps)
        _check_final(machine, bounds)
        found = suite.cache[_bounds_key(program)] = list(bounds.found)
    if found:
        _fail(f"{program.label()}: a register holds a value its declared width cannot: " + "; ".join(found))


# --------------------------------------------------------------------------- hooks


def _agent_events(log: list[tuple[Any, ...]], cpu_names: set[str]) -> dict[str, list[tuple[Any, ...]]]:
    per: dict[str, list[tuple[Any, ...]]] = {name: [] for name in cpu_names}
    for e in log:
        if e[0] in ("B", "A", "T", "W") and e[1] in per:
            per[e[1]].append(e)
    return per


def execute_problems(machine: Machine, outcome: Any, log: list[tuple[Any, ...]]) -> list[str]:
    """Compare the execute/trap/wait events of a run with the agents' counters."""
    problems: list[str] = []
    cpus = {a.name: a for a in machine.agents if isinstance(a, CpuAgent)}
    err = outcome.error
    for name, events in _agent_events(log, set(cpus)).items():
        agent = cpus[name]
        pending = None
        expect_pc = None
        completed = unfinished = traps = waits = 0
        for e in events:
            kind = e[0]
            if kind == "B":
                if pending is not None:
                    unfinished += 1  # halted or yielded: retired without an after callback
                elif expect_pc is not None and e[2] != expect_pc and agent.fetches:
                    problems.append(f"{name}: the instruction after the one that went to {expect_pc:#x} "
                                    f"started at {e[2]:#x}")
                pending, expect_pc = e, None
            elif kind == "A":
                if pending is None or pending[2] != e[2]:
                    problems.append(f"{name}: an after callback at {e[2]:#x} without a before callback")
                else:
                    completed += 1
                pending, expect_pc = None, e[3]
            elif kind == "T":
                traps += 1
                if pending is not None and pending[2] != e[2]:
                    unfinished += 1
                pending, expect_pc = None, None
            elif kind == "W":
                if pending is not None and e[3] == pending[2]:  # the instruction waits; woken, the
                    waits += 1                                   # agent retries it
                    expect_pc = pending[2]
                else:  # parked by the agent itself (e.g. a disabled hardware thread), no instruction
                    if pending is not None:
                        unfinished += 1
                    expect_pc = None
                pending = None
        if pending is not None:
            stopped_here = err is not None and err.agent == name and err.pc == pending[2]
            if not stopped_here:
                unfinished += 1
        if agent.instret != completed + unfinished:
            problems.append(f"{name}: retired {agent.instret} instructions, but the execute callbacks "
                            f"saw {completed} complete and {unfinished} retire without an after callback "
                            "(a callback fired twice or not at all)")
        # a trap reported last, then the run stopped (declined: UnhandledTrap, or re-raised as the
        # original fault) was not taken, so the agent does not count it
        unhandled = 1 if err is not None and err.agent == name and events and events[-1][0] == "T" else 0
        if agent.traps + unhandled != traps:
            problems.append(f"{name}: took {agent.traps} traps, tessera_trap saw {traps}")
        if len(problems) > 8:
            break
    return problems


def test_execute_hooks(program_target, conformance_suite):
    """Execute callbacks fire once per instruction; an address nobody subscribed to never calls back."""
    suite, program = conformance_suite, program_target.payload
    ref = _reference(suite, program)
    problems = execute_problems(ref.machine, ref.outcome, ref.log)
    entry = ref.entry
    at_entry = sum(1 for e in ref.log if e[0] == "B" and e[2] == entry)
    seen = ref.selective.seen
    stray = sorted({pc for _, pc in seen if pc != entry})
    if stray:
        problems.append(f"a plugin subscribed to {entry:#x} only was called at {', '.join(map(hex, stray))}")
    if len(seen) != at_entry:
        problems.append(f"a plugin subscribed to {entry:#x} was called {len(seen)} times; the instruction "
                        f"there started {at_entry} times")
    bare = build(suite, program)
    outcome = run(bare, program.max_steps)
    if outcome.signature() != ref.outcome.signature():
        problems.append(f"without probes the run ends with {outcome.detail!r}, with them "
                        f"{ref.outcome.detail!r}")
    elif state_of(bare) != ref.state:
        problems.append(f"probes change the final state: {state_difference(state_of(bare), ref.state)}")
    if problems:
        _fail(f"{program.label()}: " + "; ".join(problems))


def test_memory_hooks(program_target, conformance_suite):
    """Watches see every data access once, with its agent, inside an instruction; unwatched never."""
    suite, program = conformance_suite, program_target.payload
    ref = _reference(suite, program)
    log: list[tuple[Any, ...]] = []
    watcher = Watcher(log, keep_originals=True)
    machine = build(suite, program, (RECORDER, Recorder(log)), ("conformance-watch", watcher))
    before = chunk_digests(machine)
    outcome = run(machine, program.max_steps)
    problems = []
    if outcome.signature() != ref.outcome.signature() or state_of(machine) != ref.state:
        problems.append(f"watching memory changes the run (ended with {outcome.detail!r}, reference "
                        f"{ref.outcome.detail!r})")
    cpus = {a.name for a in machine.agents if isinstance(a, CpuAgent)}
    pending: dict[str, Any] = {}
    accesses = 0
    no_agent = outside = 0
    example_no_agent = example_outside = None
    for e in log:
        kind = e[0]
        if kind == "B":
            pending[e[1]] = e
        elif kind in ("A", "T", "W"):
            pending.pop(e[1], None)
        elif kind in ("R", "S"):
            accesses += 1
            agent = e[1]
            if agent is None:
                no_agent += 1
                example_no_agent = example_no_agent or e
            elif agent in cpus and agent not in pending:
                outside += 1
                example_outside = example_outside or e
    what = {"R": "read", "S": "store"}
    if no_agent:
        e = example_no_agent
        problems.append(f"{no_agent} of {accesses} watched accesses came without the agent making them "
                        f"(first: {what[e[0]]} of {e[3]} bytes at {e[2]:#x} in space {e[5]}, agent None)")
    if outside:
        e = example_outside
        problems.append(f"{outside} watched accesses happened outside any instruction of their agent "
                        f"(first: {what[e[0]]} at {e[2]:#x} by {e[1]})")
    engines = [a.name for a in machine.agents if not isinstance(a, CpuAgent) and a.instret]
    # engines, and the units of an architecture declaring 'bulk-data' (Tensix's unpackers,
    # packers and mover), move data in bulk, which is not a data access (documented)
    if not engines and "bulk-data" not in program.arch.capabilities:
        problems.extend(unwatched_changes(machine, before, watcher))
    tally = Tally((e[2], e[5]) for e in log if e[0] in ("R", "S"))
    if tally:  # a second run watching one byte of the busiest address: it sees just those accesses
        (address, space_name), _ = tally.most_common(1)[0]
        full: list[tuple[Any, ...]] = []
        narrow: list[tuple[Any, ...]] = []
        again = build(suite, program, ("conformance-watch", Watcher(full)),
                      ("conformance-watch-one", Watcher(narrow, window=(address, address + 1))))
        run(again, program.max_steps)
        want = [e for e in full if e[2] <= address < e[2] + e[3]]
        stray = [e for e in narrow if not e[2] <= address < e[2] + e[3]]
        if stray:
            problems.append(f"a watch of byte {address:#x} was called for {stray[0][2]:#x}")
        elif narrow != want:
            problems.append(f"a watch of byte {address:#x} saw {len(narrow)} accesses; {len(want)} "
                            "accesses touched it")
    if problems:
        _fail(f"{program.label()}: " + "; ".join(problems))


# --------------------------------------------------------------------------- architecture-wide


def _longest(suite, arch):
    best = None
    for program in suite.runnable_programs(arch):
        try:
            ref = reference(suite, program)
        except ProgramBroken:
            continue
        if best is None or ref.steps > best[1].steps:
            best = (program, ref)
    return best


def test_timing(arch_target, conformance_suite):
    """Every timing class and every row costs a positive number of cycles; runs advance the clock."""
    suite, arch = conformance_suite, arch_target.arch
    problems = []
    for klass, cycles in arch.timing.items():
        if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles <= 0:
            problems.append(f"timing class {klass!r} costs {cycles!r}")
    from tessera.isa import Decoder

    nominal = NominalTiming(arch)
    decoder = Decoder(arch)
    for enc in arch.encodings:
        ins = decoder.decode(enc.match, arch.reset_pc)
        price = nominal.cycles(ins)
        if not isinstance(price, int) or price <= 0:
            problems.append(f"{enc.mnemonic} is priced {price!r} cycles")
    runs = 0
    for program in suite.runnable_programs(arch):
        try:
            ref = reference(suite, program)
        except ProgramBroken:
            continue
        runs += 1
        free = sorted({hex(e[2]) for e in ref.log if e[0] == "B" and not (isinstance(e[4], int) and e[4] > 0)})
        if free:
            problems.append(f"{program.label()}: instructions at {', '.join(free[:5])} cost no cycles")
        for agent in ref.machine.agents:
            if isinstance(agent, CpuAgent) and agent.instret and agent.cycles <= 0:
                problems.append(f"{program.label()}: {agent.name} retired {agent.instret} instructions "
                                f"in {agent.cycles} cycles")
        if ref.steps and ref.machine.clock <= 0:
            problems.append(f"{program.label()}: the clock reads {ref.machine.clock} after {ref.steps} steps")
        result = ref.outcome.result
        if result is not None and result.cycles != ref.machine.clock:
            problems.append(f"{program.label()}: RunResult.cycles is {result.cycles}, the clock "
                            f"{ref.machine.clock}")
    if problems:
        _fail(f"{arch.name}: " + "; ".join(problems))
    if not runs:
        pytest.skip(f"{arch.name}: timing classes and rows are fine; no program to run "
                    "(add an example or a conformance case)")


def test_budget(arch_target, conformance_suite):
    """Step, cycle and wall-time budgets stop a run exactly where they say; it can continue."""
    suite, arch = conformance_suite, arch_target.arch
    endless = [p for p in suite.runnable_programs(arch) if p.endless]
    problems = []
    if endless:
        program = endless[0]
        steps = min(1000, program.max_steps)
        machine = build(suite, program)
        try:
            machine.run(max_steps=steps)
            problems.append(f"{program.label()} finished within {steps} steps; it should run forever")
        except BudgetExceeded as exc:
            res = exc.result
            if res is None or res.steps != steps or res.reason != "budget" or res.agent is None:
                problems.append(f"max_steps={steps}: BudgetExceeded carries {res!r}")
        except TesseraError as exc:
            problems.append(f"{program.label()} with max_steps={steps}: {exc}")
        again = run(machine, steps)
        if again.reason != "budget" or machine.total_steps != 2 * steps:
            problems.append(f"continuing for {steps} more steps: {again.detail!r}, total "
                            f"{machine.total_steps} steps")
        cyc = build(suite, program)
        got = run(cyc, None, max_cycles=steps)
        if got.reason != "budget" or cyc.clock < steps:
            problems.append(f"max_cycles={steps}: {got.detail!r} at clock {cyc.clock}")
        timed = build(suite, program)
        t0 = time.perf_counter()
        got = run(timed, None, max_seconds=0.05)
        took = time.perf_counter() - t0
        if got.reason != "budget" or took > 10:
            problems.append(f"max_seconds=0.05: {got.detail!r} after {took:.1f}s")
        label = program.label()
    else:
        best = _longest(suite, arch)
        if best is None or best[1].steps < 2:
            pytest.skip(f"{arch.name}: no program of two steps or more to cut short (add an endless-loop "
                        "case: expect {'reason': 'budget'})")
        program, ref = best
        label = program.label()
        half = ref.steps // 2
        machine = build(suite, program)
        try:
            machine.run(max_steps=half)
            problems.append(f"max_steps={half}: the run finished; the uninterrupted run takes {ref.steps}")
        except BudgetExceeded as exc:
            res = exc.result
            if res is None or res.steps != half or res.agent is None:
                problems.append(f"max_steps={half}: BudgetExceeded carries {res!r}")
        except TesseraError as exc:
            problems.append(f"max_steps={half}: {exc}")
        rest = run(machine, program.max_steps - half)
        if rest.signature() != ref.outcome.signature() or machine.total_steps != ref.steps:
            problems.append(f"continued after the budget, the run ended with {rest.detail!r} after "
                            f"{machine.total_steps} steps; uninterrupted: {ref.outcome.detail!r} after "
                            f"{ref.steps}")
        clock = ref.machine.clock
        if clock >= 2:
            cyc = build(suite, program)
            got = run(cyc, program.max_steps, max_cycles=clock // 2)
            if got.reason != "budget":
                problems.append(f"max_cycles={clock // 2}: the run ended with {got.detail!r}; "
                                f"uninterrupted it needs {clock} cycles")
    if problems:
        _fail(f"{label}: " + "; ".join(problems))


def _unmapped(space: Any) -> int | None:
    """An address of ``space`` that no region covers (page aligned where a gap allows)."""
    spans = sorted((d["start"], d["start"] + d["size"]) for d in space.describe())
    gaps, cursor = [], 0
    for start, end in spans:
        if start > cursor:
            gaps.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < space.limit:
        gaps.append((cursor, space.limit))
    for lo, hi in gaps:
        aligned = (lo + 0xFFF) & ~0xFFF
        if aligned + 16 <= hi:
            return aligned
    return gaps[0][0] if gaps else None


def test_memory_fault(arch_target, conformance_suite):
    """Accesses to unmapped memory fault with the address; a program's fault names its agent."""
    suite, arch = conformance_suite, arch_target.arch
    problems = []
    machine = Machine(arch, host=suite.host_for(arch_target.subject.name))
    target = None
    for space in machine.spaces.values():
        address = _unmapped(space)
        if address is None:
            continue
        target = target if target is not None else (space, address)
        for access in ("read", "write", "fetch"):
            try:
                if access == "read":
                    space.read(address, 1)
                elif access == "write":
                    space.write(address, 1, 0)
                else:
                    space.fetch(address, arch.word_bytes)
                problems.append(f"{access} of unmapped {space.name} address {address:#x} did not fault")
            except MemoryFault as exc:
                if exc.address != address or exc.access != access:
                    problems.append(f"{access} of {address:#x}: the fault says address={exc.address!r}, "
                                    f"access={exc.access!r}")
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{access} of unmapped {address:#x} raised {type(exc).__name__}: {exc}")
    if target is None:
        pytest.skip(f"{arch.name}: every address of every space is mapped")
    space, address = target
    log: list[tuple[Any, ...]] = []
    host = suite.host_for(arch_target.subject.name, extra=[(RECORDER, Recorder(log))])
    machine = Machine(arch, host=host)
    cpus = machine.cpus
    if space.name == "main" and cpus:
        machine.set_entry(address)
        outcome = run(machine, 100)
        err = outcome.error
        traps = [e for e in log if e[0] == "T"]
        if err is not None:
            if isinstance(err, PluginError):
                problems.append(f"running from unmapped {address:#x} crashed a plugin: {err}")
            elif err.agent is None:
                problems.append(f"running from unmapped {address:#x}: {err.kind} without an agent ({err})")
            elif isinstance(err, MemoryFault) and err.address is None:
                problems.append(f"running from unmapped {address:#x}: a memory fault without an address")
        elif not traps:
            problems.append(f"running from unmapped {address:#x} ended with {outcome.detail!r} and no trap "
                            "was reported")
        elif traps[0][1] not in {c.name for c in cpus}:
            problems.append(f"the fetch fault at {address:#x} was reported for {traps[0][1]!r}")
    if problems:
        _fail(f"{arch.name}: " + "; ".join(problems))


def test_deadlock(arch_target, conformance_suite):
    """With every agent waiting, a run stops with Deadlock naming each waiting agent and why."""
    suite, arch = conformance_suite, arch_target.arch
    caps = set(arch.capabilities)
    if not caps & {"sync", "multi-agent"}:
        pytest.skip(f"{arch.name} declares neither 'sync' nor 'multi-agent': it has no sync objects to "
                    "deadlock on")
    machine = Machine(arch, host=suite.host_for(arch_target.subject.name))
    never = machine.add_sync(Semaphore("conformance.never", 0))
    parked = []
    for agent in machine.agents:
        if agent.daemon or agent.status != RUNNABLE:
            continue
        try:
            never.wait(agent)
        except WaitFor as w:
            agent.park(w.obj, w.reason)
            parked.append(agent.name)
    before = {a.name: (getattr(a, "pc", None), a.instret) for a in machine.agents}
    outcome = run(machine, 10_000)
    problems = []
    if not isinstance(outcome.error, Deadlock):
        _fail(f"{arch.name}: with {', '.join(parked) or 'no agent'} parked on a semaphore nobody posts, "
              f"the run ended with {outcome.detail!r}, not a deadlock")
    waits = outcome.error.waits
    waiting = [a.name for a in machine.agents if a.status == WAITING and not a.daemon]
    for name in waiting:
        if name not in waits:
            problems.append(f"the deadlock report does not name waiting agent {name}")
        elif not str(waits[name]).strip():
            problems.append(f"the deadlock report gives no reason for {name}")
    for name in parked:
        agent = machine.agent(name)
        if (getattr(agent, "pc", None), agent.instret) != before[name]:
            problems.append(f"{name} moved although it was parked")
    if problems:
        _fail(f"{arch.name}: " + "; ".join(problems))


def _where(arch: Any, words: list[int], err: Any) -> str:
    """The program as a reproducer: its words up to the one that failed (when known)."""
    shown = words
    pc = getattr(err, "pc", None)
    if isinstance(pc, int) and arch.reset_pc <= pc < arch.reset_pc + len(words) * arch.word_bytes:
        shown = words[:(pc - arch.reset_pc) // arch.word_bytes + 1]
    text = " ".join(f"{w:0{arch.word_bits // 4}x}" for w in shown)
    more = "" if len(shown) == len(words) else f" (then {len(words) - len(shown)} more words)"
    return f"{arch.name} words at {arch.reset_pc:#x}: {text}{more}"


def test_random_programs(arch_target, conformance_suite):
    """Random words run from the reset PC end in a result or a Tessera error, never a crash,
    and leave every register within its declared width."""
    suite, arch, subject = conformance_suite, arch_target.arch, arch_target.subject
    bounds = RegisterBounds(limit=3)  # and no register is written beyond its width
    host = suite.host_for(subject.name,
                          extra=[("conformance-observer", Observer([], bounds=bounds))])
    words_per_program, steps = 48, 200
    tally = Tally()

    def one(rnd):
        words = random_words(arch, rnd, words_per_program)
        machine = Machine(arch, host=host)
        data = b"".join(w.to_bytes(arch.word_bytes, arch.endian) for w in words)
        machine.space.write_bytes(arch.reset_pc, data, force=True)
        try:
            outcome = run(machine, steps)
        except Exception as exc:
            raise AssertionError(f"{_where(arch, words, None)}: the run raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        tally[outcome.reason] += 1
        err = outcome.error
        if isinstance(err, PluginError):
            raise AssertionError(f"{_where(arch, words, err)}: {err}")
        if isinstance(err, MemoryFault) and (err.address is None or err.agent is None):
            raise AssertionError(f"{_where(arch, words, err)}: a memory fault without address or agent: {err}")
        if isinstance(err, TesseraError) and not isinstance(err, Deadlock) and err.agent is None:
            raise AssertionError(f"{_where(arch, words, err)}: {err.kind} without the agent: {err}")

    try:
        Machine(arch, host=host).space.write_bytes(arch.reset_pc, bytes(arch.word_bytes), force=True)
    except TesseraError as exc:
        pytest.skip(f"{arch.name}: the reset PC {arch.reset_pc:#x} is not in memory a program can be "
                    f"placed in ({exc})")
    fixed(suite.random_programs)(given(rnd=st.randoms(use_true_random=False))(one))()
    print(f"{arch.name}: random programs ended with {dict(tally)}")
    if bounds.found:  # checked after all of them: the draws (seeded by one's source) stay as they were
        _fail(f"{arch.name}: a random program left a register holding a value its declared width "
              f"cannot: {'; '.join(bounds.found)}")
