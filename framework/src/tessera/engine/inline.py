"""Inlining semantic functions into translated blocks: one decoded instruction → statements.

The fast engine (:mod:`tessera.engine.blocks`) turns a straight-line run of decoded
instructions into one generated Python function.  Calling each instruction's
semantic function from it would save only the dispatch; inlining saves the calls
too, and lets every operand become a literal: ``x[ins.rd] = (x[ins.rs1] + ins.imm) & M``
decoded as ``addi a0, a0, 1`` becomes ``R_x[10] = R_x[10] + 1 & 4294967295``.

Architecture plugins write nothing for this: the source of their ordinary semantic
functions (``fn(agent, ins) -> next_pc | None``) is parsed once per function and
specialised per instruction:

* ``ins.<field>`` reads become constants (or bound objects) unless the function
  stores into ``ins``.  Decoded instructions are immutable once in the decode cache
  (``Architecture.refine`` runs before), which every plugin here respects;
* ``agent.<register file>`` (or an attribute that *is* a register file list, such as
  an alias ``self.gpr = self.r``) becomes a local bound once per block (``R_r``);
  register files are created once and never rebound;
* locals are renamed apart, closure cells and module globals are bound by value
  (semantic functions must not rebind module globals they read — none does);
* calls to plain Python functions and to methods of the agent are inlined too, a
  few levels deep: helpers like ``thread.rd(index, pc)`` or ``_set(cpu, rd, v)``
  vanish once their arguments are constants;
* constants propagate and constant tests fold away (``if ins.rd:`` with ``rd = 0``
  disappears);
* a ``return`` in an instruction that may transfer control returns the block's next
  PC; an early bare ``return`` elsewhere is rewritten into ``if``/``else`` structure.

A function that cannot be inlined safely (no source, nested functions or scopes,
``global``, loops or ``try`` around a ``return``, ...) is called instead — still
correct, a little slower.  :func:`terminal` says whether a function may return a PC
(so the block must end after it); without source the answer is "yes".

:func:`specialise` does this work once per semantic function and shape of operands:
:mod:`tessera.engine.speccache` records it (the hooks here mark the literals that came
from instruction fields and note how much of each value a fold looked at) and copies
the result for every instruction of the same shape.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import linecache
import sys
import textwrap
import types
from typing import Any

from tessera.semantics import INLINE_ATTRIBUTE, no_inline  # noqa: F401 - tessera.engine.inline.no_inline stays importable

_SIMPLE = (int, bool, str, float, bytes, type(None))
_UNSAFE_CALLS = {"locals", "vars", "eval", "exec", "super", "globals", "dir", "breakpoint"}
_NO_SIDE_EFFECT_BUILTINS = {"int", "bool", "abs", "min", "max", "len"}
#: builtins whose calls :func:`may_write` treats as harmless (they touch only their arguments)
PURE_CALLS = frozenset(_NO_SIDE_EFFECT_BUILTINS)
MAX_NODES = 600   # per instruction once specialised (duplicated tails and inlined calls grow it)
MAX_DEPTH = 3     # levels of calls inlined into a semantic function
MAX_BODY = 240    # a semantic function bigger than this (AST nodes) is called, not inlined
MAX_CALLEE = 120  # a helper bigger than this is called, not inlined
#: instruction fields a block binds by identity (a name in its namespace), not as a literal
BOUND_FIELDS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, tuple, frozenset)
#: while a specialisation is recorded for the template cache (:mod:`tessera.engine.speccache`), the
#: attribute of an ``ast.Constant`` made from an instruction field that says which field it is
FIELD = "tessera_field"
#: how much of a field's value making the statements looked at: its type only, whether it is
#: true, or the value itself (a folded test, a computed constant)
TYPE, TRUTH, VALUE = 0, 1, 2


def field_constant(ctx: Context, attr: str, value: Any) -> ast.Constant:
    """``ast.Constant(value)`` for the instruction's field ``attr``, marked as that field while
    a specialisation is recorded (so the cache can put another instruction's value there)."""
    node = ast.Constant(value)
    rec = ctx.recorder
    if rec is not None:
        setattr(node, FIELD, rec.mark(attr))
    return node


def _look(node: ast.Constant, how: int) -> None:
    """Specialising looked at ``how`` much of this constant's value: note it if a field's."""
    mark = node.__dict__.get(FIELD)
    if mark is not None and not isinstance(mark, str):
        mark.look(how)


class _Fact:
    """A constant a local holds (propagation) that is an instruction field's (``mark``)."""

    __slots__ = ("value", "mark")

    def __init__(self, value: Any, mark: Any) -> None:
        self.value, self.mark = value, mark


def _fact(node: ast.Constant) -> Any:
    mark = node.__dict__.get(FIELD)
    return node.value if mark is None else _Fact(node.value, mark)


def _agree(a: Any, b: Any) -> bool:
    """Do two facts hold the same constant?  (Comparing looks at a field's whole value.)"""
    if type(a) is _Fact:
        a.mark.look(VALUE)
        a = a.value
    if type(b) is _Fact:
        b.mark.look(VALUE)
        b = b.value
    return bool(a == b) and type(a) is type(b)


def clone(x: Any) -> Any:
    """A deep copy of an AST (node, list of nodes or leaf) — four times faster than
    :func:`copy.deepcopy`, which dominated translation time."""
    if isinstance(x, list):
        return [clone(i) for i in x]
    if isinstance(x, ast.AST):
        new = type(x).__new__(type(x))
        d = new.__dict__
        for k, v in x.__dict__.items():
            d[k] = clone(v) if isinstance(v, list | ast.AST) else v
        return new
    return x


def walk(node: ast.AST) -> list[ast.AST]:
    """Every node of the tree at ``node``, in :func:`ast.walk`'s order (breadth first) —
    as a list, several times faster than :func:`ast.walk`, which the passes over a
    block's statements spent most of their time in."""
    out = [node]
    for n in out:  # the list grows as it is read: each node's children follow
        d = n.__dict__
        for field in n._fields:
            v = d.get(field)
            if v is None:
                continue
            if isinstance(v, ast.AST):
                out.append(v)
            elif type(v) is list:
                out.extend([x for x in v if isinstance(x, ast.AST)])
    return out


class Reject(Exception):
    """This function cannot be inlined; the block calls it instead."""


def _is_none(value: ast.expr | None) -> bool:
    return value is None or (isinstance(value, ast.Constant) and value.value is None)


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    return [s for s in body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                                    and isinstance(s.value.value, str))]


