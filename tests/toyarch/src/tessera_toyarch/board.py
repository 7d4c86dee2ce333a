"""The toy board: two cores, semaphores, a barrier, a DMA engine and a console."""

from __future__ import annotations

import sys

from tessera.engine import CpuAgent, EngineAgent
from tessera.settings import Setting, Settings
from tessera.sync import Barrier, Counter, Fifo, Semaphore

CONSOLE_BASE = 0x0003_0000
#: The board's settings; the core checks ``--set`` against them before ``build`` runs.
SETTINGS = Settings((
    Setting("cores", "int", 2, min=1, max=16, help="CPU agents core0..coreN-1",
            note="a small test board"),
    Setting("echo", "bool", True, help="copy console output to stdout"),
), label="toy")


class ToyCore(CpuAgent):
    """A toy core: the CPU agent plus its core index (read by ``cid``)."""

    def __init__(self, name, arch, space, *, core_id: int = 0, **kw):
        super().__init__(name, arch, space, **kw)
        self.core_id = core_id


class Console:
    """MMIO console: a byte written at offset 0 is printed (and kept in ``text``)."""

    def __init__(self, echo: bool = True) -> None:
        self.text = bytearray()
        self.echo = echo

    def read(self, offset: int, size: int) -> int:
        return len(self.text)

    def write(self, offset: int, size: int, value: int) -> None:
        self.text.append(value & 0xFF)
        if self.echo:
            sys.stdout.write(chr(value & 0xFF))
            sys.stdout.flush()


class DmaEngine(EngineAgent):
    """Copies ``(dst, src, length)`` commands byte-exactly; one cycle per 4 bytes."""

    def process(self, command) -> int:
        dst, src, length = command
        space = self.machine.space
        space.write_bytes(dst, space.read_bytes(src, length))
        return max(1, length // 4)


def build(machine) -> None:
    values = (machine.arch.settings or SETTINGS).resolve(machine.config)  # a derived arch may add keys
    cores = values["cores"]
    for i in range(cores):
        machine.add_agent(ToyCore(f"core{i}", machine.arch, machine.space, core_id=i))
    for i in range(4):
        machine.add_sync(Semaphore(f"sem{i}", 0))
    machine.add_sync(Barrier("bar", cores))
    inbox = machine.add_sync(Fifo("dma.q", 4))
    done = machine.add_sync(Counter("dma.done"))
    machine.add_agent(DmaEngine("dma", inbox, done))
    machine.space.add_mmio("console", CONSOLE_BASE, 0x10,
                           Console(echo=values["echo"]))
