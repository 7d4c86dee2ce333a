"""What every trace format provides to the :class:`~tessera_trace.tracer.Tracer`.

A format builds one *observer* per decode-cache entry (``make``), the function the
engine calls each time that instruction retires.  Everything that can be computed
per entry — the disassembly, the formatted PC and word, the JSON fragments — is
computed in ``make``; the observer only looks the agent up, finds what changed and
appends one string.  Shared mutable state (the record index, the window bounds) lives
in closure cells of the format's ``__init__``, because a cell is the cheapest thing a
Python function can read and rebind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tessera_trace.agents import AgentState
from tessera_trace.layout import ArchLayout

#: Observers flush the output when ``index & FLUSH_MASK == 0``: every 4096 records.
FLUSH_MASK = 4095

Observer = Callable[[Any, Any], None]


class Format:
    """Base of the formats; subclasses set the class attributes and fill the hooks."""

    name: ClassVar[str] = "?"
    #: the file written when ``--trace-out`` is not given
    default_out: ClassVar[str] = "trace.out"
    #: whether the format shows memory effects (the tracer then watches memory)
    memory: ClassVar[bool] = False
    #: whether the format needs an observer on instructions outside ``--trace-pc``
    #: (to keep register shadows and pending memory effects in step)
    follows_untraced: ClassVar[bool] = False

    def __init__(self, tracer: Any) -> None:
        self.tracer = tracer
        self.make: Callable[[ArchLayout, Any, bool], Observer | None] = lambda layout, ins, traced: None

    def header(self) -> str:
        """Written when the tracer is attached."""
        return ""

    def head(self, st: AgentState) -> str:
        """The text each record of agent ``st`` starts with (stored as ``AgentState.head``)."""
        return ""

    def new_agent(self, st: AgentState) -> None:
        """An agent seen for the first time (after the header was written)."""

    def on_trap(self, st: AgentState, agent: Any, trap: Any) -> None:
        """A traced agent trapped (the instruction did not retire)."""

    def on_trap_taken(self, st: AgentState, agent: Any, trap: Any) -> None:
        """The architecture took the trap; ``agent`` is at its handler."""

    def on_sync(self, event: Any, st: AgentState | None) -> None:
        """A sync event; ``st`` is the acting agent's state (``None``: untraced or no agent)."""

    def finish(self) -> str:
        """The end of the trace (appended through the size limit), at close."""
        return ""

    def footer(self) -> str:
        """Written after everything else at close, past the limit (closing brackets)."""
        return ""

    def cut_note(self, lines: int, written: int, limit: int) -> str:
        """The line written where the size limit cut the trace."""
        return (f"# trace cut after {lines} lines ({written} bytes): the --trace-limit of {limit} "
                "bytes was reached; the run went on untraced\n")

    def active(self) -> bool:
        """Whether the record index is inside the window (notes and events are written)."""
        return True
