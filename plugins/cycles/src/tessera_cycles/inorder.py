"""A parameterised cycle model of a classic in-order 5-stage RISC-V pipeline.

The model is fed one retired instruction at a time (:meth:`InOrderPipeline.retire`) and
estimates cycles from what the instruction was (its kind, registers, data accesses,
branch outcome), not from a cycle-by-cycle simulation.  Time is the cycle in which each
instruction enters EX; the stages are IF ID EX MEM WB with full forwarding and at most
one instruction issued per cycle.

Timing rules (``ex_i`` = the cycle instruction *i* enters EX):

* The first instruction enters IF in cycle 1, so without stalls ``ex_1 = 3``; it leaves
  WB in cycle 5, and N independent single-cycle instructions take N + 4 cycles.
* ``ex_i = max(ex_{i-1} + 1 + dstall_{i-1},
  ex_{i-1} + 1 + redirect_{i-1} + fetch_i,
  ready(r) for each source register r of i)``.
* ``ready(r) = ex_j + latency_j + dstall_j`` for the last instruction *j* that wrote r:
  latency 1 for ALU, CSR, jumps and system instructions, ``1 + load_use`` for loads and
  AMOs, ``mul_latency`` for mul, ``div_latency`` for div.  x0 and never-written registers
  are ready at cycle 0.  Every source is treated as needed in EX (a store's data operand
  too).
* ``redirect``: a mispredicted conditional branch costs ``branch_penalty`` (resolved in EX),
  a correctly predicted one nothing (the target is assumed known in time, as from a BTB),
  ``jal`` costs ``jump_penalty`` (target known in ID), ``jalr`` ``jalr_penalty``.
* ``fetch_i`` is the I-cache stall of ``icache.access(pc, 4)``; ``dstall_i`` the sum of the
  D-cache stalls of the instruction's data accesses: the instruction holds MEM that much
  longer, delaying every later instruction and its own loaded result.  The fetch of the
  next instruction overlaps that MEM stall (the two candidates are a ``max``, not a sum).
* Multiply and divide units are pipelined / separate: a long mul or div delays only the
  instructions that read its result, never independent ones behind it.
* ``cycles() = ex_last + 2 + dstall_last`` (MEM and WB of the last instruction); it is the
  maximum over all instructions because each ``ex`` is at least the previous
  ``ex + 1 + dstall``.  Result latency beyond that (a mul retired last) is not counted.

Stall attribution: a D-cache stall is charged to ``dcache`` when it happens.  The cycles
by which ``ex_i`` exceeds ``ex_{i-1} + 1 + dstall_{i-1}`` go wholly to the larger of the two
other causes (removing a smaller, overlapped cause would not save a cycle): to ``data``
when a source register is the strictly latest candidate (and also to ``load_use`` or
``mul_div`` when its producer was a load/AMO or a mul/div), otherwise to the control
candidate, split into its redirect part (``branch`` / ``jump``) and the rest (``icache``).
Hence ``instructions + 4 + data + branch + jump + icache + dcache == cycles()`` always.
"""

from __future__ import annotations

from typing import Any

import attrs

from tessera_cycles.cache import Cache
from tessera_cycles.params import CACHE_DOCS, boolean, check_geometry, non_negative, positive, power_of_two
from tessera_cycles.predictor import PREDICTORS, Predictor, make_predictor

#: parameter -> one line for a listing command (keys are exactly InOrderParams' fields)
PARAM_DOCS: dict[str, str] = {
    "load_use": "extra stall cycles when an instruction uses the result of the load just before it",
    "mul_latency": "cycles from a mul entering EX until its result can be forwarded (ALU: 1)",
    "div_latency": "cycles from a div/rem entering EX until its result can be forwarded",
    "branch_penalty": "cycles lost on a mispredicted conditional branch (resolved in EX)",
    "jump_penalty": "cycles lost on a jal (target known in ID)",
    "jalr_penalty": "cycles lost on a jalr (indirect target resolved in EX)",
    "predictor": f"conditional-branch direction predictor: {', '.join(PREDICTORS)}",
    "bht_entries": "2-bit counters in the bimodal predictor's table (power of two)",
    **CACHE_DOCS,
}


