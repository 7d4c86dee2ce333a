#!/usr/bin/env python3
"""Generate ``tessera_tensix/data/config_registers.json`` from the vendor's register map.

    python arch_tensix/tools/gen_config_registers.py [--shared DIR] [--check]

SETC16, WRCFG, RDCFG, RMWCIB, CFGSHIFTMASK and REG2FLOP address the configuration by
32-bit register index (the ``Name_ADDR32`` constants of the vendor's ``cfg_defines.h``);
the model keeps configuration fields by name.  This script writes, per chip, which
fields each index holds, from ``shared/reference/ttsim/<chip>/tensix_regs.json``
(tenstorrent/ttsim, Apache-2.0): section ``thread_cfg`` (ThreadConfig, ``tcfg``) and
``cfg`` (Config, ``cfg``), each field as ``[name, shift, width]``.

It also derives the four section constants the ISA pages use, from the same map:

* ``cfg_words`` = ``CFG_STATE_SIZE * 4``: one past the highest Config index, rounded up
  to a multiple of 4 (``CFG_STATE_SIZE`` counts 128-bit groups);
* ``tcfg_words`` = ``THD_STATE_SIZE``: one past the highest ThreadConfig index;
* ``thcon_base`` = ``THCON_CFGREG_BASE_ADDR32``: the lowest index of a ``THCON_`` field;
* ``global_base`` = ``GLOBAL_CFGREG_BASE_ADDR32``: the lowest index above the THCON
  section holding a field whose name does not start with ``THCON_``.

(The values agree with tt-metal's ``cfg_defines.h``: Wormhole 47·4 / 57 / 52 / 152,
Blackhole 56·4 / 68 / 64 / 180; see ``data/README.config-registers.md``.)  The package
never reads ``shared/`` at run time.  ``--check`` regenerates in memory and fails if the
committed file differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve()
OUT = HERE.parents[1] / "src" / "tessera_tensix" / "data" / "config_registers.json"
DEFAULT_SHARED = HERE.parents[3] / "shared"
CHIPS = ("bh", "wh")


def _section(regs: dict) -> dict[str, list[list]]:
    """``{index: [[name, shift, width], ...]}`` sorted by index then shift."""
    out = {}
    for index in sorted(regs, key=int):
        fields = sorted(regs[index], key=lambda f: f["shift"])
        used = 0
        for f in fields:
            mask = ((1 << f["size"]) - 1) << f["shift"]
            if mask & used or f["shift"] + f["size"] > 32:
                raise SystemExit(f"register {index}: field {f['name']} overlaps or leaves 32 bits")
            used |= mask
        out[str(int(index))] = [[f["name"], f["shift"], f["size"]] for f in fields]
    return out


def build_chip(path: Path) -> dict:
    regs = json.loads(path.read_text(encoding="utf-8"))
    cfg, tcfg = _section(regs["cfg"]), _section(regs["thread_cfg"])
    cfg_index = sorted(int(i) for i in cfg)
    thcon = [i for i in cfg_index if all(f[0].startswith("THCON_") for f in cfg[str(i)])]
    thcon_base = min(thcon)
    global_base = min(i for i in cfg_index
                      if i > thcon_base and not any(f[0].startswith("THCON_") for f in cfg[str(i)]))
    if any(i > global_base or i < thcon_base for i in thcon):
        raise SystemExit(f"{path}: THCON fields outside [{thcon_base}, {global_base})")
    return {
        "cfg_words": (max(cfg_index) + 1 + 3) // 4 * 4,
        "tcfg_words": max(int(i) for i in tcfg) + 1,
        "thcon_base": thcon_base,
        "global_base": global_base,
        "cfg": cfg,
        "tcfg": tcfg,
    }


def render(shared: Path) -> str:
    data = {"_source": "tenstorrent/ttsim @ 56694c8a4673 data/{bh,wh}/tensix_regs.json "
                       "(Apache-2.0), by arch_tensix/tools/gen_config_registers.py"}
    for chip in CHIPS:
        data[chip] = build_chip(shared / "reference" / "ttsim" / chip / "tensix_regs.json")
    return json.dumps(data, separators=(",", ":"), sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared/ directory")
    ap.add_argument("--check", action="store_true", help="fail if the committed file is stale")
    args = ap.parse_args(argv)
    text = render(args.shared)
    if args.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run python arch_tensix/tools/gen_config_registers.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
