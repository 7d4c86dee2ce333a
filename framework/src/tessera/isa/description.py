"""Architecture description: frozen records that *are* the architecture.

An :class:`Architecture` is data.  Its encoding table (one :class:`Encoding` row per
instruction form: mnemonic, match/mask, fields, operand syntax, semantic function,
timing class) is the single source from which Tessera derives the decoder, the
encoder and assembler, the disassembler and the conformance round trips.  Adding an
instruction means adding one row and one semantic function, nowhere else.

Semantic functions have the signature ``semantics(agent, ins) -> int | None``: they
read and write the agent's state and return the next PC for a taken control
transfer, or ``None`` to fall through to ``ins.next``.  They contain no timing, no
logging and no hook calls; traps, halts and waits are raised as
:mod:`tessera.control` signals.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from tessera.errors import ConfigError, EncodeError, LoadError
from tessera.settings import Setting, SettingFamily, Settings
from tessera.types import Endian

#: Attributes the decoder gives every :class:`~tessera.isa.instruction.Instruction`.
DECODE_ATTRIBUTES = ("encoding", "mnemonic", "word", "address", "size", "next", "span", "operands",
                     "run", "cycles", "trap")
#: Attributes the engine sets when it fills a decode-cache entry (tessera.engine.fill).
ENGINE_ATTRIBUTES = ("semantic", "installed", "blockable", "observers", "observer_calls")
#: Attribute names of an instruction that a field may not use: a field is stored as an
#: attribute of the same name, so ``Field("span")`` would silently replace the engine's
#: value.  Derived from the two tuples above (tests/isa/test_reserved_names.py checks
#: that every attribute the core sets after decoding is here), plus names the
#: architecture and encoding objects use.
RESERVED_FIELD_NAMES = frozenset(
    {*DECODE_ATTRIBUTES, *ENGINE_ATTRIBUTES, "arch", "semantics", "timing"}
)

FIELD_KINDS = ("imm", "uimm", "reg", "pcrel", "enum")

#: The control-flow flags of an :class:`Encoding`: the fast engine ends a block after a
#: row carrying any of them.  ``branch``: a conditional transfer, the semantic function
#: returns the target PC when taken; ``jump``: an unconditional transfer (jump, call,
#: return), it returns the target PC; ``trap``: enters or leaves a trap handler (a
#: system call, a breakpoint, a trap return) — by raising a signal or returning a PC;
#: ``halt``: may stop the agent (:class:`~tessera.control.Halt`); ``wait``: may block it
#: (:class:`~tessera.control.WaitFor`).  Other flags are free-form tags.
CONTROL_FLAGS = frozenset({"branch", "jump", "trap", "halt", "wait"})
#: The control flags that allow a semantic function to return a PC.  A row whose function
#: may return one without any of these, or that carries ``branch``/``jump`` while its
#: functions never return one, disagrees with its code
#: (:func:`tessera.semantics.flag_disagreements`).
TRANSFER_FLAGS = frozenset({"branch", "jump", "trap"})
#: Values of :attr:`Architecture.control_flow`.
CONTROL_FLOW_SOURCES = ("code", "flags")

#: One register of the executing agent, as :attr:`Architecture.register_uses` names it:
#: ``(register file name, index)``.
RegisterRef = tuple[str, int]
#: What :attr:`Architecture.register_uses` answers for one decoded instruction: the
#: registers it reads, then those it writes.
RegisterUses = tuple[tuple[RegisterRef, ...], tuple[RegisterRef, ...]]


def _pieces(value: Any) -> tuple[tuple[int, int], ...]:
    """Accept ``"31:25,11:7"``, ``(31, 25)``, or ``((31, 25), (11, 7))``."""
    if isinstance(value, str):
        out = []
        for part in value.split(","):
            part = part.strip()
            if ":" in part:
                hi, lo = part.split(":")
                out.append((int(hi), int(lo)))
            else:
                out.append((int(part), int(part)))
        return tuple(out)
    if value and isinstance(value[0], int):
        return ((int(value[0]), int(value[1])),)
    return tuple((int(hi), int(lo)) for hi, lo in value)


def _variants(value: Any) -> tuple[tuple[str, Any], ...]:
    """``{"x0": nop}`` or pairs → a tuple of pairs (hashable, so rows stay hashable)."""
    pairs = tuple(value.items()) if isinstance(value, Mapping) else tuple(tuple(p) for p in value)
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ConfigError(f"variant names repeat: {names}")
    for name, fn in pairs:
        if not isinstance(name, str) or not callable(fn):
            raise ConfigError(f"variant {name!r}: needs a name and a callable, got {fn!r}")
    return pairs


def _names(value: Iterable[str]) -> frozenset[str]:
    """Accept any iterable of names (a set literal, a list) as a ``frozenset[str]``.

    ``converter=frozenset`` would do the same at run time, but type checkers see the
    generic ``frozenset`` constructor and refuse a ``set[str]`` argument."""
    return frozenset(value)


def _settings(value: Any) -> Settings | None:
    """Accept a :class:`Settings`, or a sequence of :class:`Setting` / :class:`SettingFamily`."""
    if value is None or isinstance(value, Settings):
        return value
    items = list(value)
    for item in items:
        if not isinstance(item, (Setting, SettingFamily)):
            raise ConfigError(f"settings: {item!r} is neither a Setting nor a SettingFamily")
    return Settings(tuple(i for i in items if isinstance(i, Setting)),
                    tuple(i for i in items if isinstance(i, SettingFamily)))


def _resolve_class(target: type | str, what: str) -> type:
    """``target`` itself, or the class ``"module.path:Class"`` names (imported now)."""
    if isinstance(target, type):
        return target
    module, _, name = target.partition(":")
    try:
        import importlib

        found = getattr(importlib.import_module(module.strip()), name.strip())
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(f"{what} {target!r} cannot be imported: {exc}") from exc
    if not isinstance(found, type):
        raise ConfigError(f"{what} {target!r} is not a class")
    return found


@attrs.frozen
class Field:
    """A named bit field of an instruction word and how to read it as an operand.

    ``bits`` lists the pieces most significant first, so RISC-V's scattered branch
    offset is ``"31,7,30:25,11:8"`` with ``scale=1``.  ``kind`` says how the operand
    is written: ``reg`` (a register of ``regfile``), ``imm`` (signed when ``signed``),
    ``uimm``, ``pcrel`` (a signed offset from the instruction address, written as a
    target address or label) or ``enum`` (a name from ``names``).  A field with a
    ``default`` may be left out in assembly where the syntax marks it optional
    (``{mask?}``) or uses it as a mnemonic suffix, and the disassembler leaves it out
    when it holds the default.
    """

    name: str
    bits: tuple[tuple[int, int], ...] = attrs.field(converter=_pieces)
    kind: str = "uimm"
    signed: bool = False
    scale: int = 0
    regfile: str | None = None
    names: tuple[str, ...] = ()
    default: int | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in FIELD_KINDS:
            raise ConfigError(f"field {self.name!r}: unknown kind {self.kind!r}")
        if self.name in RESERVED_FIELD_NAMES or not self.name.isidentifier():
            raise ConfigError(f"field name {self.name!r} is reserved or not an identifier")
        for hi, lo in self.bits:
            if hi < lo or lo < 0:
                raise ConfigError(f"field {self.name!r}: bad bit range {hi}:{lo}")
        if self.kind == "reg" and not self.regfile:
            raise ConfigError(f"field {self.name!r}: a reg field needs a regfile")
        if self.default is not None:
            lo, hi = self.value_range()
            if not lo <= self.default <= hi:
                raise ConfigError(f"field {self.name!r}: default {self.default} does not fit {lo}..{hi}")

    @property
    def width(self) -> int:
        return sum(hi - lo + 1 for hi, lo in self.bits)

    @property
    def field_mask(self) -> int:
        m = 0
        for hi, lo in self.bits:
            m |= ((1 << (hi - lo + 1)) - 1) << lo
        return m

    @property
    def is_signed(self) -> bool:
        return self.signed or self.kind == "pcrel"

    def value_range(self) -> tuple[int, int]:
        """Inclusive range of operand values (after scaling) this field can hold."""
        w = self.width
        if self.is_signed:
            return (-(1 << (w - 1))) << self.scale, ((1 << (w - 1)) - 1) << self.scale
        return 0, ((1 << w) - 1) << self.scale

    def extract(self, word: int) -> int:
        raw = 0
        for hi, lo in self.bits:
            n = hi - lo + 1
            raw = (raw << n) | ((word >> lo) & ((1 << n) - 1))
        if self.is_signed and raw >> (self.width - 1):
            raw -= 1 << self.width
        return raw << self.scale

    def insert(self, word: int, value: int) -> int:
        """Put ``value`` into ``word``; :class:`EncodeError` if it does not fit."""
        lo_v, hi_v = self.value_range()
        if not lo_v <= value <= hi_v:
            raise EncodeError(f"{self.name}={value} does not fit in {lo_v}..{hi_v}")
        if value & ((1 << self.scale) - 1):
            raise EncodeError(f"{self.name}={value} is not a multiple of {1 << self.scale}")
        raw = (value >> self.scale) & ((1 << self.width) - 1)
        shift = self.width
        for hi, lo in self.bits:
            n = hi - lo + 1
            shift -= n
            piece = (raw >> shift) & ((1 << n) - 1)
            word = (word & ~(((1 << n) - 1) << lo)) | (piece << lo)
        return word


@attrs.frozen
class RegisterFile:
    """A register file: ``count`` registers of ``width`` bits.

    ``names`` are the canonical (disassembly) names; ``aliases`` maps further names
    accepted by the assembler to indices.  ``zero`` is the index hardwired to zero, if
    any; ``read_only`` lists indices that ignore writes.  ``storage=False`` marks a
    file that exists only for naming operands (e.g. rfPhoenix's 7-bit specifiers that
    name either a scalar or a vector register): CPU agents allocate nothing for it.
    """

    name: str
    count: int
    width: int
    names: tuple[str, ...] = ()
    aliases: Mapping[str, int] = attrs.field(factory=dict)
    zero: int | None = None
    read_only: frozenset[int] = frozenset()
    storage: bool = True

    def __attrs_post_init__(self) -> None:
        if not self.names:
            object.__setattr__(self, "names", tuple(f"{self.name}{i}" for i in range(self.count)))
        if len(self.names) != self.count:
            raise ConfigError(f"register file {self.name!r}: {len(self.names)} names for {self.count} registers")

    def index(self, name: str) -> int | None:
        """Index of a register name or alias (case-insensitive), else ``None``."""
        key = name.strip().lower()
        for i, n in enumerate(self.names):
            if n.lower() == key:
                return i
        for alias, i in self.aliases.items():
            if alias.lower() == key:
                return i
        return None


_SLOT = re.compile(r"\{(\w+)(\?)?\}")


def omit_optional(syntax: str, name: str) -> tuple[str, str, str]:
    """Cut ``syntax`` around optional slot ``name``: ``(before, optional part, after)``.

    The optional part is the slot plus the separator before it, the run of commas
    and blanks (``"{rb}, {d}[{ra}], {mask?}"`` keeps ``]`` and drops ``", {mask?}"``).
    The disassembler (leaving a default operand out) and the assembler (accepting
    text without it) both use this one cut, so disassembled text always assembles.
    """
    slot = "{" + name + "?}"
    cut = syntax.index(slot)
    start = cut
    while start > 0 and syntax[start - 1] in ", \t":
        start -= 1
    return syntax[:start], syntax[start:cut + len(slot)], syntax[cut + len(slot):]


@functools.lru_cache(maxsize=4096)  # a handful of syntaxes, asked once per disassembled instruction
def _syntax_slots(syntax: str) -> tuple[str, ...]:
    return tuple(m.group(1) for m in _SLOT.finditer(syntax))


@functools.lru_cache(maxsize=4096)
def _optional_slots(syntax: str) -> tuple[str, ...]:
    return tuple(m.group(1) for m in _SLOT.finditer(syntax) if m.group(2))


@attrs.frozen
class Encoding:
    """One row of an encoding table: an instruction form.

    A word belongs to this form when ``word & mask == match``.  ``syntax`` is the
    operand template with field names in braces, e.g. ``"{rd}, {imm}({rs1})"``; every
    field the form uses appears in it exactly once.  ``timing`` names a timing class of
    the architecture; ``flags`` are tags tools may use.  The :data:`CONTROL_FLAGS`
    among them (``branch``, ``jump``, ``trap``, ``halt``, ``wait``) declare how the row
    transfers control: the fast engine ends a block after a row carrying one (and, as a
    safety net, after a row whose semantic function may return a PC whatever its flags);
    in an architecture with ``control_flow="flags"`` a row without one declares that it
    never transfers control, and ``tessera semantics`` / the ``control-flags``
    conformance check report rows whose code disagrees.  Other flags (``sync``,
    ``load`` …) are free-form; one more is read by tools: ``expands`` — the row's
    instruction issues other instructions while it runs (an expander, like Tensix's MOP:
    they carry :attr:`Instruction.issued_by <tessera.isa.instruction.Instruction.issued_by>`),
    so a trace lists it before them.  ``unit`` names the execution unit that runs the
    row (``"MATH"``, ``"SFPU"`` …; ``""``: not declared), for tools only: ``--trace
    perfetto`` gives each unit a track.  ``suffix`` names an enum field written as a mnemonic suffix
    (``ld.b``: the size field); a slot written ``{name?}`` (last in the syntax only) is
    an optional operand whose field has a default.

    ``semantics`` is the function the row runs: a :class:`~tessera.isa.registry.SemanticRef`
    (``REGISTRY.ref("add")``, the way every shipped architecture binds its rows) or any
    callable.  ``variants`` (``{"x0": nop}``) declares the other functions
    ``Architecture.refine`` may install for a decoded instance of the row, with
    :func:`~tessera.isa.registry.swap`; the engine refuses any other swap, so every
    function a row can run is listed on the row (``tessera semantics``).
    """

    mnemonic: str
    match: int
    mask: int
    syntax: str = ""
    semantics: Callable[..., int | None] | None = None
    timing: str = "default"
    flags: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    doc: str = ""
    suffix: str | None = None
    variants: tuple[tuple[str, Callable[..., int | None]], ...] = attrs.field(default=(), converter=_variants)
    unit: str = ""

    def __attrs_post_init__(self) -> None:
        if self.match & ~self.mask:
            raise ConfigError(f"{self.mnemonic}: match {self.match:#x} has bits outside mask {self.mask:#x}")
        slots = _syntax_slots(self.syntax)
        optional = _optional_slots(self.syntax)
        if optional and (len(optional) > 1 or slots[-1] != optional[0]):
            raise ConfigError(f"{self.mnemonic}: only the last operand may be optional")
        if self.suffix is not None and self.suffix in slots:
            raise ConfigError(f"{self.mnemonic}: field {self.suffix!r} is both suffix and operand")

    def variant(self, name: str) -> Callable[..., int | None] | None:
        """The function declared as variant ``name`` (``None`` if the row declares none)."""
        for key, fn in self.variants:
            if key == name:
                return fn
        return None

    @property
    def variant_names(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.variants)

    @property
    def control_flags(self) -> frozenset[str]:
        """The row's :data:`CONTROL_FLAGS`: a block ends after it when not empty."""
        return self.flags & CONTROL_FLAGS

    @property
    def operand_names(self) -> tuple[str, ...]:
        """Every field the form carries as an operand: the suffix field, then the syntax slots."""
        slots = _syntax_slots(self.syntax)
        return (self.suffix, *slots) if self.suffix else slots

    @property
    def optional_operand(self) -> str | None:
        """The name of the optional (last) syntax operand, if any."""
        optional = _optional_slots(self.syntax)
        return optional[0] if optional else None


