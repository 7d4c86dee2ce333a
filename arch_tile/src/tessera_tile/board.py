"""The tile machine: ``clusters x pes_per_cluster x threads_per_pe`` harts with their tile cores.

Built as the ``build`` of the RISC-V extension ``tile`` (after the RISC-V board made
RAM and ``hart0``):

* harts ``hart0`` .. ``hart{N-1}`` — RISC-V harts, all starting at the program entry
  (like the harts of any multi-hart RISC-V system: software reads ``mhartid`` or the
  tile CSRs ``tid``/``pe_id``/``cluster_id`` to tell them apart); hart ``g`` gets
  ``mhartid = hartid + g`` and its own stack, ``stack_bytes`` below the previous one.
  Every hart is a scheduler agent; the run ends when all of them have exited;
* per hart: the tile state (``hart.tile``, :class:`~tessera_tile.state.TileThread`), the
  engines ``hart{g}.lsu/.tma/.mma/.alu`` with their queues ``….q`` and completion
  counters ``….done``, and the completion object ``hart{g}.tile`` ``t_wait`` parks on;
* per PE ``pe{p}``: shared memory (address space ``pe{p}.shmem``) and the CTA barriers
  ``pe{p}.tsync``; per cluster ``cluster{c}``: the L2B (space ``cluster{c}.l2b``) and the
  cluster barriers ``cluster{c}.tsync``; one ``tile.sem`` object semaphore waits park on.

Global memory is the harts' address space ``main``.
"""

from __future__ import annotations

from typing import Any

from tessera.errors import ConfigError
from tessera.sync import Counter
from tessera_riscv.board import INITIAL_STACK_WORDS
from tessera_riscv.hart import RiscvHart
from tessera_tile import tables as tables_mod
from tessera_tile.barriers import NamedBarriers, SemaphoreSignals
from tessera_tile.checker import Checker
from tessera_tile.config import TileConfig
from tessera_tile.engines import UNITS, CostModel, TileEngine, TileQueue
from tessera_tile.mbarrier import Packing
from tessera_tile.state import Cluster, Completion, Pe, TileThread
from tessera_tile.system import TileSystem


def machine_tables(cfg: TileConfig) -> tables_mod.Tables:
    """The tables this machine decodes with: the built-in ones, or ``tile.tables`` merged over them."""
    return tables_mod.load_overrides(cfg.tables) if cfg.tables else tables_mod.builtin()


def csr_reset(system: TileSystem) -> dict[str, int]:
    """Reset values of the writable tile CSRs (tmode from ``tile.mode``)."""
    out = {}
    for name, entry in system.tables.csr_map().items():
        if entry["access"] == "rw":
            out[name] = 0
    out["tmode"] = system.tables.code("tmode", system.cfg.mode)
    return out


class TileBuild:
    """The extension's ``build``: a class (so the architecture record pickles) knowing its opcodes."""

    def __init__(self, opcodes: tuple[str, ...]) -> None:
        self.opcodes = tuple(opcodes)

    def __call__(self, machine: Any) -> None:
        build(machine, self.opcodes)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TileBuild) and other.opcodes == self.opcodes

    def __hash__(self) -> int:
        return hash(self.opcodes)


def build(machine: Any, arch_opcodes: tuple[str, ...] = ("custom-3",)) -> None:
    cfg = TileConfig.from_mapping(machine.config)
    missing = [n for n in cfg.opcode_names if n not in arch_opcodes]
    if missing:
        raise ConfigError(f"tile setting opcodes: {', '.join(missing)} not decoded by architecture "
                          f"{machine.arch.name} (it has {', '.join(arch_opcodes)}; see "
                          "tessera_tile.make_tile_arch)")
    system = TileSystem(machine, cfg, machine_tables(cfg))
    machine.ext.declare("tile", system)
    system.cost = CostModel(cfg)
    system.checker = Checker(system)
    system.mbar_packing = Packing(system.tables.table("mbar_object"))
    system.sem_event = machine.add_sync(SemaphoreSignals("tile.sem"))
    rv = machine.ext["riscv_config"]
    hart0 = machine.agent("hart0")
    reset = csr_reset(system)
    g = 0
    for c in range(cfg.clusters):
        l2b = machine.add_space(f"cluster{c}.l2b")
        l2b.add_ram("l2b", 0, cfg.l2b_bytes, perms="rw")
        cluster_harts = [[f"hart{(c * cfg.pes_per_cluster + p) * cfg.threads_per_pe + t}"
                          for t in range(cfg.threads_per_pe)] for p in range(cfg.pes_per_cluster)]
        cluster = Cluster(c, l2b, machine.add_sync(NamedBarriers(
            f"cluster{c}.tsync", [f"pe{c * cfg.pes_per_cluster + p}" for p in range(cfg.pes_per_cluster)],
            cluster_harts)))
        system.clusters.append(cluster)
        for p in range(cfg.pes_per_cluster):
            pe_index = c * cfg.pes_per_cluster + p
            shmem = machine.add_space(f"pe{pe_index}.shmem")
            shmem.add_ram("shmem", 0, cfg.shmem_bytes, perms="rw")
            names = cluster_harts[p]
            pe = Pe(pe_index, p, cluster, shmem, machine.add_sync(NamedBarriers(
                f"pe{pe_index}.tsync", names, [[n] for n in names])))
            cluster.pes.append(pe)
            system.pes.append(pe)
            for t in range(cfg.threads_per_pe):
                hart: Any = hart0 if g == 0 else _add_hart(machine, g, rv, cfg)
                completion = machine.add_sync(Completion(f"{hart.name}.tile"))
                thread = TileThread(hart.name, g, t, pe, cluster, cfg, completion, reset)
                thread.system = system
                hart.tile = thread
                pe.threads.append(thread)
                system.threads[hart.name] = thread
                g += 1
    for thread in system.threads.values():
        for unit in UNITS:
            name = f"{thread.name}.{unit}"
            inbox = machine.add_sync(TileQueue(f"{name}.q", cfg.queue_depth))
            done = machine.add_sync(Counter(f"{name}.done"))
            thread.engines[unit] = machine.add_agent(TileEngine(name, inbox, done, system=system,
                                                                thread=thread.name, unit=unit))


def _add_hart(machine: Any, g: int, rv: Any, cfg: TileConfig) -> RiscvHart:
    """Hart ``g``: its own stack, ``g * stack_bytes`` below hart 0's, set up like hart 0's."""
    hart: Any = RiscvHart(f"hart{g}", machine.arch, machine.space, xlen=64, hartid=rv.hartid + g,
                     misaligned=rv.misaligned, syscalls=rv.syscalls)
    machine.add_agent(hart)
    size = INITIAL_STACK_WORDS * 8
    sp = (rv.initial_sp - g * cfg.stack_bytes - size) & ~15
    if sp < 0x100:
        raise ConfigError(f"tile: no room for the stack of hart{g} (ram too small for "
                          f"{cfg.threads} harts of {cfg.stack_bytes:#x} bytes of stack)")
    machine.space.write_bytes(sp, bytes(size), force=True)
    hart.x[2] = sp
    return hart