class Template:
    """What one code object's source says, parsed and checked once."""

    __slots__ = ("body", "params", "local_names", "terminal", "param_stores", "attr_stores",
                 "expression", "size")

    def __init__(self, fn: Any) -> None:
        code = getattr(fn, "__code__", None)
        if code is None or not isinstance(fn, types.FunctionType):
            raise Reject("not a Python function")
        if getattr(fn, INLINE_ATTRIBUTE, True) is False:
            raise Reject("marked no_inline")
        node = _function_node(fn)
        if not isinstance(node, ast.FunctionDef) or node.name != code.co_name:
            raise Reject("source is not a plain function definition")
        self.terminal = any(isinstance(n, ast.Return) and not _is_none(n.value) for n in ast.walk(node))
        a = node.args
        if a.posonlyargs or a.vararg or a.kwarg or a.kwonlyargs or a.defaults:
            raise Reject("signature has defaults, keywords or varargs")
        if code.co_cellvars:
            raise Reject("has inner scopes")
        if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            raise Reject("generator or coroutine")
        self.params = [arg.arg for arg in a.args]
        self.local_names = set(code.co_varnames) - set(self.params)
        self.param_stores: set[str] = set()
        self.attr_stores: dict[str, set[str]] = {p: set() for p in self.params}
        body = _strip_docstring(node.body)
        for n in ast.walk(ast.Module(body=body, type_ignores=[])):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
                          | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
                          | ast.Global | ast.Nonlocal | ast.Yield | ast.YieldFrom | ast.Await
                          | ast.Starred | ast.Delete):
                raise Reject(f"contains {type(n).__name__}")
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _UNSAFE_CALLS:
                raise Reject(f"calls {n.func.id}()")
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in self.attr_stores \
                    and not isinstance(n.ctx, ast.Load):
                self.attr_stores[n.value.id].add(n.attr)
            if isinstance(n, ast.Name) and n.id in self.params and not isinstance(n.ctx, ast.Load):
                self.param_stores.add(n.id)
        self.body = body
        self.size = sum(1 for s in body for _ in ast.walk(s))
        self.expression = _as_expression(body)


#: a source file's function definitions, parsed once: ``filename -> {(first line, name): node}``
_MODULE_FUNCTIONS: dict[str, dict[tuple[int, str], ast.AST]] = {}


def _function_node(fn: Any) -> ast.AST | None:
    """The definition of ``fn`` in its source, parsed.

    Each source file is parsed once and its function definitions indexed by first
    line and name (``inspect.getsource`` tokenises the rest of the file for every
    function: most of what the first translations of a process cost).  A function
    without a file (made by ``exec``) falls back to :func:`inspect.getsource`.
    """
    code = fn.__code__
    filename = code.co_filename
    table = _MODULE_FUNCTIONS.get(filename)
    if table is None:
        table = {}
        lines = linecache.getlines(filename, fn.__globals__)
        if lines:
            try:
                tree = ast.parse("".join(lines))
            except (SyntaxError, ValueError):
                tree = None
            for n in walk(tree) if tree is not None else ():
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
                    first = min([n.lineno, *(d.lineno for d in n.decorator_list)])
                    table[(first, n.name)] = n
        _MODULE_FUNCTIONS[filename] = table
    node = table.get((code.co_firstlineno, code.co_name))
    if node is not None:
        return node
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError) as exc:
        raise Reject(f"no source: {exc}") from None
    return tree.body[0] if tree.body else None


def _as_expression(body: list[ast.stmt]) -> ast.expr | None:
    """``if c: return a`` ... ``return z`` as one conditional expression (else ``None``)."""
    if not body:
        return None
    last = body[-1]
    if isinstance(last, ast.Return):
        expr: ast.expr = last.value if last.value is not None else ast.Constant(None)
    elif isinstance(last, ast.If) and len(last.body) == 1 and len(last.orelse) == 1 \
            and isinstance(last.body[0], ast.Return) and isinstance(last.orelse[0], ast.Return):
        t, f = last.body[0].value, last.orelse[0].value
        expr = ast.IfExp(last.test, t or ast.Constant(None), f or ast.Constant(None))
    else:
        return None
    for s in reversed(body[:-1]):
        if not (isinstance(s, ast.If) and not s.orelse and len(s.body) == 1 and isinstance(s.body[0], ast.Return)):
            return None
        expr = ast.IfExp(s.test, s.body[0].value or ast.Constant(None), expr)
    return expr


_templates: dict[Any, Template | str] = {}


def template(fn: Any) -> Template | None:
    """The parsed template of ``fn`` (``None`` if it cannot be inlined); cached per code object."""
    key = getattr(fn, "__code__", None) or id(fn)
    got = _templates.get(key)
    if got is None:
        try:
            got = Template(fn)
        except Reject as exc:
            got = str(exc) or "rejected"
        if hasattr(fn, "__code__"):
            _templates[key] = got
    return got if isinstance(got, Template) else None


def rejection(fn: Any) -> str:
    """Why ``fn`` is called rather than inlined ('' if it can be inlined)."""
    t = template(fn)
    if t is not None:
        return ""
    got = _templates.get(getattr(fn, "__code__", None))
    return got if isinstance(got, str) else "not a Python function"


_terminal: dict[Any, bool] = {}


def terminal(fn: Any) -> bool:
    """May ``fn`` return a PC (end the block after it)?  ``True`` when unknown."""
    t = template(fn)
    if t is not None:
        return t.terminal
    if not isinstance(fn, types.FunctionType):
        return True
    code = fn.__code__
    got = _terminal.get(code)
    if got is None:
        try:
            node = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
            got = any(isinstance(n, ast.Return) and not _is_none(n.value) for n in ast.walk(node))
        except Exception:  # noqa: BLE001 - no source: assume the worst
            got = True
        _terminal[code] = got
    return got


# --------------------------------------------------------------------------- binding names


