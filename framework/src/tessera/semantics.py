"""Writing semantic functions: the rules the fast engine relies on, and what it makes of yours.

A semantic function is ``fn(agent, ins) -> next_pc | None``: ``agent`` executes the
decoded instruction ``ins``; it returns the PC of a taken control transfer, or
``None`` to continue at ``ins.next``.  The step engine simply calls it.  The fast
engine (the default) *translates* hot straight-line code: it parses the function's
source once and inlines it, specialised for each instruction, into one generated
Python function per block (:mod:`tessera.engine.inline`).  That is only exact when
the function keeps these rules:

1. **Fields of ``ins`` are read-only once decoded.**  The engine reads them when it
   translates a block and writes their values into the code as literals
   (``x[ins.rd]`` becomes ``R_x[10]``).  Complete an instruction in
   ``Architecture.refine``, which runs before the entry is sealed; afterwards a write
   to ``ins`` (by the function or a helper) stops the run with a plugin error on both
   engines.  Keep changing state on the agent.
2. **Register files are never rebound.**  A block binds each register-file list to a
   local once (``R_x = cpu.x``); write its elements (``cpu.x[i] = v``), never the
   attribute (``cpu.x = [...]``).
3. **Module globals and closure values a function reads are read when a block is
   translated.**  ``int``, ``bool``, ``str``, ``float``, ``bytes`` and ``None`` become
   literals, other objects are bound by identity, so mutating a list or dict they
   hold is always seen.  A translation remembers what it read and is made again when
   one of them was rebound before a run starts or another machine reuses it; a
   global the module itself rebinds (with a ``global`` statement) is read when the
   block runs.  Rebinding anything else *while* a machine runs is not seen by blocks
   already translated.
4. **Signature** ``(agent, ins)``: two positional parameters, no defaults, ``*args``
   or keywords, and neither parameter assigned to.

A function is *called* from the block instead of inlined — still correct, a little
slower — when it is marked :func:`no_inline`; when it is not a plain Python function
(a builtin, a :func:`functools.partial`, a callable object) or its source cannot be
read; when its signature breaks rule 4; when it has inner scopes (a nested
function, lambda, class or comprehension, or a variable a nested scope captures),
is a generator or coroutine, uses ``global``, ``nonlocal``, ``del``, ``*`` unpacking
or calls ``locals``, ``vars``, ``eval``, ``exec``, ``super``, ``globals``, ``dir`` or
``breakpoint``; or when it is too big.  Per instruction, it is also called when a
``return`` sits inside a loop, ``with`` or ``try``, when it names something that does
not exist, or when its specialised form grows too large.  A function with a
``return <value>`` anywhere may transfer control: a block ends after it.

:func:`inline_report` says what the engine does with a function and why;
``tessera semantics --arch NAME`` prints it for every row of an architecture
(:func:`row_functions`).  docs/writing-plugins.md shows each shape with an example.

Block ends are declared: a row's control flags (:data:`tessera.isa.CONTROL_FLAGS`)
end a block after it.  The analysis above stays a safety net — a row whose function
may return a PC ends its block whatever its flags — and a cross-check:
:func:`flag_disagreements` lists the rows whose flags and code disagree.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

__all__ = ["INLINE_ATTRIBUTE", "ControlFlowRow", "InlineReport", "RowFunction", "control_flow_rows",
           "flag_disagreements", "function_name", "inline_report", "no_inline", "returns_pc",
           "row_functions"]

#: The attribute :func:`no_inline` sets (to ``False``) on a function.
INLINE_ATTRIBUTE = "__tessera_inline__"


def no_inline(fn: Any) -> Any:
    """Decorator: the fast engine's blocks call ``fn`` instead of inlining it.

    For semantic functions whose time goes into numpy or compiled kernels: inlining
    them saves one call but costs translation time.  Results are the same either way.
    """
    setattr(fn, INLINE_ATTRIBUTE, False)
    return fn


class InlineReport:
    """What the fast engine does with one semantic function.

    ``inlined``: its body is specialised into blocks (else blocks call it);
    ``reason``: why, in words; ``terminal``: it may return a PC, so a block ends
    after it (always assumed of a function whose source cannot be read).
    """

    __slots__ = ("inlined", "reason", "terminal")

    def __init__(self, inlined: bool, reason: str, terminal: bool) -> None:
        self.inlined, self.reason, self.terminal = inlined, reason, terminal

    def _key(self) -> tuple[bool, str, bool]:
        return self.inlined, self.reason, self.terminal

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InlineReport) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"InlineReport(inlined={self.inlined}, reason={self.reason!r}, terminal={self.terminal})"


def inline_report(fn: Any) -> InlineReport:
    """Whether the fast engine inlines semantic function ``fn`` or calls it, and why.

    The answer is the engine's own (the checks it makes once per function); an
    inlined function can still be called for a particular instruction whose
    specialised form breaks a per-instruction limit (see the module docstring).
    """
    from tessera.engine import inline

    terminal = inline.terminal(fn)
    t = inline.template(fn)
    if t is None:
        if not isinstance(fn, types.FunctionType):
            return InlineReport(False, f"not a Python function (a {type(fn).__name__} object)", terminal)
        return InlineReport(False, inline.rejection(fn) or "rejected", terminal)
    if len(t.params) != 2:
        return InlineReport(False, f"takes {len(t.params)} parameters, not (agent, ins)", terminal)
    if t.param_stores:
        return InlineReport(False, f"assigns to its parameter {', '.join(sorted(t.param_stores))}", terminal)
    if t.size > inline.MAX_BODY:
        return InlineReport(False, f"too big: {t.size} AST nodes (limit {inline.MAX_BODY})", terminal)
    reason = f"plain function, {t.size} AST nodes"
    stored = t.attr_stores.get(t.params[1])
    if stored:  # rule 1: the sealed instruction refuses the write when it runs
        reason += f"; stores ins.{', ins.'.join(sorted(stored))}: decoded instructions are read-only"
    return InlineReport(True, reason, terminal)


def function_name(fn: Any) -> str:
    """``module.qualname`` of a function; for another callable its type's module and its repr."""
    if fn is None:
        return "-"
    qualname = getattr(fn, "__qualname__", None)
    module = getattr(fn, "__module__", None)
    if isinstance(qualname, str) and isinstance(module, str):
        return f"{module}.{qualname}"
    kind = type(fn)
    shown = repr(fn)
    if shown.startswith("<") and " at 0x" in shown:  # the default repr says nothing more
        shown = kind.__qualname__
    if kind.__module__ == "builtins" or shown.startswith(f"{kind.__module__}."):
        return shown
    return f"{kind.__module__}.{shown}"


