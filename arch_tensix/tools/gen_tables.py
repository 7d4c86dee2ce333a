#!/usr/bin/env python3
"""Generate the Tensix encoding tables from the reference data (run by hand, output committed).

    python arch_tensix/tools/gen_tables.py [--shared DIR] [--check]

Reads, for each chip (``bh`` = Blackhole, ``wh`` = Wormhole B0):

* ``shared/reference/tt-llk/<chip>/assembly.yaml`` — instruction names, ``op_binary``,
  ``ex_resource`` and the argument names with their start bits (the order of the
  vendor's ``TT_OP_<NAME>(…)`` macros is the reverse of this list);
* ``shared/reference/ttsim/<chip>/tensix_isa.json`` — the exact ``hi:lo`` range of every
  field, and the ``unsupported`` flag of instructions the vendor simulator does not model.

and writes ``arch_tensix/src/tessera_tensix/isa/_<chip>.py``: pure data (no imports) that
``tessera_tensix.isa`` turns into ``Field`` and ``Encoding`` records.  The package never
reads ``shared/`` at run time.  ``--check`` regenerates in memory and fails if a
committed module differs (the test suite does the same).

Rules (each decision is also listed in docs/tensix.md):

* **Ranges.**  ttsim's json wins over the widths implied by assembly.yaml's start bits.
  A few json entries are not field ranges at all (the frontend instructions MOP,
  MOP_CFG and REPLAY list one bit per field; BH STALLWAIT stops at bit 11 although the
  condition mask has 13 bits C0–C12): :data:`OVERRIDES` replaces them with the layouts
  of spec/tensix.md §5.2, and adds fields the spec documents but the json omits
  (SFPLUTFP32's Mod1 mirror [19:16], Wormhole ZEROACC's Revert [18]).  Instructions the json marks ``unsupported`` have
  no ranges there: their fields come from :data:`OVERRIDES` when the spec gives a layout
  (the seed-000 scalar-unit instructions, FLUSHDMA), else from assembly.yaml (a field
  runs up to the next start bit, the last one to bit 23).
* **Names.**  Field records are architecture-wide, so a json field name that occurs with
  different ranges keeps its plain name for the range most instructions use and gets
  ``_<hi>_<lo>`` elsewhere (``imm12_math`` = [23:12], ``imm12_math_12_12`` in SFPSETCC).
  The VB register of SFPAND/SFPOR/SFPARECIP, which the json calls ``imm12_math``
  [15:12], is named ``lreg_src_b`` like SFPMAD's VB (:data:`RENAMES`).  Instructions
  without json fields get assembly.yaml's names in snake_case.
* **Reserved bits** are the bits of [23:0] no field covers; they must be zero.
* **Vendor syntax.**  Mnemonics are spelled as Tenstorrent's disassembler prints them:
  lower case without underscores, ``tt`` in front unless the name starts with ``SFP``
  (``ttsetc16``, ``ttmopcfg``, ``sfpload``, ``sfpstochrnd``).  Operands of ``tt``
  instructions come in descending bit order (the order of ``TT_OP_<NAME>``); SFPU
  instructions take the order of the vendor assembler (:data:`SFPU_ORDER`, e.g.
  ``sfpmad VD,VA,VB,VC,Mod1``, ``sfpstore Imm10,VD,Mod0,AddrMod``).  Fields the vendor
  syntax does not show (BH SFPAND's VB and Mod1, SFPSETCC's VD …; of ``tt``
  instructions those in :data:`SYNTAX_EXTRAS`, Wormhole ZEROACC's Revert) follow as *extra*
  operands that the disassembler leaves out while they hold their default.  A vendor
  operand over reserved bits (SFPGT/SFPLE's 12-bit immediate) is a *ghost*: always
  printed as 0, accepted only as 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
PACKAGE = HERE.parents[1] / "src" / "tessera_tensix"
DEFAULT_SHARED = HERE.parents[3] / "shared"

CHIPS = {"bh": ("blackhole", "Blackhole"), "wh": ("wormhole_b0", "Wormhole B0")}

#: Per chip: instruction -> {field: "hi:lo"} replacing (or adding to) the json ranges.
#: A value of None removes a field.  Reasons in the comments (spec = shared/spec).
OVERRIDES: dict[str, dict[str, dict[str, str | None]]] = {
    "common": {
        # tensix.md §5.2 "MOP 0x01: Template[23] Count1[22:16] MaskLo[15:0]"; the json lists
        # single bits (ttsim handles the frontend instructions outside its field decoder).
        # Names the chip's json does not use are skipped; "+name" adds a field.
        "MOP": {"mop_type": "23:23", "loop_count": "22:16", "zmask_lo16_or_loop_count": "15:0",
                "zmask_lo16": "15:0"},
        "MOP_CFG": {"zmask_hi16": "15:0"},                    # §5.2 MaskHi[15:0]
        # §5.2 "REPLAY 0x04: Index[18:14] Count[9:4] Exec[1] Load[0]"
        "REPLAY": {"start_idx": "18:14", "len": "9:4", "execute_while_loading": "1:1",
                   "load_mode": "0:0"},
        # json: unsupported (no ranges).  Seed 000 + tensix.md 5.1 #2: SUBDMAREG is laid out
        # like ADDDMAREG; BITWOP/SHIFT/CMPDMAREG have Mode [20:18] ([22:21] unused).
        "SUBDMAREG": {"op_a_reg_index": "5:0", "op_b_reg_index": "11:6",
                      "result_reg_index": "17:12", "op_b_is_const": "23:23"},
        "BITWOPDMAREG": {"op_a_reg_index": "5:0", "op_b_reg_index": "11:6",
                         "result_reg_index": "17:12", "op_sel": "20:18", "op_b_is_const": "23:23"},
        "SHIFTDMAREG": {"op_a_reg_index": "5:0", "op_b_reg_index": "11:6",
                        "result_reg_index": "17:12", "op_sel": "20:18", "op_b_is_const": "23:23"},
        "CMPDMAREG": {"op_a_reg_index": "5:0", "op_b_reg_index": "11:6",
                      "result_reg_index": "17:12", "op_sel": "20:18", "op_b_is_const": "23:23"},
        "FLUSHDMA": {"flush_spec": "3:0"},                    # seed 000: ConditionMask [3:0]
        # tensix-sfpu.md §1 note: Mod1Mirror [19:16] (used by the stall logic only)
        "SFPLUTFP32": {"+mod1_mirror": "19:16"},
        # SETADCXY.md … ADDRCRZW.md (and their encoding diagrams): ThreadOverride [19:18]
        # picks the ADC (0: the current thread's, n: thread n-1's); the json leaves it out.
        **{name: {"+thread_override": "19:18"}
           for name in ("SETADCXY", "INCADCXY", "ADDRCRXY", "SETADCZW", "INCADCZW", "ADDRCRZW")},
    },
    "bh": {
        # tensix.md 5.1 #14 / §5.2: BH ConditionMask is [12:0] (C0–C12); the json stops at 11.
        "STALLWAIT": {"wait_res": "12:0"},
        # tt-llk's UNPACR_NOP SETREG form (no Blackhole page): AddrSel = [22]:[15]
        "UNPACR_NOP": {"+setreg_addr_sel_hi": "22:22", "+setreg_addr_sel_lo": "15:15"},
    },
    "wh": {
        # WormholeB0 ZEROACC.md: bit 18 is Revert (the json leaves it out, so it would be a
        # reserved bit); modes 1-3 with it set are undefined behaviour, mode 0 ignores it.
        "ZEROACC": {"+revert": "18:18"},
        # UNPACR_NOP_SETREG.md / UNPACR_NOP_OverlayClear.md: AddrSel [22], AddrMid or the
        # stream [21:16], Value11 or ClearCount [14:4] (its bit 4 is no_op's [4]; the json has
        # only [23] and [4:0])
        "UNPACR_NOP": {"+addr_sel": "22:22", "+addr_mid": "21:16", "+value11_hi": "14:5"},
    },
}

#: Fields of a ``tt`` instruction that the vendor's syntax has no operand for (WormholeB0
#: ZEROACC.md: "There is no syntax to specify Revert"): they follow the vendor operands as
#: extras (default 0, left out by the disassembler while 0), and no TT_OP macro argument
#: sets them.
SYNTAX_EXTRAS: dict[str, tuple[str, ...]] = {
    "ZEROACC": ("revert",),
    # the vendor's UNPACR_NOP syntax folds these into one operand (UNPACR_NOP_SETREG.md)
    "UNPACR_NOP": ("addr_sel", "addr_mid", "value11_hi", "setreg_addr_sel_hi", "setreg_addr_sel_lo"),
    # "There is no syntax to specify ThreadOverride" (SETADCXY.md and the five others)
    **{name: ("thread_override",)
       for name in ("SETADCXY", "INCADCXY", "ADDRCRXY", "SETADCZW", "INCADCZW", "ADDRCRZW")},
}

#: (instruction, json name, hi:lo) -> field name: fields named by their role, not the json's.
RENAMES = {
    ("SFPAND", "imm12_math", "15:12"): "lreg_src_b",
    ("SFPOR", "imm12_math", "15:12"): "lreg_src_b",
    ("SFPARECIP", "imm12_math", "15:12"): "lreg_src_b",
}

#: json field names (after renaming) that hold an LReg index.
LREG_FIELDS = {"lreg_ind", "lreg_dest", "lreg_c", "lreg_src_a", "lreg_src_b", "lreg_src_c"}

#: How the vendor disassembler prints a field of an SFPU instruction (default: decimal).
FORMATS = {"imm12_math": "hex3", "imm16": "s16", "imm16_math": "s16"}

#: Operand order of the vendor assembler/disassembler for SFPU instructions (json names).
#: Fields of the json not listed here are appended as extras (see EXTRA_DEFAULTS).
SFPU_ORDER: dict[str, tuple[str, ...]] = {
    "SFPLOAD": ("lreg_ind", "dest_reg_addr", "instr_mod0", "sfpu_addr_mode"),
    "SFPLOADMACRO": ("lreg_ind", "dest_reg_addr", "instr_mod0", "sfpu_addr_mode"),
    "SFPLOADI": ("lreg_ind", "imm16", "instr_mod0"),
    "SFPSTORE": ("dest_reg_addr", "lreg_ind", "instr_mod0", "sfpu_addr_mode"),
    "SFPLUT": ("lreg_ind", "instr_mod0"),
    "SFPMULI": ("lreg_dest", "imm16_math", "instr_mod1"),
    "SFPADDI": ("lreg_dest", "imm16_math", "instr_mod1"),
    "SFPCONFIG": ("config_dest", "imm16_math", "instr_mod1"),
    "SFPDIVP2": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),
    "SFPIADD": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),
    "SFPSHFT": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),
    "SFPSETEXP": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),
    "SFPSETMAN": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),
    "SFPSETSGN": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),
    "SFPSHFT2": ("lreg_dest", "lreg_src_c", "imm12_math", "instr_mod1"),
    "SFPEXEXP": ("lreg_dest", "lreg_c", "instr_mod1"),
    "SFPEXMAN": ("lreg_dest", "lreg_c", "instr_mod1"),
    "SFPABS": ("lreg_dest", "lreg_c", "instr_mod1"),
    "SFPLZ": ("lreg_dest", "lreg_c", "instr_mod1"),
    "SFPMOV": ("lreg_dest", "lreg_c", "instr_mod1"),
    "SFPCAST": ("lreg_dest", "lreg_src_c", "instr_mod1"),
    "SFPSWAP": ("lreg_dest", "lreg_src_c", "instr_mod1"),
    "SFPGT": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),     # imm12: reserved bits
    "SFPLE": ("lreg_dest", "lreg_c", "imm12_math", "instr_mod1"),
    "SFPARECIP": ("lreg_dest", "lreg_c", "instr_mod1"),
    "SFPAND": ("lreg_dest", "lreg_c"),
    "SFPOR": ("lreg_dest", "lreg_c"),
    "SFPNOT": ("lreg_dest", "lreg_c"),
    "SFPXOR": ("lreg_dest", "lreg_c"),
    "SFPMAD": ("lreg_dest", "lreg_src_a", "lreg_src_b", "lreg_src_c", "instr_mod1"),
    "SFPADD": ("lreg_dest", "lreg_src_a", "lreg_src_b", "lreg_src_c", "instr_mod1"),
    "SFPMUL": ("lreg_dest", "lreg_src_a", "lreg_src_b", "lreg_src_c", "instr_mod1"),
    "SFPMUL24": ("lreg_dest", "lreg_src_a", "lreg_src_b", "instr_mod1"),
    "SFP_STOCH_RND": ("lreg_dest", "lreg_src_b", "lreg_src_c", "instr_mod1", "rnd_mode", "imm8_math"),
    "SFPENCC": ("imm12_math", "instr_mod1"),
    "SFPSETCC": ("lreg_c", "imm12_math", "instr_mod1"),
    "SFPPUSHC": ("instr_mod1",),
    "SFPPOPC": ("instr_mod1",),
    "SFPCOMPC": (),
    "SFPTRANSP": (),
    "SFPNOP": (),
    "SFPLUTFP32": ("lreg_dest", "instr_mod1"),
}

#: Default of an extra operand where it is not 0: the vendor assembler puts LReg 9 (zero)
#: into SFPMUL24's VC (sfpi-binutils: "sfpmul24 pays attention to the op_c operand").
EXTRA_DEFAULTS = {("SFPMUL24", "lreg_src_c"): 9}


# ----------------------------------------------------------------------------- reading


def read_assembly_yaml(path: Path) -> dict[str, dict]:
    """The subset of assembly.yaml we need, without a YAML library.

    Top-level keys are instructions; of each we keep ``op_binary``, ``ex_resource``,
    ``instrn_type`` and the ``arguments`` list (``name``, ``start_bit``).  Block scalars
    (``description: >``) are skipped by indentation.
    """
    out: dict[str, dict] = {}
    current: dict | None = None
    skip_deeper_than: int | None = None
    in_args: int | None = None
    anchors: dict[str, list] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.rstrip()
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if skip_deeper_than is not None:
            if indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        if indent == 0:
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*):\s*(#.*)?", line)
            if m is None:
                raise ValueError(f"{path}: unexpected top-level line {line!r}")
            current = out.setdefault(m.group(1), {"arguments": []})
            in_args = None
            continue
        if current is None:
            continue
        item = stripped.startswith("- ")
        body = stripped[2:].lstrip() if item else stripped
        m = re.match(r"([A-Za-z_][A-Za-z0-9_ ]*?)\s*:\s*(.*)$", body)
        if m is None:
            continue
        key, value = m.group(1), m.group(2).split(" #")[0].strip()
        if value in (">", "|", ">-", "|-") or value.startswith(("> ", "| ")):
            skip_deeper_than = indent + (2 if item else 0)
            if in_args is not None and indent <= in_args:
                in_args = None
            continue
        if in_args is not None and indent <= in_args:
            in_args = None
        if key == "arguments" and not item:
            if value.startswith("*"):                       # an alias of an earlier list
                current["arguments"] = [dict(a) for a in anchors[value[1:]]]
                continue
            if value.startswith("&"):                       # a list others refer to
                anchors[value[1:]] = current["arguments"]
            in_args = indent
            continue
        if in_args is not None:
            if item and key == "name":
                current["arguments"].append({"name": value.strip("'\"")})
            elif key == "start_bit" and current["arguments"]:
                current["arguments"][-1]["start_bit"] = int(value, 0)
            continue
        if key in ("op_binary", "ex_resource", "instrn_type"):
            current[key] = int(value, 0) if key == "op_binary" else value
    return out


def snake(name: str) -> str:
    """``OpARegIndex`` -> ``op_a_reg_index``, ``reset srca gate control`` -> ``reset_srca_gate_control``."""
    name = re.sub(r"[^A-Za-z0-9]+", "_", name.strip())
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    name = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return re.sub(r"_+", "_", name).strip("_").lower()


def mnemonic_of(name: str) -> str:
    """The vendor disassembler's spelling: ``SFP_STOCH_RND`` -> ``sfpstochrnd``, ``MOP_CFG`` -> ``ttmopcfg``."""
    flat = name.replace("_", "").lower()
    return flat if flat.startswith("sfp") else "tt" + flat


