"""Front-end operations: TCSR/TCSRW, t_sync, t_wait, and the Appendix B mbarrier/semaphore ops.

They run in the hart itself when their word dispatches (tile.md 9.3: "synchronous").

* **TCSR/TCSRW** (5.4) follow the Zicsr side-effect table: CSRRW with ``rd_en=0`` does
  not read, CSRRS/CSRRC with ``rs1 = x0`` (or immediate 0) do not write; writing a
  read-only or unknown CSR is an illegal instruction.  ``rs1_en=0`` selects the
  immediate forms (``tcsrwi``...: the 5-bit value in the rs1 slot).
* **t_sync** (5.8) arrives at a named barrier (:mod:`tessera_tile.barriers`); it does not
  wait for tile operations.
* **t_wait** (5.8) waits until the selected counters are low enough (memory form:
  thresholds, ``tile.t_wait_dont_care`` meaning "any"; TMA form: a bulk group; unit form:
  a bitmask of TMA/MMA/ALU, all three also draining memory and every TMA).  In checker
  mode it is also what retires the operations it covers.
* **t_mbar / t_sem** (Appendix B, ``tile.mbar_instructions``): mbarrier objects in shared
  memory or L2B (:mod:`tessera_tile.mbarrier`), 64-bit semaphores at ``tsem_base``.
"""

from __future__ import annotations

from typing import Any

from tessera_tile import faults, mbarrier
from tessera_tile.exec_base import M64, Executor, check_aligned, signed64
from tessera_tile.system import GLOBAL


# --------------------------------------------------------------------------- CSRs
def csr_value(system: Any, thread: Any, name: str) -> int:
    """The value tile CSR ``name`` reads as for ``thread``."""
    cfg = system.cfg
    c = thread.completion
    if name in thread.csr:
        return thread.csr[name]
    if name.endswith("_cnt"):
        return c.count(name[:-4])
    if name == "tstatus":
        bits = system.tables.table("tstatus")
        return sum(1 << bits[u + "_done"] for u in ("tma", "mma", "alu") if not c.count(u))
    return {"tile_bytes": cfg.tile_bytes, "num_tiles": cfg.num_tiles, "granule": cfg.granule,
            "vlen": cfg.vlen, "tid": thread.tid, "pe_id": thread.pe.index,
            "cluster_id": thread.cluster.index}[name]


