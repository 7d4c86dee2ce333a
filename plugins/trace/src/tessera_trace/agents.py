"""Per-agent tracing state: the shadow register copies and the agent's cycle clock.

Register effects are found by comparing an agent's live register lists with shadow
copies taken after its previous retirement.  ``lives != shadows`` compares every file
in C, so an instruction that wrote nothing costs one comparison; what changed is then
found register by register (see :mod:`tessera_trace.effects`).
"""

from __future__ import annotations

from typing import Any

from tessera_trace.layout import ArchLayout


class AgentState:
    """What a tracer keeps about one traced agent.

    ``lives`` are the agent's own register lists (in :attr:`ArchLayout.files` order;
    an agent without a file gets an empty list there), ``shadows`` copies of them.
    ``head`` is the format's record prefix for this agent, ``tid`` its Perfetto track,
    ``clock`` the agent's cycle count after its last traced retirement.  ``issuing`` is
    the address of the instruction whose expansion the agent is issuing — listed already,
    not retired yet (:mod:`tessera_trace.issuers`) — else ``None``.
    """

    __slots__ = ("agent", "name", "layout", "lives", "shadows", "shadow_map", "head", "tid", "clock", "offset",
                 "issuing")

    def __init__(self, agent: Any, layout: ArchLayout | None, tid: int) -> None:
        self.agent = agent
        self.name: str = agent.name
        self.layout = layout
        self.head = ""                    # set by the format (Format.head)
        self.tid = tid
        self.clock = int(getattr(agent, "cycles", 0) or 0)
        self.offset = 0                   # time spent parked, which the agent's counter does not see
        self.issuing: int | None = None
        self.lives: list[list[int]] = []
        self.shadows: list[list[int]] = []
        #: the shadows by register-file name: what the core's record operation compares
        #: with.  Always this one dict (resync refills it), so a sink's answer stays valid.
        self.shadow_map: dict[str, list[int]] = {}
        self.resync()

    def resync(self) -> None:
        """Take fresh shadow copies (and re-read the live lists): nothing counts as changed."""
        regs = getattr(self.agent, "regs", None) or {}
        files = self.layout.files if self.layout is not None else []
        self.lives = []
        for name in files:
            live = regs.get(name)
            self.lives.append(live if isinstance(live, list) else [])
        self.shadows = [list(live) for live in self.lives]
        self.shadow_map.clear()
        self.shadow_map.update(zip(files, self.shadows, strict=True))

    def now(self) -> int:
        """The agent's clock: its committed cycles (plus time parked), or later if it retired since."""
        cycles = int(getattr(self.agent, "cycles", 0) or 0) + self.offset
        if cycles > self.clock:
            self.clock = cycles
        return self.clock

    def woken(self, at: int) -> None:
        """The agent was parked until ``at``: its clock carries on from there."""
        if at > self.clock:
            self.offset += at - self.clock
            self.clock = at