def _range(text: str) -> tuple[int, int]:
    hi, lo = (int(x) for x in text.split(":"))
    return hi, lo


def _bits(hi: int, lo: int) -> int:
    return ((1 << (hi - lo + 1)) - 1) << lo


# ----------------------------------------------------------------------------- building


def build(shared: Path, chip: str) -> dict:
    """Everything the generated module holds for ``chip``, plus a report of decisions."""
    ydir, _title = CHIPS[chip]
    ypath = shared / "reference" / "tt-llk" / ydir / "assembly.yaml"
    jpath = shared / "reference" / "ttsim" / chip / "tensix_isa.json"
    yml = read_assembly_yaml(ypath)
    js = json.loads(jpath.read_text(encoding="utf-8"))
    if set(yml) != set(js):
        raise SystemExit(f"{chip}: assembly.yaml and tensix_isa.json name different instructions: "
                         f"{sorted(set(yml) ^ set(js))}")
    overrides = {**OVERRIDES["common"]}
    for name, fields in OVERRIDES[chip].items():
        overrides[name] = {**overrides.get(name, {}), **fields}
    notes: list[str] = []
    raw: dict[str, dict] = {}
    for name, y in yml.items():
        j = js[name]
        opcode = y["op_binary"]
        if j["opcode"] != opcode:
            raise SystemExit(f"{chip}: {name}: opcode {opcode:#x} (yaml) != {j['opcode']:#x} (json)")
        yargs = [(snake(a["name"]), a["start_bit"]) for a in y["arguments"]]
        starts = sorted(s for _, s in yargs) + [24]
        yaml_range = {n: (starts[starts.index(s) + 1] - 1, s) for n, s in yargs}
        fields: dict[str, tuple[int, int]] = {}
        if "args" in j:
            fields = {k: _range(v) for k, v in j["args"].items()}
            source = "json"
        else:
            fields = dict(yaml_range)
            source = "yaml"
        ov = overrides.get(name, {})
        if ov and source == "yaml":          # the spec gives the whole layout
            fields, source = {}, "spec"
        applied = []
        for fname, rng in ov.items():
            add = fname.startswith("+")
            fname = fname.lstrip("+")
            if rng is None:
                if fields.pop(fname, None) is not None:
                    applied.append(f"-{fname}")
            elif add or source == "spec" or fname in fields:
                fields[fname] = _range(rng)
                applied.append(f"{fname}[{rng}]")
        if applied:
            notes.append(f"{name}: spec layout {' '.join(applied)}")
        used = 0
        for fname, (hi, lo) in fields.items():
            m = _bits(hi, lo)
            if m & used or hi > 23 or lo < 0:
                raise SystemExit(f"{chip}: {name}.{fname} [{hi}:{lo}] overlaps or leaves [23:0]")
            used |= m
        renamed = {}
        for fname, (hi, lo) in fields.items():
            renamed[RENAMES.get((name, fname, f"{hi}:{lo}"), fname)] = (hi, lo)
        raw[name] = {
            "opcode": opcode,
            "resource": y.get("ex_resource", ""),
            "type": y.get("instrn_type", ""),
            "fields": renamed,
            "reserved": 0xFFFFFF & ~used,
            "yaml": yargs,
            "yaml_range": yaml_range,
            "ttsim_unsupported": bool(j.get("unsupported")),
            "source": source,
        }
    # --- architecture-wide field names
    uses: dict[str, Counter] = {}
    for r in raw.values():
        for fname, rng in r["fields"].items():
            uses.setdefault(fname, Counter())[rng] += 1
    fieldname: dict[tuple[str, tuple[int, int]], str] = {}
    for fname, counter in uses.items():
        plain = max(counter, key=lambda rng: (counter[rng], rng[0] - rng[1], rng[0]))
        for rng in counter:
            fieldname[(fname, rng)] = fname if rng == plain else f"{fname}_{rng[0]}_{rng[1]}"
    field_table: dict[str, tuple[int, int, str, str]] = {}
    instructions = []
    for name in sorted(raw, key=lambda n: raw[n]["opcode"]):
        r = raw[name]
        fmap = {f: fieldname[(f, rng)] for f, rng in r["fields"].items()}
        for f, rng in r["fields"].items():
            full = fmap[f]
            kind = "lreg" if f in LREG_FIELDS else "uint"
            fmt = "L" if kind == "lreg" else (FORMATS.get(f, "dec") if name.startswith("SFP") else "dec")
            field_table[full] = (rng[0], rng[1], kind, fmt)
        by_lo = sorted(r["fields"], key=lambda f: -r["fields"][f][1])
        if name.startswith("SFP"):
            order = list(SFPU_ORDER[name])
            ghosts = tuple((i, f, FORMATS.get(f, "dec")) for i, f in enumerate(order) if f not in r["fields"])
            if ghosts:
                notes.append(f"{name}: vendor operand(s) {[g[1] for g in ghosts]} cover reserved bits: "
                             "always 0")
                order = [f for f in order if f in r["fields"]]
            extras = [f for f in by_lo if f not in order]
        else:
            hidden = SYNTAX_EXTRAS.get(name, ())
            order, ghosts = [f for f in by_lo if f not in hidden], ()
            extras = [f for f in by_lo if f in hidden]
        # the uppercase / TT_OP macro form: assembly.yaml's arguments, highest start bit first
        macro = []
        for yname, start in sorted(r["yaml"], key=lambda a: -a[1]):
            match = [f for f, (hi, lo) in r["fields"].items() if lo == start]
            if match:
                macro.append(fmap[match[0]])
            else:
                hi, lo = r["yaml_range"][yname]
                macro.append(f"-{yname}:{hi}:{lo}")   # a yaml argument over reserved bits: must be 0
        instructions.append({
            "name": name,
            "opcode": r["opcode"],
            "mnemonic": mnemonic_of(name),
            "resource": r["resource"],
            "operands": tuple(fmap[f] for f in order),
            "extras": tuple((fmap[f], EXTRA_DEFAULTS.get((name, f), 0)) for f in extras),
            "macro": tuple(macro),
            "ghosts": ghosts,
            "reserved": r["reserved"],
            "ttsim_unsupported": r["ttsim_unsupported"],
            "source": r["source"],
        })
    return {"fields": dict(sorted(field_table.items())), "instructions": instructions,
            "notes": notes, "inputs": {"assembly.yaml": ypath, "tensix_isa.json": jpath}}