class CsrExecutor(Executor):
    def run(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        word = op.word
        csrs = system.tables.csr_map()
        index = op.f("W1.csr")
        name = next((n for n, e in csrs.items() if e["index"] == index), None)
        if name is None:
            raise faults.illegal(word, f"no tile CSR {index:#05x}")
        entry = csrs[name]
        kind = op.params["op"]
        rd = op.f("W1.rd")
        if kind == "read":
            if rd:
                hart.x[rd] = csr_value(system, thread, name) & M64
            return
        source_zero = op.f("W1.rs1") == 0
        operand = op.f("W1.rs1") if op.params.get("imm") else op.gpr("W1", "rs1")
        writes = kind == "write" or not source_zero
        reads = kind != "write" or op.f("W1.rd_en")
        if writes and entry["access"] != "rw":
            raise faults.illegal(word, f"tile CSR {name} is read-only")
        old = csr_value(system, thread, name) if reads else 0
        if writes:
            new = operand if kind == "write" else old | operand if kind == "set" else old & ~operand
            new &= (1 << entry.get("width", 64)) - 1
            if name == "tmode":
                self._mode(system, thread, new, word)
            thread.csr[name] = new
        if op.f("W1.rd_en") and rd:
            hart.x[rd] = old & M64

    @staticmethod
    def _mode(system: Any, thread: Any, new: int, word: int) -> None:
        if new not in system.tables.table("tmode").values():
            raise faults.illegal(word, f"tmode {new} is not a mode")
        if new != thread.csr["tmode"] and thread.completion.busy():
            raise faults.illegal(word, "tmode changes while tile operations are outstanding")


# --------------------------------------------------------------------------- t_sync
class SyncExecutor(Executor):
    def run(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        cfg, word = system.cfg, op.word
        scope = system.tables.name_of("sync_scope", op.f("W1.scope"))
        if scope is None:
            raise faults.illegal(word, f"t_sync scope {op.f('W1.scope'):02b} is reserved")
        if op.has("W1.sync_id"):
            sync_id = op.f("W1.sync_id")
        else:
            sync_id = op.gpr("W1", "sync_rs")
            if sync_id >= 32:
                raise faults.illegal(word, f"t_sync barrier number {sync_id} (from a GPR) is not 0..31")
        if scope == "cta":
            barriers, bit, width = thread.pe.barriers, thread.tid, cfg.threads_per_pe
        else:
            barriers, bit, width = thread.cluster.barriers, thread.pe.local, cfg.pes_per_cluster
        if op.has("W1.mask"):
            mask = op.f("W1.mask")
        elif op.has("W1.mask_rs"):
            mask = op.gpr("W1", "mask_rs")
        else:
            mask = (1 << width) - 1
        if not mask or mask >> width:
            raise faults.illegal(word, f"t_sync mask {mask:#x} must name 1..{width} members of the {scope}")
        if not mask >> bit & 1:
            raise faults.illegal(word, f"t_sync mask {mask:#x} leaves out the arriving member (bit {bit})")
        arrive_value = 1 if cfg.t_sync_nonblk_polarity == "arrive-when-1" else 0
        blocking = op.f("W1.nonblk") != arrive_value
        problem = barriers.arrive(hart, sync_id, mask, blocking)
        if problem:
            raise faults.illegal(word, problem)


# --------------------------------------------------------------------------- t_wait
class WaitExecutor(Executor):
    def run(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        cfg = system.cfg
        c = thread.completion
        form = op.params["form"]
        checker = system.checker
        if form == "memory":
            shared = op.f("W1.shared") == cfg.t_wait_shared_bit
            ld_key, st_key = ("tsld", "tsst") if shared else ("tgld", "tgst")
            ld, st = op.f("W1.ld_cnt"), op.f("W1.st_cnt")
            dc = cfg.t_wait_dont_care
            ok = (ld == dc or c.count(ld_key) <= ld) and (st == dc or c.count(st_key) <= st)
            c.wait_until(hart, ok, f"t_wait(memory) of {hart.name}: {ld_key} {c.count(ld_key)} <= {ld} "
                         f"and {st_key} {c.count(st_key)} <= {st}")
            if checker is not None:
                if ld != dc:
                    checker.retire_memory(thread, ld_key, ld)
                if st != dc:
                    checker.retire_memory(thread, st_key, st)
            return
        if form == "tma":
            if not op.f("W1.wait"):
                return                                   # "commit": an ordering marker (S4)
            group = op.f("W1.group")
            key = f"tma.g{group}"
            c.wait_until(hart, not c.count(key), f"t_wait(TMA group {group}) of {hart.name}: "
                         f"{c.count(key)} outstanding")
            if checker is not None:
                checker.retire(thread, lambda p: p.plan.get("group") == group and p.unit == "tma")
            return
        bits = system.tables.table("waitop")
        waitop = op.f("W1.waitop")
        every = all(waitop >> b & 1 for b in bits.values())
        keys = []
        if waitop >> bits["tma"] & 1:
            keys.append("tma" if every else "tma.bulk")
        keys += [u for u in ("mma", "alu") if waitop >> bits[u] & 1]
        if every:
            keys += ["tgld", "tgst", "tsld", "tsst"]
        busy = [f"{k} {c.count(k)}" for k in keys if c.count(k)]
        c.wait_until(hart, not busy, f"t_wait({waitop:03b}) of {hart.name}: outstanding {', '.join(busy)}")
        if checker is not None:
            if every:
                checker.retire(thread, lambda p: True)
            else:
                units = {"mma"} if "mma" in keys else set()
                units |= {"alu"} if "alu" in keys else set()
                tma = "tma.bulk" in keys
                checker.retire(thread, lambda p: p.unit in units
                               or (tma and p.unit == "tma" and p.plan.get("group") is not None))


# --------------------------------------------------------------------------- mbarrier, semaphore
def _local(system: Any, thread: Any, hart: Any, address: int, word: int, rule: str
           ) -> tuple[Any, str, int, int]:
    kind, index, off = system.local_space(thread, address)
    check_aligned(system, off, 8, True, word, rule)
    system.check_range(kind, index, off, 8, True, word, rule)
    space = system.space(kind, index)
    space.current_agent = hart
    return space, kind, index, off


class MbarExecutor(Executor):
    def run(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        word = op.word
        sub = system.tables.name_of("mbar_sub", op.f("W1.sub"))
        if sub is None:
            raise faults.illegal(word, f"t_mbar sub-operation {op.f('W1.sub'):03b} is reserved")
        packing = system.mbar_packing
        space, kind, index, off = _local(system, thread, hart, op.gpr("W1", "rs1"), word, f"t_mbar {sub}")
        state = packing.unpack(space.read(off, packing.size))
        value = op.gpr("W1", "rs2")
        result = None
        if sub == "init":
            state = mbarrier.init(value)
        elif sub == "arrive":
            result = mbarrier.arrive(state)
        elif sub == "arrive_tx":
            result = mbarrier.arrive_tx(state, value)
        elif sub == "expect_tx":
            mbarrier.expect_tx(state, value)
        else:
            result = int(mbarrier.try_wait(state, value))
            if result and system.checker is not None:
                system.checker.retire_barrier((kind, index, off))
        if sub != "try_wait":
            space.write(off, packing.size, packing.pack(state))
        rd = op.f("W1.rd")
        if result is not None and rd:
            hart.x[rd] = result


class SemExecutor(Executor):
    def run(self, system: Any, thread: Any, op: Any, hart: Any) -> None:
        word = op.word
        sub = system.tables.name_of("sem_sub", op.f("W1.sub"))
        if sub is None:
            raise faults.illegal(word, f"t_sem sub-operation {op.f('W1.sub'):03b} is reserved")
        index = op.f("W1.index")
        if index >= system.cfg.num_semaphores:
            raise faults.illegal(word, f"semaphore {index} does not exist ({system.cfg.num_semaphores})")
        address = (thread.csr["tsem_base"] + 8 * index) & M64
        check_aligned(system, address, 8, sub == "signal", word, f"t_sem {sub}")
        system.check_range(GLOBAL, 0, address, 8, sub == "signal", word, f"t_sem {sub}")
        space = system.machine.space
        operand = op.gpr("W1", "rs2")
        if sub == "signal":
            space.write(address, 8, (space.read(address, 8) + operand) & M64)
            system.sem_event.signalled(hart)
            return
        now = space.read(address, 8)
        if signed64(now) < signed64(operand):
            system.sem_event.wait(hart, f"semaphore {index} at {address:#x} to reach {signed64(operand)} "
                                  f"(now {signed64(now)})")
        if system.checker is not None:
            system.checker.retire_semaphore(index)
