"""Where the commit-log formats' records go: the ledger, through the ``--trace-window``.

The core's record operation (:mod:`tessera.engine.record`) appends each retirement's
record through the ``record``/``remember`` pair the :meth:`RecordStream.sink` hands
it — inside translated blocks without any call.  Without a window that pair is the
ledger's own ``list.append``s.  With one, it is a pair of small functions that count
every record of the filtered stream and keep only those in ``[first, last)``; at
``last`` the tracer stops (observers dropped at the end of the run).  Records before
the window are still compared, so the shadows are in step when it opens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tessera_trace.agents import AgentState
from tessera_trace.filters import FOREVER


class RecordStream:
    """The records of one commit-log trace: appenders, the sink, and the window's position.

    ``record(token)`` and ``remember(value)`` append a record and the value of the
    register it shows; ``literal(text)`` a record given as finished text (several
    registers, memory accesses).  Records of agents outside ``--trace-agent`` go to a
    scratch list that is never written.
    """

    def __init__(self, tracer: Any, ledger: Any) -> None:
        from tessera_trace.ledger import DRAIN_AT, LITERAL

        self.ledger = ledger
        first, last = tracer.window.first, tracer.window.last
        self.windowed = first > 0 or last < FOREVER
        self.count = 0            # records of the filtered stream so far (counted only with a window)
        ids, values, lits = ledger.ids, ledger.values, ledger.lits
        record, remember = ledger.record, ledger.remember
        literal_token = LITERAL

        def literal(text: str) -> None:
            record(literal_token)
            lits.append(text)

        if self.windowed:
            record, remember, literal = self._window(tracer, ids, values, lits, first, last, literal_token)
        self.record: Callable[[Any], Any] = record
        self.remember: Callable[[Any], Any] = remember
        self.literal: Callable[[str], None] = literal
        self.sink = self._sink(tracer, ledger, DRAIN_AT)

    def _window(self, tracer: Any, ids: list[int], values: list[Any], lits: list[str], first: int, last: int,
                literal_token: int) -> tuple[Any, Any, Any]:
        keep = False
        stream = self

        def record(token: Any) -> None:
            nonlocal keep
            i = stream.count
            stream.count = i + 1
            if first <= i < last:
                keep = True
                ids.append(token)
                return
            keep = False
            if i == last:
                tracer.stop()

        def remember(value: Any) -> None:
            if keep:
                values.append(value)

        def literal(text: str) -> None:
            record(literal_token)
            if keep:
                lits.append(text)

        return record, remember, literal

    def _sink(self, tracer: Any, ledger: Any, drain_at: int) -> Any:
        states = tracer.states
        sight = tracer.sight
        pend = tracer.pend
        ids = ledger.ids
        drain = ledger.drain
        record, remember = self.record, self.remember
        scratch: list[Any] = []
        spare: dict[str, dict[str, list[int]]] = {}   # shadows for agents outside --trace-agent
        # the agent the ledger holds records of, and the answer for it (its shadow map is
        # always the same dict): the common case, one comparison
        held: Any = None
        answer: tuple[Any, Any, Mapping[str, list[int]]] = (record, remember, {})

        def sink(agent: Any) -> tuple[Any, Any, Mapping[str, list[int]]]:
            """The record operation's sink: called per retirement it records, or per block call."""
            nonlocal held, answer
            if agent is held:     # (only state_of switches the ledger to another agent)
                if len(ids) >= drain_at:
                    drain()
                return answer
            st = self.state_of(agent, states, sight)
            if st is None:        # not traced: the records go nowhere, nor do its accesses
                if pend:
                    pend.clear()
                scratch.clear()
                layout = tracer.layout_of(agent.arch)
                shadows = spare.get(layout.arch.name)
                if shadows is None:
                    shadows = spare[layout.arch.name] = {f: [0] * len(names) for f, names
                                                         in zip(layout.files, layout.names, strict=True)}
                return scratch.append, scratch.append, shadows
            held, answer = agent, (record, remember, st.shadow_map)
            if len(ids) >= drain_at:
                drain()
            return answer

        return sink

    def state_of(self, agent: Any, states: dict[Any, AgentState | None], sight: Any) -> AgentState | None:
        """The agent's state, with the ledger switched to it (``None``: not traced)."""
        try:
            st = states[agent]
        except KeyError:
            st = sight(agent)
        if st is not None:
            self.ledger.enter(agent, st)
        return st

    def active(self, tracer: Any) -> bool:
        """Is the next record inside the window (notes are written)?"""
        return not self.windowed or tracer.window.first <= self.count < tracer.window.last
