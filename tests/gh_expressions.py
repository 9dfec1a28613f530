"""A small evaluator of GitHub Actions expressions, for testing the workflows' conditions.

It follows the documented semantics (docs.github.com, "Evaluate expressions in workflows and
actions"): ``!``, ``==``, ``!=``, ``&&``, ``||`` and parentheses; ``&&``/``||`` return an
operand; falsy values are ``false``, ``0``, ``''`` and ``null``; ``==`` compares strings
ignoring case and coerces other mixed types to numbers (``null`` and ``''`` are 0, so
``secrets.MISSING != ''`` is false); a missing property is ``null``. Functions: ``always``,
``success``, ``startsWith``, ``format``, ``fromJSON``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<op>==|!=|&&|\|\||[!().,\[\]])|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"cannot read {text[position:]!r}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(text)
        except ValueError:
            return math.nan
    return math.nan


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    if type(left) is type(right) and not isinstance(left, str | int | float | bool):
        return left is right
    return _number(left) == _number(right)


def truthy(value: Any) -> bool:
    if value is None or value is False or value == "":
        return False
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value != 0 and not math.isnan(value)
    return True


def _string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any]):
        self.tokens = _tokens(text)
        self.position = 0
        self.context = context

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise ValueError(f"expected {value!r}, found {token!r}")
        self.position += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.equality()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.equality()
            value = right if truthy(value) else value
        return value

    def equality(self) -> Any:
        value = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            _, op = self.take()
            right = self.unary()
            value = _equal(value, right) if op == "==" else not _equal(value, right)
        return value

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "number":
            return float(text)
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind != "name":
            raise ValueError(f"unexpected {text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == ("op", "("):
            return self.call(text)
        value = self.context.get(text)
        while self.peek() in (("op", "."), ("op", "[")):
            _, op = self.take()
            key = self.take()[1] if op == "." else self.or_()
            if op == "[":
                self.take("]")
            value = value.get(key) if isinstance(value, Mapping) else None
        return value

    def call(self, name: str) -> Any:
        self.take("(")
        args = []
        while self.peek() != ("op", ")"):
            args.append(self.or_())
            if self.peek() == ("op", ","):
                self.take()
        self.take(")")
        if name in ("always", "success"):
            return True
        if name == "startsWith":
            return _string(args[0]).casefold().startswith(_string(args[1]).casefold())
        if name == "format":
            return re.sub(r"\{(\d+)\}", lambda m: _string(args[1 + int(m[1])]), _string(args[0]))
        if name == "fromJSON":
            return json.loads(_string(args[0]))
        raise ValueError(f"unknown function {name}")


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    """The value of ``expression`` (with or without ``${{ }}``) in ``context``."""
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    return _Parser(text, context).parse()


def interpolate(value: str, context: Mapping[str, Any]) -> str:
    """A workflow string with each ``${{ }}`` replaced by its value, as the runner does."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _string(evaluate(m[1], context)), value)