class RowFunction:
    """A semantic function an encoding row runs: ``via`` is ``"row"`` for the row's own
    ``semantics``, ``"variant:NAME"`` for a variant the row declares (which ``refine`` may
    install, :func:`tessera.isa.registry.swap`)."""

    __slots__ = ("encoding", "function", "via")

    def __init__(self, encoding: Any, function: Callable[..., Any] | None, via: str) -> None:
        self.encoding, self.function, self.via = encoding, function, via

    def __repr__(self) -> str:
        return f"RowFunction({self.encoding.mnemonic}, {function_name(self.function)}, via={self.via})"


def row_functions(arch: Any) -> list[RowFunction]:
    """The semantic functions each encoding row of ``arch`` runs, row by row.

    Each row's ``semantics`` (a :class:`~tessera.isa.registry.SemanticRef` resolved to
    the function it names), then each of its declared ``variants``: the engine lets
    ``refine`` install nothing else, so this is the complete list.
    """
    from tessera.isa.registry import resolve

    out: list[RowFunction] = []
    for enc in arch.encodings:
        out.append(RowFunction(enc, _resolved(resolve, enc.semantics), "row"))
        out.extend(RowFunction(enc, _resolved(resolve, fn), f"variant:{name}") for name, fn in enc.variants)
    return out


