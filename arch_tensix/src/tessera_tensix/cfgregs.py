"""Configuration by register index: the 32-bit word view of ``Config`` and ``ThreadConfig``.

The model keeps configuration *fields* by their vendor names (:class:`~tessera_tensix.config.ConfigSpace`:
``core.cfg`` for the backend configuration, ``thread.tcfg`` per thread), because that is
how the units read it.  SETC16, WRCFG, RDCFG, RMWCIB, CFGSHIFTMASK and REG2FLOP address
whole registers by index instead (BackendConfiguration.md: ``Config[2][CFG_STATE_SIZE*4]``,
``ThreadConfig[3][THD_STATE_SIZE]``).  This module joins the two views with the register
map ``data/config_registers.json`` (index -> ``[name, shift, width]``, generated from
ttsim's ``tensix_regs.json`` by ``arch_tensix/tools/gen_config_registers.py``):
reading a register ORs its fields into place, writing one splits the word into fields.

Choices (also in docs/tensix.md):

* **Two banks.**  ``core.cfg`` is ``Config[0]`` — every unit reads it — and also holds the
  registers at or above ``GLOBAL_CFGREG_BASE_ADDR32``, which are one value shared by both
  banks (a write to either bank writes both).  ``Config[1]`` below that index lives in the
  ``config_banks`` unit (:class:`ConfigBanks`).  Configuration instructions use the bank
  of the issuing thread's ``CFG_STATE_ID_StateID``; :func:`config_for` gives a unit the
  fields of a thread's bank.  ``--set cfg.NAME=V`` presets bank 0 (and so both banks for
  a global field).
* **Bits no field covers** keep what was written (the functional models store whole
  32-bit words; ThreadConfig keeps 16 bits), so RDCFG reads back what WRCFG wrote.
* **Immediate effects of a write** (BackendConfiguration.md "Special cases"): a write to
  ``STATE_RESET_EN``'s register by anything but RMWCIB zeroes every register of that
  bank below ``GLOBAL_CFGREG_BASE_ADDR32`` (including itself); a write to
  ``PRNG_SEED_Seed_Val`` re-seeds the vector unit's PRNGs.  A 128-bit write is four
  writes in ascending index order.  Writes that steer the RISC-V cores (instruction-cache
  invalidation, reset PCs, branch predictors) have no effect in direct mode.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from tessera_tensix.config import ConfigSpace

MASK32 = 0xFFFF_FFFF
STATE_ID = "CFG_STATE_ID_StateID"


class RegisterMap:
    """One chip's register map: fields per index and the section constants."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.cfg_words: int = raw["cfg_words"]          # CFG_STATE_SIZE * 4
        self.tcfg_words: int = raw["tcfg_words"]        # THD_STATE_SIZE
        self.thcon_base: int = raw["thcon_base"]        # THCON_CFGREG_BASE_ADDR32
        self.global_base: int = raw["global_base"]      # GLOBAL_CFGREG_BASE_ADDR32
        self.cfg = self._fields(raw["cfg"], self.cfg_words)
        self.tcfg = self._fields(raw["tcfg"], self.tcfg_words)
        self.cfg_covered = [self._covered(f) for f in self.cfg]
        self.tcfg_covered = [self._covered(f) for f in self.tcfg]
        self.cfg_index = {name: i for i, fields in enumerate(self.cfg) for name, _s, _m in fields}
        self.tcfg_index = {name: i for i, fields in enumerate(self.tcfg) for name, _s, _m in fields}
        #: the names of the per-bank fields (registers below GLOBAL_CFGREG_BASE_ADDR32)
        self.banked_names = frozenset(name for i in range(self.global_base)
                                      for name, _s, _m in self.cfg[i])

    @staticmethod
    def _fields(section: dict[str, list], words: int) -> list[tuple[tuple[str, int, int], ...]]:
        out: list[tuple[tuple[str, int, int], ...]] = [()] * words
        for index, fields in section.items():
            out[int(index)] = tuple((name, shift, (1 << width) - 1) for name, shift, width in fields)
        return out

    @staticmethod
    def _covered(fields: tuple[tuple[str, int, int], ...]) -> int:
        mask = 0
        for _name, shift, width_mask in fields:
            mask |= width_mask << shift
        return mask


@functools.cache
def register_map(chip: str) -> RegisterMap:
    """The register map of ``chip`` (``"wh"`` or ``"bh"``)."""
    text = resources.files("tessera_tensix").joinpath("data", "config_registers.json").read_text(encoding="utf-8")
    return RegisterMap(json.loads(text)[chip])


class ConfigBanks:
    """Configuration state beyond the named fields of ``core.cfg`` and ``thread.tcfg``:
    ``Config[1]`` below the global registers, and the bits no field covers."""

    def __init__(self, core: Any = None) -> None:
        self.bank1 = ConfigSpace()
        #: ``("cfg", bank, index)`` / ``("tcfg", thread, index)`` -> bits outside every field
        self.loose: dict[tuple[str, int, int], int] = {}

    def state(self) -> dict[str, Any]:
        return {"bank1": self.bank1.state(),
                "unnamed_bits": {f"{kind}[{who}][{index}]": f"{bits:#010x}"
                                 for (kind, who, index), bits in sorted(self.loose.items()) if bits}}