# ----------------------------------------------------------------------------- output


def render(chip: str, table: dict, shared: Path) -> str:
    ydir, title = CHIPS[chip]
    digest = {k: hashlib.sha256(p.read_bytes()).hexdigest()[:16] for k, p in table["inputs"].items()}
    out = [
        f'"""{title} Tensix encoding table.  GENERATED by arch_tensix/tools/gen_tables.py: do not edit.',
        "",
        "Derived from (Apache-2.0; licence texts in tessera_tensix/data/LICENSE.tt-llk,",
        "LICENSE.ttsim and NOTICE.ttsim):",
        f"  tenstorrent/tt-llk tt_llk_{ydir}/instructions/assembly.yaml "
        f"(sha256 {digest['assembly.yaml']}…): names, opcodes, argument order;",
        f"  tenstorrent/ttsim data/{chip}/tensix_isa.json (sha256 {digest['tensix_isa.json']}…): "
        "field ranges, unsupported flags;",
        "  shared/spec/tensix.md §5 and tensix-sfpu.md §1 for the overrides listed in the generator.",
        '"""',
        "",
        f'CHIP = "{chip}"',
        "",
        "#: field name -> (hi, lo, kind, display): kind 'lreg' (an LReg index) or 'uint';",
        "#: display 'L' (L0..L15), 'dec', 'hex3' (0x%03X) or 's16' (signed 16-bit decimal).",
        "FIELDS = {",
    ]
    for name, (hi, lo, kind, fmt) in table["fields"].items():
        out.append(f'    "{name}": ({hi}, {lo}, "{kind}", "{fmt}"),')
    out += [
        "}",
        "",
        "#: One entry per instruction, by opcode.  operands: vendor syntax order; extras: further",
        "#: fields (name, default) the vendor syntax omits; macro: TT_OP_<NAME> argument order",
        "#: ('-name:hi:lo' = an assembly.yaml argument over reserved bits, must be 0); ghosts:",
        "#: (position, name, display) of vendor operands over reserved bits (always written 0);",
        "#: reserved: bits of [23:0] that must be zero; source: where the field ranges come from.",
        "INSTRUCTIONS = (",
    ]
    for ins in table["instructions"]:
        out.append(
            f'    ("{ins["name"]}", {ins["opcode"]:#04x}, "{ins["mnemonic"]}", "{ins["resource"]}", '
            f'{ins["operands"]!r}, {ins["extras"]!r}, {ins["macro"]!r}, {ins["ghosts"]!r}, {ins["reserved"]:#08x}, '
            f'{ins["ttsim_unsupported"]!r}, "{ins["source"]}"),')
    out += [")", ""]
    return "\n".join(out)


def target(chip: str) -> Path:
    return PACKAGE / "isa" / f"_{chip}.py"


LICENCES = {"LICENSE.tt-llk": ("tt-llk", "LICENSE"), "LICENSE.ttsim": ("ttsim", "LICENSE"),
            "NOTICE.ttsim": ("ttsim", "NOTICE")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="the shared/ directory")
    ap.add_argument("--check", action="store_true", help="fail if a committed table is stale")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the generator's notes")
    args = ap.parse_args(argv)
    stale = []
    for chip in CHIPS:
        table = build(args.shared, chip)
        text = render(chip, table, args.shared)
        path = target(chip)
        if args.verbose:
            for note in table["notes"]:
                print(f"{chip}: {note}")
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path)
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path} ({len(table['instructions'])} instructions, {len(table['fields'])} fields)")
    if not args.check:
        data = PACKAGE / "data"
        data.mkdir(exist_ok=True)
        for dest, (sub, src) in LICENCES.items():
            (data / dest).write_bytes((args.shared / "reference" / sub / src).read_bytes())
    if stale:
        print("stale: " + ", ".join(str(p) for p in stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