def _resolved(resolve: Callable[[Any], Any], fn: Any) -> Any:
    """``resolve(fn)``; a reference to nothing stays the reference (reported, not raised)."""
    try:
        return resolve(fn)
    except Exception:  # noqa: BLE001 - an unresolvable name is shown as it is
        return fn


# --------------------------------------------------------------------------- control flags


def returns_pc(fn: Any) -> bool | None:
    """May semantic function ``fn`` return a PC, by the engine's analysis of its source?

    ``None`` when its code cannot be seen: no function, not a plain Python function (a
    registry object, a callable), or no readable source.  The block builder treats that
    as "may" (:func:`tessera.engine.inline.terminal`); a cross-check says "unknown".
    """
    import inspect

    from tessera.engine import inline

    if not isinstance(fn, types.FunctionType):
        return None
    try:
        inspect.getsource(fn)
    except (OSError, TypeError):
        return None
    return inline.terminal(fn)


class ControlFlowRow:
    """One encoding row's declared control flags against what its code says.

    ``flags``: the row's :data:`~tessera.isa.CONTROL_FLAGS`; ``code``: ``True`` when one
    of its functions (its own, or one ``refine`` swaps in) may return a PC, ``False`` when
    none can, ``None`` when some cannot be read and none is known to; ``problem``: why
    they disagree, else ``None``.
    """

    __slots__ = ("code", "encoding", "flags", "problem")

    def __init__(self, encoding: Any, flags: frozenset[str], code: bool | None, problem: str | None) -> None:
        self.encoding, self.flags, self.code, self.problem = encoding, flags, code, problem

    @property
    def mnemonic(self) -> str:
        return str(self.encoding.mnemonic)

    @property
    def code_says(self) -> str:
        """``"returns a PC"``, ``"never returns a PC"`` or ``"unknown"``."""
        return {True: "returns a PC", False: "never returns a PC", None: "unknown"}[self.code]

    def __repr__(self) -> str:
        return (f"ControlFlowRow({self.mnemonic}, flags={sorted(self.flags)}, code={self.code_says}"
                f"{f', problem={self.problem!r}' if self.problem else ''})")


def control_flow_rows(arch: Any, functions: list[RowFunction] | None = None) -> list[ControlFlowRow]:
    """Every encoding row of ``arch`` with its control flags and what its code says.

    A row disagrees when a function of it may return a PC but it carries none of
    :data:`~tessera.isa.TRANSFER_FLAGS` (``branch``, ``jump``, ``trap``), or when it
    carries ``branch`` or ``jump`` but none of its functions ever returns a PC.
    ``trap``, ``halt`` and ``wait`` are raised as signals, often by helpers, so code
    without a returned PC does not contradict them.  ``functions``: the answer of
    :func:`row_functions`, when the caller has it already.
    """
    from tessera.isa.description import CONTROL_FLAGS, TRANSFER_FLAGS

    grouped: dict[int, tuple[Any, list[Any]]] = {}
    for item in functions if functions is not None else row_functions(arch):
        grouped.setdefault(id(item.encoding), (item.encoding, []))[1].append(item.function)
    out = []
    for enc, fns in grouped.values():
        says = [returns_pc(f) for f in fns]
        code = True if True in says else (None if None in says else False)
        flags = frozenset(enc.flags) & CONTROL_FLAGS
        problem = None
        if code is True and not flags & TRANSFER_FLAGS:
            problem = "its code may return a PC but it has no branch, jump or trap flag"
        elif code is False and flags & {"branch", "jump"}:
            named = " and ".join(sorted(flags & {"branch", "jump"}))
            problem = f"it is flagged {named} but its code never returns a PC"
        out.append(ControlFlowRow(enc, flags, code, problem))
    return out


def flag_disagreements(arch: Any) -> list[ControlFlowRow]:
    """The rows of ``arch`` whose declared control flags disagree with their code.

    Rows whose code cannot be read are not among them (``code`` is ``None``:
    "unknown").  For an architecture with ``control_flow="flags"`` the ``control-flags``
    conformance check fails on any; ``tessera semantics`` lists them for every one.
    """
    return [r for r in control_flow_rows(arch) if r.problem is not None]