def banks(core: Any) -> ConfigBanks:
    return core.unit("config_banks", ConfigBanks)


def state_id(thread: Any) -> int:
    """``ThreadConfig[CurrentThread].CFG_STATE_ID_StateID``: the Config bank the thread uses."""
    return thread.tcfg.get(STATE_ID) & 1


def config_space(core: Any, bank: int, index: int, rmap: RegisterMap) -> tuple[ConfigSpace, int]:
    """The field store of ``Config[bank][index]`` and the bank its loose bits are kept under."""
    if bank == 0 or index >= rmap.global_base:
        return core.cfg, 0
    return banks(core).bank1, 1


def read_cfg(core: Any, bank: int, index: int) -> int:
    """``Config[bank][index]`` as a 32-bit word."""
    rmap = register_map(core.chip)
    space, key = config_space(core, bank, index, rmap)
    word = banks(core).loose.get(("cfg", key, index), 0)
    fields = space.fields
    for name, shift, mask in rmap.cfg[index]:
        word |= (fields.get(name, 0) & mask) << shift
    return word & MASK32


def write_cfg(core: Any, bank: int, index: int, value: int, *, resets: bool = True) -> None:
    """``Config[bank][index] = value`` with the write's immediate effects (``resets``:
    False for RMWCIB, which does not trigger the ``STATE_RESET_EN`` reset)."""
    rmap = register_map(core.chip)
    space, key = config_space(core, bank, index, rmap)
    value &= MASK32
    fields = space.fields
    for name, shift, mask in rmap.cfg[index]:
        fields[name] = (value >> shift) & mask
    loose = value & ~rmap.cfg_covered[index]
    store = banks(core).loose
    if loose or ("cfg", key, index) in store:
        store[("cfg", key, index)] = loose
    if resets and index == rmap.cfg_index.get("STATE_RESET_EN"):
        reset_bank(core, bank)
    elif index == rmap.cfg_index.get("PRNG_SEED_Seed_Val"):
        from tessera_tensix.semantics.convert import seed_prng

        seed_prng(core.sfpu, core.cfg.get("PRNG_SEED_Seed_Val"))


def reset_bank(core: Any, bank: int) -> None:
    """Zero ``Config[bank][j]`` for every ``j < GLOBAL_CFGREG_BASE_ADDR32``."""
    rmap = register_map(core.chip)
    state = banks(core)
    if bank == 0:
        fields = core.cfg.fields
        for name in rmap.banked_names.intersection(fields):
            del fields[name]
    else:
        state.bank1.fields.clear()
    for k in [k for k in state.loose if k[0] == "cfg" and k[1] == bank and k[2] < rmap.global_base]:
        del state.loose[k]


def read_tcfg(thread: Any, index: int) -> int:
    """``ThreadConfig[thread][index].Value`` (16 bits)."""
    rmap = register_map(thread.core.chip)
    word = banks(thread.core).loose.get(("tcfg", thread.tid, index), 0)
    fields = thread.tcfg.fields
    for name, shift, mask in rmap.tcfg[index]:
        word |= (fields.get(name, 0) & mask) << shift
    return word & 0xFFFF


def write_tcfg(thread: Any, index: int, value: int) -> None:
    """``ThreadConfig[thread][index].Value = value`` (16 bits)."""
    rmap = register_map(thread.core.chip)
    value &= 0xFFFF
    fields = thread.tcfg.fields
    for name, shift, mask in rmap.tcfg[index]:
        fields[name] = (value >> shift) & mask
    loose = value & ~rmap.tcfg_covered[index]
    store = banks(thread.core).loose
    if loose or ("tcfg", thread.tid, index) in store:
        store[("tcfg", thread.tid, index)] = loose


class BankView:
    """Read-only fields of ``Config[1]`` as a unit sees them: the bank's own registers,
    and the global registers shared with bank 0."""

    def __init__(self, core: Any) -> None:
        self.core = core

    @property
    def fields(self) -> dict[str, int]:
        rmap = register_map(self.core.chip)
        shared = {k: v for k, v in self.core.cfg.fields.items() if k not in rmap.banked_names}
        return {**shared, **banks(self.core).bank1.fields}

    def get(self, name: str) -> int:
        if name in register_map(self.core.chip).banked_names:
            return banks(self.core).bank1.get(name)
        return self.core.cfg.get(name)


def config_for(thread: Any) -> Any:
    """The backend configuration fields ``thread`` sees: ``core.cfg`` when its
    ``CFG_STATE_ID_StateID`` is 0, else a :class:`BankView` of bank 1 (``.get(name)``,
    ``.fields``)."""
    if state_id(thread) == 0:
        return thread.core.cfg
    return BankView(thread.core)
