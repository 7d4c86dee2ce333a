"""The Tensix core's shared state: Dest, SrcA/SrcB, the vector unit, backend configuration,
the sync unit, the ADCs, L1, and the signal waiting threads park on."""

from __future__ import annotations

from typing import Any

from tessera_tensix.config import ConfigSpace, TensixConfig
from tessera_tensix.dest import Dest
from tessera_tensix.sfpu_state import SfpuState
from tessera_tensix.signal import BackendSignal
from tessera_tensix.srcab import SrcRegister

#: the key of :class:`ExpandedInstructions` among the address space's code caches
EXPANDED_CACHE = "tensix-expanded"


class ExpandedInstructions(dict):
    """The decoded words of MOP and replay expansions, by ``(word, address, issued_by)``.

    A code cache of the machine's address space (``AddressSpace.decode_cache``): emptied
    with the engine's when the machine's caches are flushed, and not part of a snapshot.
    Its words come from MopCfg and the replay buffer, not from memory, so a store to
    code drops nothing here."""

    def invalidate(self, start: int, end: int) -> set[int]:
        return set()


class TensixCore:
    """What the Tensix threads of one core share."""

    #: has some thread recorded a matrix-unit Dest write the hazard rules look back at
    #: (:mod:`tessera_tensix.hazards`)?  Until then SFPLOAD skips the check.
    dest_hazards = False

    def __init__(self, config: TensixConfig, chip: str = "bh") -> None:
        self.config = config
        self.chip = chip                          # "bh" or "wh"
        self.dest = Dest()
        self.sfpu = SfpuState(ttsim_reset=config.ttsim_reset)
        if config.lane_flags_reset:
            self.sfpu.lane_flags[:] = True
        self.cfg = ConfigSpace()                  # backend config (one bank modelled)
        self.signal = BackendSignal("tensix")     # what waiting threads park on
        self.srca = SrcRegister("SrcA", self.signal)
        self.srcb = SrcRegister("SrcB", self.signal)
        #: per-unit state created by the units' modules on first use (sync unit, ADCs …),
        #: keyed by unit name; each value has ``state()``
        self.units: dict[str, Any] = {}
        self.l1: Any = None                       # tessera_tensix.l1.L1, mapped by the board
        self.threads: list[Any] = []
        #: the threads were started at their kernel's labels (board.start_threads, once)
        self.started = False
        self.machine: Any = None

    def unit(self, name: str, make: Any) -> Any:
        """The state of unit ``name``, made by ``make(core)`` the first time it is asked for."""
        state = self.units.get(name)
        if state is None:
            state = self.units[name] = make(self)
        return state

    def decode(self, word: int, address: int = 0, issued_by: str | None = None, *,
               instrument: bool = False) -> Any:
        """A decoded instruction for ``word`` issued by an expander (MOP, REPLAY) at
        ``address`` (the expanding instruction's: traces attribute it there), its
        semantics bound, ``ins.issued_by`` set (``"MOP"``, ``"REPLAY from MOP"``: the
        core's mark of an instruction that was not fetched) and its observers
        (``tessera_execute_observe``: a trace) attached as ``ins.observers``.  Cached
        (expansions repeat the same few words) in a code cache of the machine's address
        space, so that flushing the machine's caches — a tracer attached or closed —
        drops these observers with the engine's.  ``instrument``: also wrap it with the
        ``tessera_execute_instrument`` callbacks (an instruction a tile's thread pops from
        its FIFO retires as a fetched one does; an expansion's instructions do not)."""
        key = (word, address, issued_by, instrument)
        decoded = self.machine.space.decode_cache(EXPANDED_CACHE, ExpandedInstructions)
        ins = decoded.get(key)
        if ins is None:
            arch = self.threads[0].arch
            ins = self.machine.decoder(arch).decode(word, address)
            if issued_by is not None:
                ins.issued_by = issued_by
            run = getattr(ins.run, "resolve", None)
            if run is not None:
                ins.run = run()
            try:
                ins.cycles = int(self.machine.timing.cycles(ins))
            except Exception:  # noqa: BLE001 - a cost the expansion does not charge
                ins.cycles = 1
            ins.observers = self._observers(arch, ins)
            if instrument:
                ins.run = self.machine.decode_filler(arch, self.machine.space).instrument(ins, ins.run)
            decoded[key] = ins
        return ins

    def _observers(self, arch: Any, ins: Any) -> tuple[Any, ...]:
        """What the ``tessera_execute_observe`` hooks want called after ``ins`` (as the
        engine asks when it fills its decode cache)."""
        from tessera.errors import PluginError

        found = []
        for impl in self.machine.hook_calls("tessera_execute_observe"):
            try:
                ob = impl(machine=self.machine, arch=arch, ins=ins)
            except Exception as exc:
                raise PluginError(f"tessera_execute_observe raised {type(exc).__name__}: {exc}",
                                  plugin=impl.plugin_name) from exc
            if ob is not None:
                found.append(ob)
        return tuple(found)

    def state_bytes(self) -> bytes:
        """The register arrays' contents, for ``Machine.state_hash`` (``state()`` summarises
        them): Dest with its row validity, SrcA and SrcB, the vector unit's LRegs and lane
        flags — so the conformance suite's engine, snapshot and determinism comparisons
        see a wrong cell, not only a wrong L1 byte."""
        parts = (self.dest.bits, self.dest.row_valid, self.srca.rows, self.srcb.rows, self.sfpu.lreg,
                 self.sfpu.lane_flags)
        return b"".join(part.tobytes() for part in parts)

    def state(self) -> dict[str, Any]:
        return {"sfpu": self.sfpu.state(), "dest": self.dest.state(), "config": self.cfg.state(),
                "srca": self.srca.state(), "srcb": self.srcb.state(),
                "units": {name: unit.state() for name, unit in sorted(self.units.items())}}