class Binder:
    """Names the generated block refers to: objects bound into its namespace."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}
        self._ids: dict[tuple[str, int], str] = {}
        self.sites = itertools.count()

    def bind(self, hint: str, value: Any) -> str:
        key = (hint, id(value))
        name = self._ids.get(key)
        if name is None:
            name = f"{hint}_{len(self._ids)}"
            self._ids[key] = name
            self.namespace[name] = value
        return name

    def value(self, name: str) -> Any:
        return self.namespace.get(name)


def _hint(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)[:24] or "v"


class Context:
    """What specialising one block needs: the binder, the agent's register files, ..."""

    def __init__(self, binder: Binder, regfiles: dict[str, str], used: set[str], agent: Any) -> None:
        self.binder = binder
        #: attribute name on the agent -> register file it is (``x``, or an alias like ``gpr``)
        self.regfiles = regfiles
        self.used = used
        self.agent = agent
        #: the values the translation baked in that live outside the instruction: see :class:`Dependency`
        self.deps: list[Dependency] = []
        #: set while a specialisation is recorded for the template cache (:mod:`tessera.engine.speccache`):
        #: it notes what the result depends on (the instruction's fields read, and how closely)
        self.recorder: Any = None
        #: :attr:`regfiles` as a hashable key (the template cache's), computed when first needed
        self.regfiles_key: tuple[tuple[str, str], ...] | None = None


# --------------------------------------------------------------------------- dependencies

_MISSING = object()


class Dependency:
    """A value a translation read when it was made, and where it read it.

    Module globals and closure variables a semantic function (or an inlined helper)
    reads are bound by value; agent methods are inlined from the agent's class.  A
    translation is reused — by the process-wide code cache for another machine, or by
    the next ``run`` of the same machine — only while every dependency still holds
    the value it had (:func:`unchanged`): a global rebound between two machines gives
    a new translation, never the old value.
    """

    __slots__ = ("kind", "holder", "name", "value")

    def __init__(self, kind: str, holder: Any, name: str, value: Any) -> None:
        self.kind, self.holder, self.name, self.value = kind, holder, name, value

    def current(self) -> Any:
        """The value now (``_MISSING`` if it is gone)."""
        if self.kind == "cell":
            try:
                return self.holder.cell_contents
            except ValueError:
                return _MISSING
        if self.kind == "global":
            return self.holder.get(self.name, _MISSING)
        try:  # "method": an attribute of the agent's class
            return inspect.getattr_static(self.holder, self.name)
        except AttributeError:
            return _MISSING

    def holds(self) -> bool:
        """Does the value still equal (a literal) or be (an object) what the translation read?"""
        now = self.current()
        if now is self.value:
            return True
        return isinstance(self.value, _SIMPLE) and type(now) is type(self.value) and now == self.value

    def describe(self) -> str:
        where = {"cell": "closure variable", "global": "module global", "method": "method"}[self.kind]
        owner = (self.holder.get("__name__", "?") if self.kind == "global"
                 else getattr(self.holder, "__qualname__", "") if self.kind == "method" else "")
        return f"{where} {owner + '.' if owner else ''}{self.name}"

    def __repr__(self) -> str:
        return f"<{self.describe()} = {self.value!r}>"


def unchanged(deps: Any) -> bool:
    """Do all ``deps`` still hold the values the translation read?"""
    return all(d.holds() for d in deps)


_REBOUND: dict[str, frozenset[str]] = {}


def rebound_globals(namespace: dict[str, Any]) -> frozenset[str]:
    """Names the module whose globals are ``namespace`` rebinds from inside functions.

    A ``global NAME`` statement means the module treats ``NAME`` as changing state,
    so blocks read it when they run (like stepping does) instead of baking the value
    in.  Found from the module's source once per module; no source, nothing found.
    The namespace of a :func:`tessera.isa.specialised` copy carries its module's
    ``__name__`` and gets the module's answer (its code is the module's code).
    """
    name = namespace.get("__name__", "")
    found = _REBOUND.get(name)
    if found is None:
        module = sys.modules.get(name)
        if module is None:
            return frozenset()  # not (yet) a module: ask again later rather than remember nothing
        found = frozenset()
        try:
            tree = ast.parse(inspect.getsource(module))
        except (OSError, TypeError, SyntaxError, ValueError):
            tree = None
        if tree is not None:
            found = frozenset(n for node in ast.walk(tree) if isinstance(node, ast.Global)
                              for n in node.names)
        _REBOUND[name] = found
    return found