@attrs.frozen
class MemoryRegionSpec:
    """A region of an architecture's default memory map."""

    name: str
    start: int
    size: int
    kind: str = "ram"  # ram | rom
    perms: str = "rwx"


@attrs.frozen
class CacheSpec:
    """Geometry of a cache, for timing models (the functional engine has no caches).

    ``size`` and ``line`` in bytes; ``latency`` is the hit latency in cycles;
    ``policy`` names the write/replacement policy where the hardware documents one.
    """

    name: str
    size: int
    ways: int
    line: int
    latency: int = 1
    policy: str = ""

    @property
    def sets(self) -> int:
        return self.size // (self.ways * self.line)


@attrs.frozen
class Example:
    """A bundled example program that ``tessera demo`` runs.

    The program is either ``source``, assembly text for the architecture's assembler,
    loaded at ``load_address``, or ``program``, a file ``tessera run`` can load (an ELF,
    an image, a program format of a plugin such as a Tensix kernel manifest) for the
    programs assembly text cannot say — a vendor's compiled kernel, say.  ``program``
    is ``"package:path"``, a file shipped inside an installed Python package (found as
    :mod:`importlib.resources` finds it), or a filesystem path; give one of the two.
    ``check(machine, result)`` returns ``None`` when the final state is as expected,
    else a one-line description of what is wrong.
    """

    name: str
    description: str
    source: str = ""
    load_address: int = 0
    max_steps: int = 1_000_000
    check: Callable[[Any, Any], str | None] | None = None
    program: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.program is not None and self.source:
            raise ValueError(f"example {self.name!r} gives both source and program: its program is one of them")

    def program_path(self) -> str | None:
        """The file ``program`` names (``None`` for an assembly example); a package that
        cannot be imported is a :class:`~tessera.errors.LoadError`."""
        if self.program is None:
            return None
        found = _PACKAGED.match(self.program)
        if found is None:
            return self.program
        import importlib.resources

        package, inner = found.groups()
        try:
            return str(importlib.resources.files(package).joinpath(inner))
        except (ImportError, TypeError) as exc:
            raise LoadError(f"example {self.name}: program {self.program!r}: cannot import package "
                            f"{package}: {exc}") from None