def _predictor_name(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value not in PREDICTORS:
        raise ValueError(f"{attribute.name} must be one of: {', '.join(PREDICTORS)}; got {value!r}")


@attrs.frozen
class InOrderParams:
    """The in-order pipeline's parameters (see :data:`PARAM_DOCS`); validated on creation."""

    load_use: int = attrs.field(default=1, validator=non_negative)
    mul_latency: int = attrs.field(default=3, validator=positive)
    div_latency: int = attrs.field(default=34, validator=positive)
    branch_penalty: int = attrs.field(default=2, validator=non_negative)
    jump_penalty: int = attrs.field(default=1, validator=non_negative)
    jalr_penalty: int = attrs.field(default=2, validator=non_negative)
    predictor: str = attrs.field(default="bimodal", validator=_predictor_name)
    bht_entries: int = attrs.field(default=512, validator=power_of_two)
    icache_size: int = attrs.field(default=16384, validator=power_of_two)
    icache_ways: int = attrs.field(default=2, validator=power_of_two)
    icache_line: int = attrs.field(default=32, validator=power_of_two)
    dcache_size: int = attrs.field(default=16384, validator=power_of_two)
    dcache_ways: int = attrs.field(default=2, validator=power_of_two)
    dcache_line: int = attrs.field(default=32, validator=power_of_two)
    miss_penalty: int = attrs.field(default=20, validator=non_negative)
    caches: bool = attrs.field(default=True, validator=boolean)

    def __attrs_post_init__(self) -> None:
        check_geometry(self)

    @classmethod
    def fields(cls) -> list[tuple[str, Any, str]]:
        """(name, default, one-line doc) of every parameter, in declaration order."""
        return [(field.name, field.default, PARAM_DOCS[field.name]) for field in attrs.fields(cls)]


# stall categories: indexes into InOrderPipeline._stalls, in report order.  LOAD_USE and
# MUL_DIV double as "producer class" codes of registers (0 = any other producer).
_DATA, _LOAD_USE, _MUL_DIV, _BRANCH, _JUMP, _ICACHE, _DCACHE = range(7)
_STALL_NAMES = ("data", "load_use", "mul_div", "branch", "jump", "icache", "dcache")
_KINDS = ("alu", "mul", "div", "load", "store", "amo", "branch", "jump", "jalr", "csr", "system")
_NREGS = 32


def kind_table(params: InOrderParams) -> dict[str, tuple[int, int, int, int, bool]]:
    """Per instruction kind: (result latency, producer class, redirect penalty, redirect
    category, is a conditional branch) — the rules both the per-retirement pipeline and the
    batched kernel (:mod:`tessera_cycles.inorder_batch`) apply."""
    load = 1 + params.load_use
    return {
        "alu": (1, 0, 0, _BRANCH, False),
        "mul": (params.mul_latency, _MUL_DIV, 0, _BRANCH, False),
        "div": (params.div_latency, _MUL_DIV, 0, _BRANCH, False),
        "load": (load, _LOAD_USE, 0, _BRANCH, False),
        "store": (1, 0, 0, _BRANCH, False),
        "amo": (load, _LOAD_USE, 0, _BRANCH, False),
        "branch": (1, 0, 0, _BRANCH, True),
        "jump": (1, 0, params.jump_penalty, _JUMP, False),
        "jalr": (1, 0, params.jalr_penalty, _JUMP, False),
        "csr": (1, 0, 0, _BRANCH, False),
        "system": (1, 0, 0, _BRANCH, False),
    }


class InOrderPipeline:
    """Cycle estimate of an in-order 5-stage pipeline fed with retired instructions.

    See the module docstring for the exact timing and attribution rules.  :meth:`retire`
    is called once per instruction, so it keeps its state in plain attributes and lists,
    and counts an access inside a cache's most recently touched line as a hit itself
    instead of calling :meth:`Cache.access` (see ``Cache.mru_lo``).
    """

    def __init__(self, params: InOrderParams) -> None:
        self.params = params
        self._predictor: Predictor = make_predictor(params.predictor, params.bht_entries)
        self._icache: Cache | None = None
        self._dcache: Cache | None = None
        if params.caches:
            self._icache = Cache("icache", params.icache_size, params.icache_ways, params.icache_line,
                                 params.miss_penalty)
            self._dcache = Cache("dcache", params.dcache_size, params.dcache_ways, params.dcache_line,
                                 params.miss_penalty)
        # kind -> (result latency, producer class, redirect penalty, redirect category, is a branch)
        self._kinds = kind_table(params)
        self._branch_penalty = params.branch_penalty
        self._ready = [0] * _NREGS          # register -> cycle its value can be forwarded into EX
        self._producer = [0] * _NREGS       # register -> producer class (_LOAD_USE, _MUL_DIV or 0)
        self._stalls = [0] * len(_STALL_NAMES)
        self._count = 0
        # the previous instruction i-1 as the next one sees it (a virtual instruction 0 is in
        # EX at cycle 2, so ex_1 = 3): base = ex + 1 + its D-cache stall (also cycles() - 1),
        # control = ex + 1 + its redirect penalty, cause = that penalty's stall category
        self._base = 3
        self._control = 3
        self._cause = _BRANCH

    def retire(self, pc: int, kind: str, reads: tuple[int, ...], writes: tuple[int, ...],
               accesses: tuple[tuple[int, int], ...], taken: bool | None, target: int | None) -> None:
        """Account for one retired instruction (see the module docstring for the rules).

        *reads*/*writes* are x-register numbers (0-31), *accesses* the (address, size) of
        each data access; *taken*/*target* are the actual direction and taken target of a
        ``branch`` and None for every other kind.
        """
        try:
            latency, producer, redirect, cause, is_branch = self._kinds[kind]
        except KeyError:
            raise ValueError(f"unknown instruction kind {kind!r}; expected one of: {', '.join(_KINDS)}") from None
        icache = self._icache
        if icache is None:
            fetch = 0
        elif icache.mru_lo <= pc and pc + 4 <= icache.mru_end:
            icache.accesses += 1                  # inside the line fetched last: a hit (see Cache)
            icache.hits += 1
            fetch = 0
        else:
            fetch = icache.access(pc, 4)

        base = self._base                         # the D-cache stall was charged when it happened
        ex = self._control + fetch
        if ex < base:
            ex = base
        ready = self._ready
        source = -1
        for register in reads:
            at = ready[register]
            if at > ex:
                ex = at
                source = register
        if ex > base:
            self._charge(ex - base, source)

        dstall = 0
        if accesses:
            dcache = self._dcache
            if dcache is not None:
                for address, size in accesses:
                    if dcache.mru_lo <= address and address + size <= dcache.mru_end:
                        dcache.accesses += 1      # inside the line touched last: a hit (see Cache)
                        dcache.hits += 1
                    else:
                        dstall += dcache.access(address, size)
                if dstall:
                    self._stalls[_DCACHE] += dstall
        if writes:
            at = ex + latency + dstall
            producers = self._producer
            for register in writes:
                if register:
                    ready[register] = at
                    producers[register] = producer
        if is_branch:
            if taken is None or target is None:
                raise ValueError(f"branch at {pc:#x} needs its direction and target, got {taken!r}, {target!r}")
            predictor = self._predictor
            predictor.predictions += 1
            if predictor.predict(pc, target) != taken:
                predictor.mispredictions += 1
                redirect = self._branch_penalty
            predictor.update(pc, taken)

        ex += 1
        self._base = ex + dstall
        self._control = ex + redirect
        self._cause = cause
        self._count += 1

    def _charge(self, extra: int, source: int) -> None:
        """Attribute the *extra* cycles an instruction waited beyond ``_base`` (only on a stall).

        *source* is the register whose late value decided them, -1 when the control
        candidate (redirect + fetch) did.
        """
        stalls = self._stalls
        if source >= 0:
            stalls[_DATA] += extra
            code = self._producer[source]
            if code:
                stalls[code] += extra
            return
        own = self._control - self._base          # the redirect part not hidden by the MEM stall
        if own > 0:
            stalls[self._cause] += own
            extra -= own
        stalls[_ICACHE] += extra

    def cycles(self) -> int:
        """Cycles until the last retired instruction leaves WB; 0 before the first."""
        return self._base + 1 if self._count else 0

    def report(self) -> dict[str, Any]:
        """Instructions, cycles, CPI, stall cycles by cause, cache and predictor statistics.

        ``stalls["load_use"]`` and ``stalls["mul_div"]`` are the parts of ``stalls["data"]``
        spent waiting on a load/AMO or a mul/div; the other categories are disjoint and,
        with instructions + 4, add up to ``cycles`` (when at least one instruction retired).
        """
        cycles = self.cycles()
        count = self._count
        return {
            "instructions": count,
            "cycles": cycles,
            "cpi": cycles / count if count else 0.0,
            "stalls": dict(zip(_STALL_NAMES, self._stalls, strict=True)),
            "icache": self._icache.stats() if self._icache is not None else None,
            "dcache": self._dcache.stats() if self._dcache is not None else None,
            "predictor": self._predictor.stats(),
        }