class _Specialise(ast.NodeTransformer):
    """Rename one function body into the block: parameters, locals, free names, ``ins`` fields."""

    def __init__(self, t: Template, fn: Any, site: int, subst: dict[str, ast.expr], ctx: Context,
                 ins: Any = None, ins_param: str | None = None) -> None:
        self.t, self.site, self.subst, self.ctx = t, site, subst, ctx
        self.ins, self.ins_param = ins, ins_param
        self.fold_ins = ins is not None and ins_param is not None and not t.attr_stores.get(ins_param)
        code = fn.__code__
        self.free = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
        self.globals = fn.__globals__

    def visit_Name(self, node: ast.Name) -> Any:
        name = node.id
        if name in self.subst:
            if not isinstance(node.ctx, ast.Load):
                raise Reject(f"stores to substituted parameter {name}")
            return ast.copy_location(clone(self.subst[name]), node)
        if name in self.t.local_names or name in self.t.params:
            if name == "r" and self.ctx.recorder is not None:
                self.ctx.recorder.r_sites.add(self.site)  # r_L<site> could meet r_L<k>
            return ast.copy_location(ast.Name(f"{name}_L{self.site}", node.ctx), node)
        if not isinstance(node.ctx, ast.Load):
            raise Reject(f"stores to non-local {name}")
        rec = self.ctx.recorder
        if name in self.free:
            cell = self.free[name]
            try:
                value = cell.cell_contents
            except ValueError:
                if rec is not None:
                    rec.guards.append(Dependency("cell", cell, name, _MISSING))
                raise Reject(f"empty closure cell {name}") from None
            self.ctx.deps.append(Dependency("cell", cell, name, value))
        elif name in self.globals:
            rebound = rebound_globals(self.globals)
            if rec is not None and self.globals.get("__name__", "") not in _REBOUND:
                rec.cacheable = False  # the module's answer may still change (see rebound_globals)
            if name in rebound:  # module state: read it at run time
                if rec is not None:
                    rec.present.append((self.globals, name, True))
                holder = ast.Name(self.ctx.binder.bind("G", self.globals), ast.Load())
                return ast.copy_location(ast.Subscript(holder, ast.Constant(name), ast.Load()), node)
            value = self.globals[name]
            self.ctx.deps.append(Dependency("global", self.globals, name, value))
        else:
            if rec is not None:  # a global of that name made later would be read instead
                rec.present.append((self.globals, name, False))
            if hasattr(builtins, name):
                return node
            raise Reject(f"unknown name {name}")
        if isinstance(value, _SIMPLE):
            return ast.copy_location(ast.Constant(value), node)
        return ast.copy_location(ast.Name(self.ctx.binder.bind(_hint(name), value), ast.Load()), node)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = node.value
        if (self.fold_ins and isinstance(base, ast.Name) and base.id == self.ins_param
                and isinstance(node.ctx, ast.Load)):
            rec = self.ctx.recorder
            try:
                value = getattr(self.ins, node.attr)
            except AttributeError:
                if rec is not None:
                    rec.read(node.attr, _MISSING)
                return self.generic_visit(node)  # raises at run time, as it would unfolded
            if rec is not None:
                rec.read(node.attr, value)
            if isinstance(value, _SIMPLE):
                return ast.copy_location(field_constant(self.ctx, node.attr, value), node)
            if isinstance(value, BOUND_FIELDS):
                return ast.copy_location(ast.Name(self.ctx.binder.bind(_hint(node.attr), value),
                                                  ast.Load()), node)
            return self.generic_visit(node)
        return _regfile(self.generic_visit(node), self.ctx)


def _regfile(node: Any, ctx: Context) -> Any:
    """``cpu.<register file>`` → ``R_<file>`` (bound once in the block's prologue)."""
    if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name)
            and node.value.id == "cpu" and node.attr in ctx.regfiles):
        rf = ctx.regfiles[node.attr]
        ctx.used.add(rf)
        return ast.copy_location(ast.Name(f"R_{rf}", ast.Load()), node)
    return node


# --------------------------------------------------------------------------- constant propagation


def _evaluate(node: ast.expr) -> Any:
    """The value of an expression of literals (folding)."""
    expr = ast.fix_missing_locations(ast.Expression(body=node))
    return eval(compile(expr, "<fold>", "eval"), {"__builtins__": {}})  # noqa: S307 - literals only


