"""The client side of the method table, as bitcoin-cli has it (Bitcoin Core
``src/rpc/client.cpp`` ``RPCConvertValues``, ``src/univalue`` ``UniValue::write``).

- ``convert`` / ``build_params``: command-line words to JSON-RPC params. For the node's own
  methods each argument is sent as a JSON value unless the method declares it a string (the
  conversion table is the method registry); for unknown methods, JSON-looking arguments are
  parsed and the rest sent as strings. Named form (``-named``): ``name=value``; bare values
  become the ``args`` array.
- ``univalue_write``: Core's pretty JSON for printing a result.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import simplejson

import rpc.methods  # noqa: F401  (registers the methods whose argument types we convert by)
from rpc.errors import RpcError
from rpc.jsonrpc import decode_json
from rpc.registry import REGISTRY, Kind


class ParamError(ValueError):
    """A command-line argument that must be JSON is not (bitcoin-cli: ``Error parsing JSON``)."""


def _declared_kind(method: str, position: int | None, name: str | None) -> Kind | None:
    spec = REGISTRY.get(method)
    if spec is None:
        return None
    if position is not None:
        return spec.args[position].kind if position < len(spec.args) else None
    return next((a.kind for a in spec.args if name in a.names.split("|")), None)


def convert(method: str, text: str, position: int | None = None,
            name: str | None = None) -> Any:
    """One command-line argument as the JSON value to send (module docstring)."""
    kind = _declared_kind(method, position, name)
    if kind in (Kind.STR, Kind.HEX) or (kind is Kind.ANY and method != "echojson"):
        return text
    try:
        return decode_json(text)
    except RpcError:
        if kind is None:  # not a declared argument: only JSON-looking text is JSON
            return text
        raise ParamError(f"Error parsing JSON: {text}") from None


def build_params(method: str, args: Sequence[str], named: bool) -> list[Any] | dict[str, Any]:
    """The params of ``method`` from its command-line words, positional or ``-named``."""
    if not named:
        return [convert(method, text, position=i) for i, text in enumerate(args)]
    params: dict[str, Any] = {}
    positional: list[Any] = []
    for text in args:
        name, sep, value = text.partition("=")
        if not sep:
            positional.append(convert(method, text, position=len(positional)))
            continue
        params[name] = convert(method, value, name=name)
    if positional:
        params["args"] = positional
    return params


def _escape(text: str) -> str:
    out = simplejson.dumps(text, ensure_ascii=False)
    return out.replace("\x7f", "\\u007f")


def univalue_write(value: Any, indent: int = 2, level: int = 0) -> str:
    """UniValue::write(indent): Core's pretty JSON (``{\\n}`` for empty containers)."""
    if isinstance(value, dict):
        level = max(level, 1)
        parts = ["{\n"]
        items = list(value.items())
        for i, (key, item) in enumerate(items):
            parts.append(" " * (indent * level) + _escape(str(key)) + ": "
                         + univalue_write(item, indent, level + 1))
            parts.append(",\n" if i != len(items) - 1 else "\n")
        parts.append(" " * (indent * (level - 1)) + "}")
        return "".join(parts)
    if isinstance(value, list):
        level = max(level, 1)
        parts = ["[\n"]
        for i, item in enumerate(value):
            parts.append(" " * (indent * level) + univalue_write(item, indent, level + 1))
            parts.append(",\n" if i != len(value) - 1 else "\n")
        parts.append(" " * (indent * (level - 1)) + "]")
        return "".join(parts)
    if isinstance(value, str):
        return _escape(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return str(value)
    return simplejson.dumps(value, use_decimal=True)
