"""Parse with cel-python's grammar and build cel-go's syntax tree from lark's parse tree: operators
as calls, ``&&``/``||`` chains balanced, macros expanded as ``parser/macro.go`` does, the nesting
limit enforced, and errors placed at line and column in cel-go's format.

The only module of the package that needs cel-python (celpy, lark, pendulum: ~90 ms to import),
so ``compile`` imports it on the first compile, not when the package loads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

import lark
from celpy.celparser import CELParser
from celpy.evaluation import celbytes, celstr

from .cel_types import BOOL, BYTES, DOUBLE, INT, NULL, STRING, UINT
from .errors import CompileError
from .limits import I64_MAX, I64_MIN, MAX_RECURSION_DEPTH, U64
from .syntax import Call, Const, Ident, ListLit, Macro, MapLit, Node, Select
from .values import Uint

_BINARY_OPS: Final = {
    "relation_lt": "_<_",
    "relation_le": "_<=_",
    "relation_gt": "_>_",
    "relation_ge": "_>=_",
    "relation_eq": "_==_",
    "relation_ne": "_!=_",
    "relation_in": "@in",
    "addition_add": "_+_",
    "addition_sub": "_-_",
    "multiplication_mul": "_*_",
    "multiplication_div": "_/_",
    "multiplication_mod": "_%_",
}
_PASS_THROUGH: Final = frozenset({"member", "primary"})


# How often a long parse or build calls its ``checkpoint`` (a CPU budget's look: a few µs each).
_TOKENS_PER_CHECKPOINT = 256
_NODES_PER_CHECKPOINT = 1024


class Builder:
    """Lark's parse tree to the syntax tree, expanding macros as cel-go's parser does.
    ``checkpoint`` is called every so often and may raise to give up."""

    def __init__(self, checkpoint: Callable[[], None] | None = None) -> None:
        self._next_id = 0
        self._checkpoint = checkpoint
        self._visits = 0

    def _pos(self, item: lark.Tree[Any] | lark.Token) -> tuple[int, int]:
        if isinstance(item, lark.Token):
            return item.line or 1, item.column or 1
        meta = item.meta
        if meta.empty:
            return 1, 1
        return getattr(meta, "line", None) or 1, getattr(meta, "column", None) or 1

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _call(self, at: tuple[int, int], fn: str, target: Node | None, args: list[Node]) -> Call:
        return Call(self._id(), at[0], at[1], fn, target, args)

    def build(self, tree: lark.Tree[Any], depth: int = 0) -> Node:
        self._visits += 1
        if self._checkpoint is not None and not self._visits % _NODES_PER_CHECKPOINT:
            self._checkpoint()
        # Descend through the grammar's one-child layers without recursing.
        while True:
            if depth > MAX_RECURSION_DEPTH:
                line, column = self._pos(tree)
                raise CompileError(f"expression recursion limit exceeded: {MAX_RECURSION_DEPTH}", line, column)
            kids = tree.children
            if tree.data in _PASS_THROUGH or (
                tree.data
                in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary")
                and len(kids) == 1
            ):
                tree = kids[0]
                continue
            if tree.data == "paren_expr":
                tree, depth = kids[0], depth + 1
                continue
            break
        rule, kids, at = tree.data, tree.children, self._pos(tree)
        down = depth + 1
        if rule == "expr":
            return self._call(at, "_?_:_", None, [self.build(k, down) for k in kids])
        if rule in ("conditionalor", "conditionaland"):
            terms: list[lark.Tree[Any]] = []
            node = tree
            while node.data == rule and len(node.children) == 2:
                terms.append(node.children[1])
                node = node.children[0]
            terms.append(node)
            built = [self.build(t, down) for t in reversed(terms)]
            return self._balance("_||_" if rule == "conditionalor" else "_&&_", built, at)
        if rule in ("relation", "addition", "multiplication"):
            op_tree, right = kids
            left = op_tree.children[0]
            return self._call(
                self._pos(op_tree), _BINARY_OPS[op_tree.data], None, [self.build(left, down), self.build(right, down)]
            )
        if rule == "unary":
            ops: list[str] = []
            node = tree
            while node.data == "unary" and len(node.children) == 2:
                ops.append(node.children[0].data)
                node = node.children[1]
            operand = self.build(node, down)
            # cel-go drops an even run of '!' or '-' (parser.go visitLogicalNot / visitNegate).
            if len(set(ops)) == 1 and len(ops) % 2 == 0:
                return operand
            for op in reversed(ops if len(set(ops)) > 1 else ops[:1]):
                operand = self._call(at, "!_" if op == "unary_not" else "-_", None, [operand])
            return operand
        if rule == "member_dot":
            operand_tree, name = kids
            return Select(self._id(), *self._pos(name), self.build(operand_tree, down), str(name))
        if rule == "member_dot_arg":
            target_tree, name = kids[0], kids[1]
            args = self._args(kids[2] if len(kids) > 2 else None, down)
            return self._member_call(target_tree, str(name), args, self._pos(name), down)
        if rule == "member_index":
            return self._call(at, "_[_]", None, [self.build(kids[0], down), self.build(kids[1], down)])
        if rule == "member_object":
            raise CompileError("message construction is not supported in a device selector", *at)
        if rule in ("ident_arg", "dot_ident_arg"):
            name = str(kids[0])
            args = self._args(kids[1] if len(kids) > 1 else None, down)
            if name == "has" and len(args) == 1:
                arg = args[0]
                if not isinstance(arg, Select):
                    raise CompileError("invalid argument to has() macro", *at)
                arg.test_only = True
                return arg
            return self._call(self._pos(kids[0]), name, None, args)
        if rule in ("ident", "dot_ident"):
            return Ident(self._id(), *self._pos(kids[0]), str(kids[0]))
        if rule == "list_lit":
            return ListLit(self._id(), *at, self._args(kids[0] if kids else None, down))
        if rule == "map_lit":
            flat = self._args(kids[0] if kids else None, down, rule="mapinits")
            return MapLit(self._id(), *at, list(zip(flat[0::2], flat[1::2], strict=True)))
        if rule == "literal":
            token = kids[0]
            assert isinstance(token, lark.Token)
            return self._literal(token)
        raise CompileError(f"unexpected syntax: {rule}", *at)  # pragma: no cover - the grammar's rules are all above

    def _args(self, tree: lark.Tree[Any] | None, depth: int, rule: str = "exprlist") -> list[Node]:
        if tree is None:
            return []
        return [self.build(k, depth) for k in tree.children]

    def _balance(self, fn: str, terms: list[Node], at: tuple[int, int]) -> Node:
        """cel-go's parser/helper.go balancer: a balanced tree for a chain of && or ||."""
        if len(terms) == 1:
            return terms[0]
        mid = len(terms) // 2
        return self._call(at, fn, None, [self._balance(fn, terms[:mid], at), self._balance(fn, terms[mid:], at)])

    def _member_call(
        self, target_tree: lark.Tree[Any], name: str, args: list[Node], at: tuple[int, int], depth: int
    ) -> Node:
        if name == "bind" and _is_ident(target_tree, "cel") and len(args) == 3:
            var = args[0]
            if not isinstance(var, Ident):
                raise CompileError("cel.bind() variable names must be simple identifiers", *at)
            return Macro(self._id(), *at, "bind", args[1], var.name, args[2])
        target = self.build(target_tree, depth)
        macro_arity = {"all": (2,), "exists": (2,), "exists_one": (2,), "map": (2, 3), "filter": (2,)}
        if name in macro_arity and len(args) in macro_arity[name]:
            var = args[0]
            if not isinstance(var, Ident):
                raise CompileError("argument must be a simple name", var.line, var.column)
            if name == "map":
                predicate = args[1] if len(args) == 3 else None
                return Macro(self._id(), *at, "map", target, var.name, predicate, args[-1])
            return Macro(self._id(), *at, name, target, var.name, args[1])
        return self._call(at, name, target, args)

    def _literal(self, token: lark.Token) -> Const:
        line, column = self._pos(token)
        kind, text = token.type, str(token)
        value: Any
        try:
            if kind == "INT_LIT":
                value, ctype = int(text, 0) if "x" not in text.lower() else _hex(text), INT
                if not I64_MIN <= value <= I64_MAX:
                    raise ValueError
            elif kind == "UINT_LIT":
                digits = text[:-1]
                value, ctype = Uint(int(digits, 0) if "x" not in digits.lower() else _hex(digits)), UINT
                if not 0 <= value <= U64:
                    raise ValueError
            elif kind == "FLOAT_LIT":
                value, ctype = float(text), DOUBLE
            elif kind in ("STRING_LIT", "MLSTRING_LIT"):
                value, ctype = str(celstr(token)), STRING
            elif kind == "BYTES_LIT":
                value, ctype = bytes(celbytes(token)), BYTES
            elif kind == "BOOL_LIT":
                value, ctype = text == "true", BOOL
            else:
                value, ctype = None, NULL
        except ValueError:
            raise CompileError(f"invalid {kind.removesuffix('_LIT').lower()} literal", line, column) from None
        return Const(self._id(), line, column, value, ctype)