#: ``package.module:relative/path`` (a drive letter ``C:\\`` is a path, not a package)
_PACKAGED = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):(?![\\/])(.+)$")


@attrs.frozen
class Architecture:
    """Everything the core needs to know about an instruction-set architecture.

    Behaviour hooks (all optional, all plain functions so the record pickles):

    * ``quantum`` is the steps an agent runs before the scheduler moves on (1 =
      fine-grained interleaving); ``solo_quantum``, when set, is used instead while
      only one agent is runnable (interleaving is then unobservable), which is much
      faster.  An architecture using it must end a slice (``Yield``) in any
      instruction that makes another agent runnable without a sync object.
    * ``build(machine)`` populates a fresh machine with agents and sync objects (a
      board); default: one CPU agent named ``core0``.
    * ``illegal(word, address)`` returns the :class:`~tessera.control.Trap` an
      undecodable word raises; ``None`` makes undecodable words a
      :class:`~tessera.errors.DecodeError` instead.
    * ``take_trap(agent, trap)`` redirects the agent to its handler and returns
      ``True``, or returns ``False`` when the trap cannot be taken (no vector set).
    * ``memory_trap(fault)`` turns a :class:`~tessera.errors.MemoryFault` into the
      architecture's trap, or returns ``None`` to stop the run with the fault.
    * ``dump(agent)`` returns the agent's architectural state as a JSON-able dict.
    * ``dump_text(section, name, state)`` renders state for ``--dump-state text`` where
      the generic rule of :mod:`tessera.dumptext` (by shape alone) is not enough.
      ``section`` is ``"agent"`` (``state`` is the agent's whole state; the lines replace
      the rendering of its ``dump`` extras) or ``"sync"`` (a sync object's state; the
      lines replace its body).  Return lines without indentation, or ``None`` for the
      generic rule.  Only the text dump uses it: the JSON dump is ``machine.state()``.
    * ``refine(ins, peek)`` completes a decoded instruction from the words after it
      (rfPhoenix's immediate postfixes): ``peek(address)`` returns the instruction
      word at ``address`` or ``None`` if it cannot be fetched.  It may change operand
      attributes, ``ins.next`` and ``ins.span`` (the bytes the instruction depends on,
      so that writing any of them invalidates the decoded entry), and switch the
      function it runs to one of its row's declared ``variants``
      (:func:`~tessera.isa.registry.swap`).  Called once per decode-cache fill, after
      the engine has resolved the row's :class:`~tessera.isa.registry.SemanticRef`.
    * ``cli_flags`` maps extra ``tessera run`` flags to configuration settings:
      ``{"no-pma": ("pma", False, "disable PMA checks")}`` makes ``--no-pma`` mean
      ``--set pma=false`` for this architecture (and an error for others).
      ``cli_options`` does the same for options taking a value:
      ``{"dest-in": ("dest_in", "load Dest from a .npy file")}`` makes
      ``--dest-in F`` mean ``--set dest_in=F``; given several times, the values are
      joined by commas (``--l1 A --l1 B`` is ``--set l1=A,B``).
    * ``caches`` describes the cache geometry (:class:`CacheSpec`) for timing models.
    * ``elf_machine``/``elf_class`` are the ELF ``e_machine`` and class (32/64) the
      architecture runs; ``elf_machine=None`` means it runs no ELF files (an ELF for
      any machine is refused unless the user forces it, ``--any-elf-machine``).
      ``elf_extensions`` marks an *extension architecture*: the ISA extensions (lower
      case, as in a RISC-V ISA string: ``{"xtile"}``) an ELF must name in its build
      attributes (``Tag_RISCV_arch``) for the architecture to be chosen from the ELF
      without ``--arch``.  When several architectures run an ELF's machine, one whose
      extensions the ELF names wins; otherwise the base architecture (no
      ``elf_extensions``) does, so a plain RV64 program runs on ``rv64im`` even with
      ``tile`` installed (:func:`tessera.loaders.elf.choose_architecture`).
    * ``settings`` declares the configuration keys (:class:`~tessera.settings.Settings`, or
      a sequence of :class:`~tessera.settings.Setting` and
      :class:`~tessera.settings.SettingFamily`): the core checks ``--set`` /
      ``Machine(config=...)`` against it before ``build`` runs (unknown key, wrong kind,
      out of range: :class:`~tessera.errors.ConfigError`), and ``tessera archs
      --settings`` lists it.  ``None`` (the default): not declared, the board checks
      what it reads.
    * ``assembler`` is an :class:`~tessera.isa.asm.Assembler` subclass adding
      pseudo-instructions or directives; default: the generic table-driven assembler.
    * ``disassembler`` is a :class:`~tessera.isa.disasm.Disassembler` subclass rendering
      operands the architecture's own way (``tessera asm`` listings, ``tessera disasm``);
      default: the generic one.  Its text must assemble back to the same word.
    * Either may be given as the class or as ``"module.path:Class"``, imported on first
      use (:meth:`assembler_class`, :meth:`disassembler_class`): ``tessera run`` never
      assembles, and importing an assembler costs start-up time.
    * ``control_flow`` says where the rows' control flow is declared: ``"flags"`` — every
      row carries its :data:`CONTROL_FLAGS` (none: it never transfers control), and a row
      whose semantic function disagrees is reported by ``tessera semantics`` and fails
      the ``control-flags`` conformance check; ``"code"`` (the default) — not declared,
      blocks end where the semantic functions may return a PC.  Either way a block ends
      after a row with a control flag and after one whose function may return a PC.
    * ``register_uses(ins)`` says which registers of the executing agent a decoded
      instruction reads and writes, for tools doing def/use analysis (the faults
      plugin's campaigns classify a fault in a register that is never read again
      without running on): ``(reads, writes)``, each a tuple of ``(register file name,
      index)``; a function ``uses(agent)`` giving that pair for one execution, called
      after it completed, when which registers it uses depends on state (a RISC-V
      ``ecall``'s call number in ``a7``); or ``None`` when it cannot say (an
      extension's instruction whose semantics may touch any register).  ``reads`` may
      list more than the instruction reads, never less; ``writes`` lists exactly the
      registers every execution completing without a trap writes (one it writes only
      sometimes belongs in ``reads``).  ``None`` (the default):
      not declared, and tools assume any instruction may read anything.
    """

    name: str
    word_bits: int
    register_files: tuple[RegisterFile, ...]
    fields: tuple[Field, ...]
    encodings: tuple[Encoding, ...]
    description: str = ""
    endian: Endian = "little"
    address_bits: int = 32
    memory_map: tuple[MemoryRegionSpec, ...] = ()
    timing: Mapping[str, int] = attrs.field(factory=lambda: {"default": 1})
    capabilities: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    elf_machine: int | None = None
    elf_class: int | None = None
    reset_pc: int = 0
    quantum: int = 1024
    solo_quantum: int | None = None
    build: Callable[..., None] | None = None
    illegal: Callable[[int, int], Any] | None = None
    take_trap: Callable[[Any, Any], bool] | None = None
    memory_trap: Callable[[Any], Any] | None = None
    dump: Callable[[Any], dict] | None = None
    dump_text: Callable[[str, str, Mapping[str, Any]], list[str] | None] | None = None
    examples: tuple[Example, ...] = ()
    comment_chars: str = "#;"
    assembler: type | str | None = None
    disassembler: type | str | None = None
    refine: Callable[[Any, Callable[[int], int | None]], None] | None = None
    cli_flags: Mapping[str, tuple[str, Any, str]] = attrs.field(factory=dict)
    cli_options: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)
    caches: tuple[CacheSpec, ...] = ()
    settings: Settings | None = attrs.field(default=None, converter=_settings)
    elf_extensions: frozenset[str] = attrs.field(default=frozenset(), converter=_names)
    control_flow: str = "code"
    register_uses: Callable[[Any], RegisterUses | Callable[[Any], RegisterUses] | None] | None = None

    def assembler_class(self) -> type:
        """The assembler class: :attr:`assembler` (imported now if named), else the generic one."""
        if self.assembler is None:
            from tessera.isa.asm import Assembler

            return Assembler
        return _resolve_class(self.assembler, f"architecture {self.name}: assembler")

    def disassembler_class(self) -> type:
        """The disassembler class: :attr:`disassembler` (imported now if named), else the generic one."""
        if self.disassembler is None:
            from tessera.isa.disasm import Disassembler

            return Disassembler
        return _resolve_class(self.disassembler, f"architecture {self.name}: disassembler")

    def __attrs_post_init__(self) -> None:
        """Refuse an inconsistent description when it is made, not when a program runs."""
        self._check_basics()
        self._check_fields()
        fields = self.field_map
        for enc in self.encodings:
            self._check_row(enc, fields)

    def _check_basics(self) -> None:
        if self.word_bits % 8 or self.word_bits <= 0:
            raise ConfigError(f"architecture {self.name}: word_bits must be a positive multiple of 8")
        if self.settings is not None:
            targets = [(f, s) for f, (s, _v, _h) in self.cli_flags.items()]
            targets += [(f, s) for f, (s, _h) in self.cli_options.items()]
            for flag, key in targets:
                if not self.settings.declares(key) and self.settings.family_of(key) is None:
                    raise ConfigError(f"architecture {self.name}: --{flag} sets {key!r}, which its "
                                      "settings do not declare")
        if self.control_flow not in CONTROL_FLOW_SOURCES:
            raise ConfigError(f"architecture {self.name}: control_flow must be one of "
                              f"{', '.join(map(repr, CONTROL_FLOW_SOURCES))}, not {self.control_flow!r}")
        if self.register_uses is not None and not callable(self.register_uses):
            raise ConfigError(f"architecture {self.name}: register_uses must be a function of a decoded "
                              "instruction, or None")
        if self.endian not in ("little", "big"):
            raise ConfigError(f"architecture {self.name}: endian must be 'little' or 'big'")
        for ext in self.elf_extensions:
            if not (isinstance(ext, str) and ext.isalnum() and ext == ext.lower()):
                raise ConfigError(f"architecture {self.name}: elf_extensions entry {ext!r} must be a "
                                  "lower-case extension name as in an ISA string (e.g. 'xtile')")

    def _check_fields(self) -> None:
        files = {rf.name for rf in self.register_files}
        full = (1 << self.word_bits) - 1
        for f in self.fields:
            if f.regfile and f.regfile not in files:
                raise ConfigError(f"{self.name}: field {f.name} names unknown register file {f.regfile}")
            if f.field_mask & ~full:
                raise ConfigError(f"{self.name}: field {f.name} reaches beyond bit {self.word_bits - 1}")

    def _check_row(self, enc: Encoding, fields: Mapping[str, Field]) -> None:
        if enc.mask & ~((1 << self.word_bits) - 1):
            raise ConfigError(f"{self.name}: {enc.mnemonic} mask is wider than the word")
        if enc.timing not in self.timing:
            raise ConfigError(f"{self.name}: {enc.mnemonic} uses unknown timing class {enc.timing!r}")
        for op in enc.operand_names:
            if op not in fields:
                raise ConfigError(f"{self.name}: {enc.mnemonic} syntax names unknown field {op!r}")
            if fields[op].field_mask & enc.mask:
                raise ConfigError(f"{self.name}: {enc.mnemonic} operand {op!r} overlaps the "
                                  f"fixed bits of its mask {enc.mask:#x}")
        for op in filter(None, (enc.suffix, enc.optional_operand)):
            if fields[op].default is None:
                raise ConfigError(f"{self.name}: {enc.mnemonic} field {op!r} is optional or a "
                                  "suffix, so it needs a default")
        if enc.suffix is not None:
            sf = fields[enc.suffix]
            if sf.kind != "enum" or len(sf.names) < (1 << sf.width):
                raise ConfigError(f"{self.name}: {enc.mnemonic} suffix field {enc.suffix!r} must be "
                                  "an enum naming every value (so every word disassembles to "
                                  "text that assembles)")

    @property
    def word_bytes(self) -> int:
        return self.word_bits // 8

    @property
    def field_map(self) -> dict[str, Field]:
        return {f.name: f for f in self.fields}

    @property
    def register_file_map(self) -> dict[str, RegisterFile]:
        return {rf.name: rf for rf in self.register_files}

    def encodings_named(self, mnemonic: str) -> list[Encoding]:
        m = mnemonic.lower()
        return [e for e in self.encodings if e.mnemonic.lower() == m]

    def cycles(self, encoding: Encoding) -> int:
        """Nominal latency of a form (the default timing model)."""
        return int(self.timing.get(encoding.timing, self.timing.get("default", 1)))
