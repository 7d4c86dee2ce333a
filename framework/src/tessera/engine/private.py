"""Private blocks: translated code that touches nothing but its own agent's registers.

Fine-grained barrel architectures (rfPhoenix's threads, the tile's harts, Tensix's
threads) interleave their agents one instruction at a time.  Running each agent in
whole translated blocks instead gives the same observable result whenever the
instructions that run "ahead of their turn" cannot interact with any other agent:
then only the order of the *other* instructions matters, and the scheduler keeps
that exact (:mod:`tessera.machine.barrel`).  This module decides, once per block
when it is translated, whether the block is such code.

A block is *private* when its generated statements

* write only the agent's register files (the ``R_<file>`` locals and local aliases of
  them) and locals, so undoing a run-ahead is restoring the register files;
* read only those, literals, and plain scalar attributes of the agent that are no
  engine bookkeeping (``pc``, ``cycles``, ``instret``, ``status`` ... are excluded:
  inside a run-ahead they do not hold what stepping would show).  Another agent's
  instruction that changes such an attribute must say so with
  :meth:`Machine.disturb <tessera.machine.Machine.disturb>`;
* call nothing but a few builtins that touch nothing (``int``, ``abs``, ``min`` ...):
  no memory access, no observer or capture, no semantic function called as a whole;
* raise nothing (a trap is reported to tools, so it is an interaction).

When in doubt the answer is "not private", which is always correct: the scheduler
then runs that code at its exact turn.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from tessera.engine.inline import walk

__all__ = ["is_private"]

#: builtins a private block may call: they read their arguments and touch nothing else
PURE_BUILTINS = frozenset({"int", "bool", "abs", "min", "max", "len"})
#: agent attributes the engine keeps in locals or owns: never private state
ENGINE_STATE = frozenset({"pc", "next_pc", "resume_pc", "cycles", "instret", "traps", "status",
                          "machine", "space", "regs", "arch", "name", "yielded", "exit_code",
                          "waiting_on", "wait_reason", "daemon", "quantum", "at_entry", "_filler"})
_SCALARS = (int, bool, float, str, type(None))
_TARGETS = (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.comprehension)
_FORBIDDEN = (ast.Raise, ast.Delete, ast.Global, ast.Nonlocal, ast.Lambda, ast.Yield, ast.YieldFrom,
              ast.Await, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
              ast.With, ast.AsyncWith, ast.Try, ast.Assert)


def is_private(body: list[ast.stmt], agent: Any) -> bool:
    """Do these block statements touch only ``agent``'s own registers and plain state?

    ``agent`` is the agent the block was translated for (its attributes tell plain
    scalar state from objects); without one nothing is private.  One walk over the
    block; register-file aliases (``x = R_x``) are checked once it is done.
    """
    if agent is None:
        return False
    aliases: set[str] = set()     # locals subscripted that are not R_<file>
    files: set[str] = set()       # locals bound to a register file
    others: set[str] = set()      # locals bound to anything else
    plain: dict[str, bool] = {}
    for node in walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Subscript):
            base = node.value
            if not isinstance(base, ast.Name):
                return False
            if not base.id.startswith("R_"):
                aliases.add(base.id)
        elif isinstance(node, ast.Attribute):
            if not (isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
                    and node.value.id == "cpu"):
                return False
            attr = node.attr
            ok = plain.get(attr)
            if ok is None:
                ok = plain[attr] = _plain_scalar(agent, attr)
            if not ok:
                return False
        elif isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS):
                return False
        elif isinstance(node, ast.Assign):
            value_file = isinstance(node.value, ast.Name) and node.value.id.startswith("R_")
            for target in node.targets:
                if isinstance(target, ast.Name):
                    (files if value_file else others).add(target.id)
        elif isinstance(node, _TARGETS):
            for n in walk(node.target):
                if isinstance(n, ast.Name):
                    others.add(n.id)
        elif isinstance(node, _FORBIDDEN):
            return False
    return not aliases or aliases <= files - others


def _plain_scalar(agent: Any, attr: str) -> bool:
    """Is ``agent.<attr>`` plain scalar state of the agent's own (no descriptor, no object)?"""
    if attr in ENGINE_STATE or attr.startswith("__"):
        return False
    try:
        found = inspect.getattr_static(agent, attr)
    except AttributeError:
        return False
    return isinstance(found, _SCALARS)
