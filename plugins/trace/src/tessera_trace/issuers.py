"""Instructions issued by other instructions: the issuer is listed first.

An *expander* — Tensix's MOP and REPLAY — runs the instructions it expands to from
inside its own semantic function, through their own observers; each is marked
``ins.issued_by`` (what issued it) and has the expander's address.  The engine calls
the expander's observers when it retires, after all of that, so a trace in retirement
order would list a MOP *after* its expansion.  To read naturally (the MOP, then what it
issued), the record of a fetched instruction whose row has the ``expands`` flag is
written when the first instruction it issues is recorded, and its retirement then
records nothing more; an expander that issued nothing (a REPLAY that only loads the
replay buffer) is recorded when it retires, like any instruction.  If an instruction
it issues must wait, the agent parks at the expander (which runs again when woken): the
expander is listed then, if it was not yet, and only once:
:attr:`AgentState.issuing <tessera_trace.agents.AgentState>` holds the address of the
expander the agent is in the middle of.

An expander issued by another one (a REPLAY in a MOP's expansion) is recorded where it
retires: it queues its words and returns, so its own record already comes first.

Only the observers of these two kinds of decode-cache entries are wrapped; every other
instruction's observer is the format's own (on the fast engine, compiled into blocks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tessera_trace.agents import AgentState

Observer = Callable[[Any, Any], None]
#: ``announce(agent, st, address)``: write the record of the expander at ``address``
Announce = Callable[[Any, AgentState, int], None]
#: ``retired(agent, st, ins)``: the expander announced before retired
Retired = Callable[[Any, AgentState, Any], None]


def issued(tracer: Any, address: int, announce: Announce, observer: Observer) -> Observer:
    """The observer of an entry issued by the expander at ``address``: the expander's
    record first (once per expansion), then the entry's own ``observer``."""
    states = tracer.states
    sight = tracer.sight

    def first_the_issuer(agent: Any, ins: Any) -> None:
        try:
            st = states[agent]
        except KeyError:
            st = sight(agent)
        if st is not None and st.issuing != address:
            st.issuing = address
            announce(agent, st, address)
        observer(agent, ins)

    return first_the_issuer


def parked(st: AgentState, expanders: Any, announce: Announce) -> None:
    """Agent ``st`` parks: if it is at an expander (an address in ``expanders``) not yet
    listed, list it now — one of the instructions it issues waits, so its expansion has
    begun (a Perfetto wait span then falls inside the expander's span)."""
    pc = getattr(st.agent, "pc", None)
    if pc is not None and st.issuing != pc and st.layout is not None and (st.layout.arch.name, pc) in expanders:
        st.issuing = pc
        announce(st.agent, st, pc)


def issuer(tracer: Any, address: int, retired: Retired, observer: Observer) -> Observer:
    """The observer of an expander at ``address``: ``retired`` when its record was written
    already (it issued something), else the entry's own ``observer``."""
    states = tracer.states

    def retire(agent: Any, ins: Any) -> None:
        st = states.get(agent)
        if st is not None and st.issuing == address:
            st.issuing = None
            retired(agent, st, ins)
            return
        observer(agent, ins)

    return retire