def _hex(text: str) -> int:
    negative = text.startswith("-")
    value = int(text.lstrip("-")[2:], 16)
    return -value if negative else value


def _is_ident(tree: lark.Tree[Any], name: str) -> bool:
    while isinstance(tree, lark.Tree) and tree.data in ("member", "primary") and len(tree.children) == 1:
        tree = tree.children[0]
    return isinstance(tree, lark.Tree) and tree.data == "ident" and str(tree.children[0]) == name


def format_issue(expression: str, message: str, line: int, column: int) -> str:
    """cel-go's issues.String(): ``ERROR: <input>:L:C: message`` and the line with a caret."""
    lines = expression.splitlines() or [""]
    source = lines[min(line, len(lines)) - 1]
    return f"ERROR: <input>:{line}:{column}: {message}\n | {source}\n | {'.' * (column - 1)}^"


_PARSER_LOCK = threading.Lock()


def parse(expression: str, checkpoint: Callable[[], None] | None = None) -> lark.Tree[Any]:
    """cel-python's parse tree of ``expression``; raise :class:`CompileError` ("Syntax error: ...",
    at the line and column) as ``CELParser.parse`` words it. ``checkpoint`` is called every so
    many tokens and may raise to give up: lark's interactive parser feeds the tokens one by one,
    as ``Lark.parse`` does, so a long expression can be stopped mid-parse."""
    with _PARSER_LOCK:  # one parse at a time on the shared parser, as with celpy's CELParser.parse
        if CELParser.CEL_PARSER is None:
            CELParser()  # builds the LALR parser for celpy's grammar, once per process
        assert CELParser.CEL_PARSER is not None
        try:
            session = CELParser.CEL_PARSER.parse_interactive(expression)
            last = None
            for count, token in enumerate(session.iter_parse(), 1):
                last = token
                if checkpoint is not None and not count % _TOKENS_PER_CHECKPOINT:
                    checkpoint()
            # $END at the last token, where Lark.parse places it (lark leaves feed_eof unannotated)
            tree: lark.Tree[Any] = session.feed_eof(last)  # type: ignore[no-untyped-call]
        except (lark.exceptions.UnexpectedToken, lark.exceptions.UnexpectedCharacters) as exc:
            raise _syntax_error(exc.get_context(expression), exc.line, exc.column) from None
        except (lark.exceptions.LexError, lark.exceptions.ParseError) as exc:  # pragma: no cover - not raised
            raise _syntax_error(str(exc.args[0]) if exc.args else "", None, None) from None
        return tree


def _syntax_error(context: str, line: int | None, column: int | None) -> CompileError:
    """The first line of lark's context, as kubeviz has always quoted cel-python's CELParseError."""
    detail = context.strip().splitlines()[0] if context.strip() else ""
    return CompileError(f"Syntax error: {detail}" if detail else "Syntax error", line or 1, column or 1)