class _FoldExpr(ast.NodeTransformer):
    """Substitute known constants for names and fold constant sub-expressions."""

    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> Any:
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            value = self.env[node.id]
            if type(value) is _Fact:
                constant = ast.Constant(value.value)
                setattr(constant, FIELD, value.mark)
                return ast.copy_location(constant, node)
            return ast.copy_location(ast.Constant(value), node)
        return node

    def visit_NamedExpr(self, node: ast.NamedExpr) -> Any:
        node.value = self.visit(node.value)
        self.env.pop(node.target.id, None)
        return node

    def _try(self, node: Any) -> Any:
        if all(isinstance(c, ast.Constant) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)):
            for c in ast.iter_child_nodes(node):
                if isinstance(c, ast.Constant):
                    _look(c, VALUE)
            try:
                value = _evaluate(node)
            except Exception:  # noqa: BLE001 - e.g. 1 // 0: leave it to raise at run time
                return node
            if isinstance(value, _SIMPLE):
                return ast.copy_location(ast.Constant(value), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        return self._try(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        self.generic_visit(node)
        return self._try(node)

    def visit_Compare(self, node: ast.Compare) -> Any:
        self.generic_visit(node)
        return self._try(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        values = [self.visit(v) for v in node.values]
        is_and = isinstance(node.op, ast.And)
        kept: list[ast.expr] = []
        for i, v in enumerate(values):
            if isinstance(v, ast.Constant) and i < len(values) - 1:
                _look(v, TRUTH)
                if bool(v.value) == is_and:  # `True and x`, `False or x`: does not decide
                    continue
                if not kept:                 # `False and x`, `True or x`: decides
                    return v
                kept.append(v)
                break
            kept.append(v)
        if len(kept) == 1:
            return kept[0]
        node.values = kept
        return self._try(node)

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        node.test = self.visit(node.test)
        if isinstance(node.test, ast.Constant):
            _look(node.test, TRUTH)
            return self.visit(node.body if node.test.value else node.orelse)
        node.body = self.visit(node.body)
        node.orelse = self.visit(node.orelse)
        return node


def _stored_names(nodes: list[ast.stmt]) -> set[str]:
    return {n.id for s in nodes for n in ast.walk(s) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def propagate(stmts: list[ast.stmt], env: dict[str, Any] | None = None) -> list[ast.stmt]:
    """Constant propagation and folding over structured code (no ``goto``: exact by construction).

    Names assigned a constant are replaced by it until reassigned; an ``if`` whose test
    folds keeps one branch; after a non-constant ``if`` only the facts both branches
    agree on survive; loops, ``with`` and ``try`` forget what they may assign.
    """
    env = {} if env is None else env
    out: list[ast.stmt] = []
    for s in stmts:
        if isinstance(s, ast.If):
            out.extend(_propagate_if(s, env))
        elif isinstance(s, ast.For | ast.While | ast.With | ast.Try):
            out.append(_propagate_compound(s, env))
        elif isinstance(s, ast.Assign | ast.AugAssign):
            out.append(_propagate_assign(s, env))
        else:
            s = _FoldExpr(env).visit(s)
            _forget_stored(s, env)
            out.append(s)
    return out


def _forget_stored(s: ast.stmt, env: dict[str, Any]) -> None:
    for name in _stored_names([s]):
        env.pop(name, None)


def _propagate_if(s: ast.If, env: dict[str, Any]) -> list[ast.stmt]:
    """A folded test keeps one branch; otherwise keep the facts both branches agree on."""
    s.test = _FoldExpr(env).visit(s.test)
    if isinstance(s.test, ast.Constant):
        _look(s.test, TRUTH)
        return propagate(s.body if s.test.value else s.orelse, env)
    env_a, env_b = dict(env), dict(env)
    s.body = propagate(s.body, env_a) or [ast.Pass()]
    s.orelse = propagate(s.orelse, env_b)
    env.clear()
    env.update({k: v for k, v in env_a.items() if k in env_b and _agree(env_b[k], v)})
    return [s]


def _propagate_compound(s: ast.For | ast.While | ast.With | ast.Try, env: dict[str, Any]) -> ast.stmt:
    """Loops, ``with`` and ``try``: forget what they may assign, then fold inside each part."""
    _forget_stored(s, env)
    inner = dict(env)
    for field in ("body", "orelse", "finalbody"):
        part = getattr(s, field, None)
        if part:
            setattr(s, field, propagate(part, dict(inner)) or [ast.Pass()])
    for h in getattr(s, "handlers", []):
        h.body = propagate(h.body, dict(inner)) or [ast.Pass()]
    if isinstance(s, ast.While):
        s.test = _FoldExpr(dict(inner)).visit(s.test)
    if isinstance(s, ast.For):
        s.iter = _FoldExpr(dict(env)).visit(s.iter)
    if isinstance(s, ast.With):
        for item in s.items:
            item.context_expr = _FoldExpr(dict(env)).visit(item.context_expr)
    return s


def _propagate_assign(s: ast.Assign | ast.AugAssign, env: dict[str, Any]) -> ast.stmt:
    """Fold the value; a name assigned a simple constant becomes a fact, others are forgotten."""
    if isinstance(s, ast.AugAssign):  # Python evaluates the target's parts, then the value
        if not isinstance(s.target, ast.Name):
            s.target = _FoldExpr(env).visit(s.target)
        s.value = _FoldExpr(env).visit(s.value)
        if isinstance(s.target, ast.Name):
            env.pop(s.target.id, None)
        return s
    if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
        s.value = _FoldExpr(env).visit(s.value)
        name = s.targets[0].id
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, _SIMPLE):
            env[name] = _fact(s.value)
        else:
            env.pop(name, None)
        return s
    s.value = _FoldExpr(env).visit(s.value)  # the value first, then the targets (``r[a] = (a := 1)``)
    s.targets = [_FoldExpr(env).visit(t) for t in s.targets]
    _forget_stored(s, env)
    return s


def _pure(node: ast.AST) -> bool:
    return not any(isinstance(n, ast.Call | ast.NamedExpr | ast.Await | ast.Yield) for n in ast.walk(node))


_SAFE_OPS = (ast.Add, ast.Sub, ast.Mult, ast.BitAnd, ast.BitOr, ast.BitXor, ast.UAdd, ast.USub,
             ast.Invert, ast.Not, ast.And, ast.Or)


def _cannot_raise(node: ast.AST) -> bool:
    """Is evaluating ``node`` free of exceptions (on ints)?  Division, shifts, indexing and
    attribute reads can raise, so an expression with them must be evaluated exactly
    where the original code evaluated it: never dropped, never moved under a condition."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant | ast.Name | ast.Load | ast.expr_context | ast.cmpop):
            continue
        if isinstance(n, ast.BinOp | ast.UnaryOp | ast.BoolOp):
            if not isinstance(n.op, _SAFE_OPS):
                return False
            continue
        if isinstance(n, ast.Compare | ast.IfExp) or isinstance(n, _SAFE_OPS):
            continue
        return False
    return True


def _conditional(tree: ast.AST) -> set[int]:
    """Ids of the nodes of ``tree`` that are evaluated only under a condition (``a and b``:
    ``b``; ``x if c else y``: ``x`` and ``y``)."""
    found: set[int] = set()
    for n in ast.walk(tree):
        parts: list[ast.AST] = []
        if isinstance(n, ast.BoolOp):
            parts = list(n.values[1:])
        elif isinstance(n, ast.IfExp):
            parts = [n.body, n.orelse]
        for part in parts:
            found.update(id(m) for m in ast.walk(part))
    return found


class _Put(ast.NodeTransformer):
    """Replace one particular ``Name`` node by an expression."""

    def __init__(self, target: ast.Name, value: ast.expr) -> None:
        self.target, self.value = target, value

    def visit_Name(self, node: ast.Name) -> Any:
        return clone(self.value) if node is self.target else node


def forward(stmts: list[ast.stmt], counts: tuple[dict[str, int], dict[str, int]] | None = None) -> list[ast.stmt]:
    """Fold single-use temporaries into the next statement: ``a = R_r[2]; b = a + 1`` → ``b = R_r[2] + 1``.

    Only when the local is stored once and read once in the whole function (``counts``:
    its stores and loads, when nested blocks are folded), that read is in the very next
    statement, and both are free of calls — so nothing can run between the original
    evaluation and the new one, and the order of reads is unchanged.
    """
    if counts is None:
        counts = ({}, {})
        for st in stmts:
            for n in ast.walk(st):
                if isinstance(n, ast.Name):
                    table = counts[1] if isinstance(n.ctx, ast.Load) else counts[0]
                    table[n.id] = table.get(n.id, 0) + 1
    stores, loads = counts  # still true after a fold: it moves reads, and removes the name
    out = list(stmts)
    i = len(out) - 2
    while i >= 0:
        st, nxt = out[i], out[i + 1]
        if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
                and "_L" in st.targets[0].id and stores.get(st.targets[0].id) == 1
                and loads.get(st.targets[0].id) == 1 and _pure(st.value) and _pure(nxt)
                and not isinstance(nxt, ast.If | ast.For | ast.While | ast.With | ast.Try)):
            name, value = st.targets[0].id, st.value
            used = [n for n in ast.walk(nxt) if isinstance(n, ast.Name) and n.id == name
                    and isinstance(n.ctx, ast.Load)]
            if len(used) == 1 and (_cannot_raise(value) or id(used[0]) not in _conditional(nxt)):
                out[i + 1] = _Put(used[0], value).visit(nxt)
                del out[i]
        i -= 1
    for st in out:
        for field in ("body", "orelse"):
            part = getattr(st, field, None)
            if isinstance(part, list) and part and isinstance(part[0], ast.stmt):
                setattr(st, field, forward(part, counts))  # a nested local may be read after its block
    return out


class _DropUnread(ast.NodeTransformer):
    """Remove ``local = value`` for renamed locals not in ``loaded`` (and values without effects)."""

    def __init__(self, loaded: set[str]) -> None:
        self.loaded = loaded

    def visit_Assign(self, node: ast.Assign) -> Any:
        t = node.targets[0] if len(node.targets) == 1 else None
        if (isinstance(t, ast.Name) and "_L" in t.id and t.id not in self.loaded
                and _cannot_raise(node.value)):  # a value that may raise stays: so does its exception
            return None
        return node


def unalias_registers(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Read register files through their block locals: ``x_L3 = R_x; x_L3[5] = ...`` →
    ``R_x[5] = ...``.

    A semantic function's ``x = hart.x`` becomes such an alias in every instruction;
    the ``R_<file>`` locals are bound once per block and never stored again, so a
    local stored once, from one of them, can be replaced by it everywhere it is read
    (two fewer operations per instruction in the generated code).
    """
    stores: dict[str, int] = {}
    aliases: dict[str, str] = {}
    for n in walk(ast.Module(body=stmts, type_ignores=[])):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
              and isinstance(n.value, ast.Name) and n.value.id.startswith("R_")):
            aliases[n.targets[0].id] = n.value.id
    aliases = {a: rf for a, rf in aliases.items() if stores.get(a) == 1}
    if not aliases:
        return stmts
    module = _Unalias(aliases).visit(ast.Module(body=stmts, type_ignores=[]))
    _fill_empty(module)
    return list(module.body)


class _Unalias(ast.NodeTransformer):
    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases

    def visit_Assign(self, node: ast.Assign) -> Any:
        target = node.targets[0] if len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id in self.aliases:
            return None
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> Any:
        rf = self.aliases.get(node.id)
        if rf is not None and isinstance(node.ctx, ast.Load):
            return ast.copy_location(ast.Name(rf, ast.Load()), node)
        return node


def drop_dead_locals(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Drop assignments to renamed locals (``*_L<n>``) nobody reads any more (propagation
    replaced the reads by literals); values with calls stay, for their effects, and so do
    values that may raise (``1 // x``, ``R_r[i]``), for their exceptions."""
    loaded = {n.id for s in stmts for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    loaded |= {n.target.id for s in stmts for n in ast.walk(s)  # `x += v` reads x
               if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
    module = _DropUnread(loaded).visit(ast.Module(body=stmts, type_ignores=[]))
    _fill_empty(module)
    return list(module.body)


# --------------------------------------------------------------------------- returns


def _has_return(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def _always_returns(stmts: list[ast.stmt]) -> bool:
    """Does every path through ``stmts`` end in ``return`` or ``raise``?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return | ast.Raise):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def eliminate_returns(stmts: list[ast.stmt], result: str | None = None) -> list[ast.stmt]:
    """Rewrite returns into structure: ``if c: A; return`` + ``B`` becomes ``if c: A`` ``else: B``.

    With ``result`` (inlining ``t = f(...)``) a ``return v`` becomes ``t = v`` and falling
    off the end ``t = None``; without, a returned value is still evaluated if it could
    have effects.  A return inside a loop, ``with`` or ``try``: :class:`Reject`.
    """
    out: list[ast.stmt] = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            value = s.value if s.value is not None else ast.Constant(None)
            if result is not None:
                out.append(ast.copy_location(ast.Assign([ast.Name(result, ast.Store())], value), s))
            elif any(isinstance(n, ast.Call) for n in ast.walk(value)):
                out.append(ast.copy_location(ast.Expr(value), s))
            return out
        if isinstance(s, ast.If) and _has_return([s]):
            rest = stmts[i + 1:]
            body_ends, else_ends = _always_returns(s.body), _always_returns(s.orelse)
            if not (body_ends or else_ends) and rest and sum(1 for r in rest for _ in ast.walk(r)) > 80:
                raise Reject("an early return would duplicate a large tail")
            body = eliminate_returns(s.body + ([] if body_ends else clone(rest)), result)
            orelse = eliminate_returns(s.orelse + ([] if else_ends else rest), result)
            out.append(ast.If(test=s.test, body=body or [ast.Pass()], orelse=orelse))
            return out
        if _has_return([s]):
            raise Reject(f"return inside {type(s).__name__}")
        out.append(s)
    if result is not None:
        out.append(ast.Assign([ast.Name(result, ast.Store())], ast.Constant(None)))
    return out


class _TerminalReturns(ast.NodeTransformer):
    """In the block's last instruction a ``return`` returns the block's next PC."""

    def __init__(self, fallthrough: int, k: int, ctx: Context) -> None:
        self.fallthrough = fallthrough
        self.k = k
        self.ctx = ctx

    def visit_Return(self, node: ast.Return) -> Any:
        value = node.value
        if _is_none(value):
            return ast.copy_location(ast.Return(field_constant(self.ctx, "next", self.fallthrough)), node)
        if isinstance(value, ast.Constant):
            return node
        if isinstance(value, ast.IfExp):  # `return t if c else None`: a branch, as statements
            branches = [self.visit_Return(ast.copy_location(ast.Return(v), node)) for v in (value.body, value.orelse)]
            return ast.copy_location(ast.If(value.test, [branches[0]], [branches[1]]), node)
        r = f"r_L{self.k}"
        assert value is not None
        test = ast.Compare(ast.NamedExpr(ast.Name(r, ast.Store()), value), [ast.Is()], [ast.Constant(None)])
        fallthrough = field_constant(self.ctx, "next", self.fallthrough)
        return ast.copy_location(ast.Return(ast.IfExp(test, fallthrough, ast.Name(r, ast.Load()))), node)


# --------------------------------------------------------------------------- calls


def _atom(node: ast.expr) -> bool:
    """Cheap and free of effects, so it may be evaluated late or twice inside an expression."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return isinstance(node.value, ast.Name)
    if isinstance(node, ast.Subscript):
        return (isinstance(node.value, ast.Name) or _atom(node.value)) and isinstance(node.slice, ast.Constant)
    return False


def _fixed(node: ast.expr, ctx: Context) -> bool:
    """Safe to substitute for a parameter of an inlined *statement* body (cannot change meanwhile):
    a literal, the agent, a renamed local, a register-file local or a bound object."""
    if isinstance(node, ast.Constant):
        return True
    if not isinstance(node, ast.Name):
        return False
    name = node.id
    return name == "cpu" or "_L" in name or name.startswith("R_") or name in ctx.binder.namespace


class _InlineExpressions(ast.NodeTransformer):
    """Replace calls to expression functions whose arguments are atoms by their expression."""

    def __init__(self, calls: _Calls) -> None:
        self.calls = calls

    def visit_Call(self, call: ast.Call) -> Any:
        self.generic_visit(call)
        calls = self.calls
        got = calls._prepare(call)
        if got is None:
            return call
        fn, t, args = got
        if t.expression is None or not all(_atom(a) for a in args):
            return call
        site = next(calls.ctx.binder.sites)
        subst = dict(zip(t.params, args, strict=True))
        try:
            expr = _Specialise(t, fn, site, subst, calls.ctx).visit(clone(t.expression))
        except Reject:
            return call
        calls.changed = True
        return ast.copy_location(expr, call)


class _Calls:
    """Inline one level of calls to plain functions and agent methods."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.changed = False

    def resolve(self, func: ast.expr) -> tuple[Any, ast.expr | None]:
        """``(function, receiver)`` for a call target known at translation time, else ``(None, None)``."""
        if isinstance(func, ast.Name):
            value = self.ctx.binder.value(func.id)
            if isinstance(value, types.FunctionType):
                return value, None
            return None, None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "cpu":
            agent = self.ctx.agent
            if agent is None:
                return None, None
            rec = self.ctx.recorder
            if func.attr in getattr(agent, "__dict__", {}):
                if rec is not None:
                    rec.probes.append((func.attr, True, None))
                return None, None
            meth = inspect.getattr_static(type(agent), func.attr, _MISSING)
            if isinstance(meth, types.FunctionType):
                self.ctx.deps.append(Dependency("method", type(agent), func.attr, meth))
                if rec is not None:
                    rec.probes.append((func.attr, False, None))  # the dependency checks the method
                return meth, ast.Name("cpu", ast.Load())
            if rec is not None:
                rec.probes.append((func.attr, False, meth))
        return None, None

    def _prepare(self, call: ast.Call) -> tuple[Any, Template, list[ast.expr]] | None:
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        fn, receiver = self.resolve(call.func)
        if fn is None:
            return None
        t = template(fn)
        if t is None or t.size > MAX_CALLEE:
            return None
        args = ([receiver] if receiver is not None else []) + list(call.args)
        if len(args) != len(t.params):
            return None
        return fn, t, args

    def expression(self, node: ast.expr) -> ast.expr:
        """Inline calls to expression functions (``if c: return a`` ... ``return z``) in ``node``."""
        return _InlineExpressions(self).visit(node)

    def statements(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            out.extend(self.statement(s))
        return out

    def statement(self, s: ast.stmt) -> list[ast.stmt]:
        for field in ("body", "orelse", "finalbody"):
            part = getattr(s, field, None)
            if isinstance(part, list) and part and isinstance(part[0], ast.stmt):
                setattr(s, field, self.statements(part))
        for h in getattr(s, "handlers", []):
            h.body = self.statements(h.body)
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            got = self.procedure(s.value, None)
            if got is not None:
                return got
        if (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                and isinstance(s.value, ast.Call)):
            got = self.procedure(s.value, s.targets[0].id)
            if got is not None:
                return got
        for field, value in ast.iter_fields(s):
            if isinstance(value, ast.expr):
                setattr(s, field, self.expression(value))
            elif isinstance(value, list):
                setattr(s, field, [self.expression(v) if isinstance(v, ast.expr) else v for v in value])
        return [s]

    def procedure(self, call: ast.Call, result: str | None) -> list[ast.stmt] | None:
        """Inline ``f(args)`` / ``t = f(args)`` as statements (arguments evaluated first, in order)."""
        got = self._prepare(call)
        if got is None:
            return None
        fn, t, args = got
        args = [self.expression(a) for a in args]
        site = next(self.ctx.binder.sites)
        pre: list[ast.stmt] = []
        subst: dict[str, ast.expr] = {}
        # `f(c, (c := 0))`: an argument rebinds a local another one names, so that one is evaluated in order
        rebound = {n.target.id for a in args for n in ast.walk(a) if isinstance(n, ast.NamedExpr)}
        for p, a in zip(t.params, args, strict=True):
            if p not in t.param_stores and _fixed(a, self.ctx) and getattr(a, "id", None) not in rebound:
                subst[p] = a
            else:
                tmp = f"{p}_L{site}"
                if p == "r" and self.ctx.recorder is not None:
                    self.ctx.recorder.r_sites.add(site)
                pre.append(ast.copy_location(ast.Assign([ast.Name(tmp, ast.Store())], a), call))
                # the body's own renaming turns the parameter into this same local
        try:
            spec = _Specialise(t, fn, site, subst, self.ctx)
            body = [spec.visit(s) for s in clone(t.body)]
            body = eliminate_returns(body, result)
        except Reject:
            return None
        self.changed = True
        return pre + body


# --------------------------------------------------------------------------- one instruction


def _fill_empty(tree: ast.AST) -> None:
    """Folding can empty a compound statement's body; Python needs at least ``pass``."""
    for n in ast.walk(tree):
        if isinstance(n, ast.stmt | ast.excepthandler):  # `except E:` needs a body too
            body = getattr(n, "body", None)
            if isinstance(body, list) and not body:
                body.append(ast.Pass())


def specialise(fn: Any, ins: Any, k: int, ctx: Context, *, last: bool) -> list[ast.stmt] | None:
    """Statements executing ``fn(agent, ins)`` inline as the ``k``-th instruction of a block.

    ``None`` when ``fn`` cannot be inlined.  When ``last`` the statements end by
    returning the next PC.  The statements, and what making them binds, sites and
    notes in ``ctx``, are exactly :func:`specialise_now`'s; they are made once per
    semantic function and shape of operands and copied from then on
    (:mod:`tessera.engine.speccache`), because making them is most of what
    translating a block costs.
    """
    t = template(fn)
    if t is None or len(t.params) != 2 or t.param_stores or t.size > MAX_BODY:
        return None
    return _speccache.specialise(fn, ins, k, ctx, last)


def specialise_now(fn: Any, ins: Any, k: int, ctx: Context, *, last: bool) -> list[ast.stmt] | None:
    """:func:`specialise`, made from the function's template now (no template cache)."""
    t = template(fn)
    if t is None or len(t.params) != 2 or t.param_stores or t.size > MAX_BODY:
        return None
    cpu_param, ins_param = t.params
    rec = ctx.recorder
    deps_before = len(ctx.deps)
    try:
        site = next(ctx.binder.sites)
        subst: dict[str, ast.expr] = {cpu_param: ast.Name("cpu", ast.Load()),
                                      ins_param: ast.Name(ctx.binder.bind("I", ins), ast.Load())}
        spec = _Specialise(t, fn, site, subst, ctx, ins=ins, ins_param=ins_param)
        spec.fold_ins = not t.attr_stores.get(ins_param)
        body = [spec.visit(s) for s in clone(t.body)]
        body = propagate(body)
        for _ in range(MAX_DEPTH):
            calls = _Calls(ctx)
            body = calls.statements(body)
            if not calls.changed:
                break
            body = propagate(body)
        if t.terminal:
            if not last:
                raise Reject("a control transfer must end its block")
            if rec is not None:
                rec.read("next", ins.next)
            body = [_TerminalReturns(ins.next, k, ctx).visit(s) for s in body]
            body.append(ast.Return(field_constant(ctx, "next", ins.next)))
        else:
            body = eliminate_returns(body)
            if last:
                if rec is not None:
                    rec.read("next", ins.next)
                body.append(ast.Return(field_constant(ctx, "next", ins.next)))
        body = drop_dead_locals(forward(unalias_registers(body)))
        module = ast.Module(body=body, type_ignores=[])
        _fill_empty(module)
        body = module.body
        if sum(1 for s in body for _ in ast.walk(s)) > MAX_NODES:
            raise Reject("too large once specialised")
    except Reject:
        if rec is not None:  # the answer depends on them all the same
            rec.guards.extend(ctx.deps[deps_before:])
        del ctx.deps[deps_before:]  # called instead: nothing of it is baked in
        return None
    return body


def may_write(stmts: list[ast.stmt]) -> bool:
    """Could these statements write memory (and so invalidate code)?  Any non-trivial call could."""
    for s in stmts:
        for n in walk(s):
            if isinstance(n, ast.Call):
                f = n.func
                if isinstance(f, ast.Name) and f.id in _NO_SIDE_EFFECT_BUILTINS:
                    continue
                return True
    return False


# --------------------------------------------------------------------------- register writes


def register_writes(stmts: list[ast.stmt], ctx: Context) -> frozenset[tuple[str, int]] | None:
    """The registers these specialised statements may write, as ``(file, index)`` pairs.

    ``None`` when that cannot be known statically: a call (other than a few builtins
    that touch nothing, or the construction of an exception being raised — the
    instruction then does not retire), a store into a register file at an index that
    is not a constant, a store into anything but a register file, a local or an
    attribute of the agent that is not a register file, or a name bound both to a
    register file and to something else.  Observers use the answer to compare only
    those registers after the instruction (see :class:`tessera.engine.capture.Capture`),
    so when in doubt the answer is ``None``.
    """
    files: dict[str, str] = {}       # local name -> the register file it is
    others: set[str] = set()          # local names bound to anything else
    aliasing: set[int] = set()        # ids of the Name targets of ``name = R_<file>``
    raised: set[int] = set()          # ids of calls that build a raised exception
    module = ast.Module(body=stmts, type_ignores=[])
    for n in ast.walk(module):
        if isinstance(n, ast.Raise) and n.exc is not None:
            raised.update(id(c) for c in ast.walk(n.exc) if isinstance(c, ast.Call))
        elif (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
              and isinstance(n.value, ast.Name) and n.value.id.startswith("R_")):
            files[n.targets[0].id] = n.value.id[2:]
            aliasing.add(id(n.targets[0]))
    for n in ast.walk(module):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in aliasing:
            others.add(n.id)
    if set(files) & others:
        return None
    writes: set[tuple[str, int]] = set()
    for n in ast.walk(module):
        if isinstance(n, ast.Call):
            if id(n) in raised or (isinstance(n.func, ast.Name) and n.func.id in _NO_SIDE_EFFECT_BUILTINS):
                continue
            return None
        if isinstance(n, ast.Delete | ast.Global | ast.Nonlocal | ast.Lambda | ast.Yield | ast.YieldFrom
                      | ast.Await | ast.FunctionDef | ast.ClassDef):
            return None
        if isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load):
            base, index = n.value, n.slice
            if isinstance(base, ast.Name):
                rf = base.id[2:] if base.id.startswith("R_") else files.get(base.id)
                if rf is None or not (isinstance(index, ast.Constant) and type(index.value) is int):
                    return None
                writes.add((rf, index.value))
            elif not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name)
                      and base.value.id == "cpu" and _plain_state(ctx, base.attr)):
                return None
        elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load):
            if not (isinstance(n.value, ast.Name) and n.value.id == "cpu" and _plain_state(ctx, n.attr)):
                return None
    return frozenset(writes)


def _plain_state(ctx: Context, attr: str) -> bool:
    """Is ``agent.<attr>`` plain state that holds no register file (storing into it, or
    into an item of it, cannot change a register)?  A property or other descriptor could
    do anything when stored through, so it is not; neither is ``regs``."""
    if attr in ctx.regfiles or attr == "regs" or ctx.agent is None:
        return False
    try:
        found = inspect.getattr_static(ctx.agent, attr)
    except AttributeError:
        return True   # created by the store itself: a new attribute is no register file
    if hasattr(type(found), "__set__") or hasattr(type(found), "__get__") and not callable(found):
        return False  # a property or another descriptor
    regs = getattr(ctx.agent, "regs", None)
    return not (isinstance(regs, dict) and any(found is v for v in regs.values()))


from tessera.engine import speccache as _speccache  # noqa: E402 - it builds on this module
