"""The replay expander of a Tensix thread: a 32-entry record/playback buffer.

WormholeB0 .../TensixCoprocessor/REPLAY.md (functional model).  The replay expander
sits after the MOP expander and before the wait gate.  ``REPLAY`` with ``Load`` set
makes the next ``Count`` instructions that reach it (``Count`` 0 means 64) be stored
at ``ReplayBuffer[(Index + i) % 32]`` — and, with ``Exec`` also set, go on to the wait
gate as usual; without ``Load`` it issues ``ReplayBuffer[(Index + i) % 32]`` for
``i < Count`` instead of itself.  Every field value is defined (the indices wrap).

:class:`ReplayBuffer` is the per-thread state; the thread feeds it the instructions
that arrive while it is loading (:meth:`ReplayBuffer.take`, called by
:meth:`tessera_tensix.frontend.FrontEnd.admit`), and :func:`playback` is the pure
function of the playback mode.  What Tessera chooses where the page is silent (also in
docs/tensix.md, "MOP and replay expanders"):

* the buffer is 0 at reset, as in the functional model; replaying a word that is 0 (an
  entry never loaded) or a ``MOP``/``MOP_CFG``/``REPLAY`` word (which would go past the
  expanders to the wait gate) breaks a rule; leniently the word is dropped;
* a ``REPLAY`` arriving while the buffer is loading is what the functional model stores
  as an ordinary instruction, but what it would do when replayed is undefined: a rule
  break; leniently it is recorded and nothing else happens;
* the all-zero word that ends a direct-mode kernel is not recorded: it ends the thread
  even while the buffer is loading (``state()`` shows the count still expected).
"""

from __future__ import annotations

from typing import Any

#: ReplayBuffer entries (REPLAY.md: ``[0] * 32``; Index is 5 bits)
SIZE = 32
MASK32 = 0xFFFF_FFFF


def count_of(count: int) -> int:
    """The number of instructions a REPLAY's 6-bit ``Count`` field means (0 -> 64)."""
    return count or 64


def playback(buffer: list[int], index: int, count: int) -> list[int]:
    """The words a playback-mode REPLAY (``Index``, ``Count``) issues from ``buffer``."""
    return [buffer[(index + i) % SIZE] for i in range(count_of(count))]


class ReplayBuffer:
    """One thread's replay buffer and its loading state."""

    def __init__(self) -> None:
        self.words = [0] * SIZE
        #: is a load-mode REPLAY still expecting instructions?
        self.loading = False
        self.execute = False  # ... and do they also execute?
        self.position = 0     # the entry the next recorded instruction goes to
        self.left = 0         # how many more instructions to record

    def load(self, index: int, count: int, execute: bool) -> None:
        """Start a load: the next ``count_of(count)`` instructions go to entries
        ``index``, ``index + 1``, … (mod 32); ``execute``: they also execute."""
        self.loading = True
        self.execute = bool(execute)
        self.position = index % SIZE
        self.left = count_of(count)

    def take(self, word: int) -> bool:
        """Record ``word`` (an instruction reaching the expander while loading); True if
        it must also go on and execute.  The load ends after its count."""
        if not self.loading:
            return True
        if word == 0:             # the end of a direct-mode kernel, not an instruction
            return True
        self.words[self.position] = word & MASK32
        self.position = (self.position + 1) % SIZE
        self.left -= 1
        if self.left == 0:
            self.loading = False
        return self.execute

    def playback(self, index: int, count: int) -> list[int]:
        """The words a playback-mode REPLAY issues."""
        return playback(self.words, index, count)

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {"buffer": [f"{w:#010x}" for w in self.words], "loading": self.loading}
        if self.loading:
            out.update(execute=self.execute, next_entry=self.position, left=self.left)
        return out


def buffer_of(thread: Any) -> ReplayBuffer:
    """``thread``'s replay buffer (made on first use, kept in ``thread.frontend.replay``)."""
    frontend = thread.frontend
    if frontend.replay is None:
        frontend.replay = ReplayBuffer()
    return frontend.replay
