"""The method table: each RPC declares its arguments once; binding, checks and help follow.

As bitcoind's ``RPCHelpMan`` (docs/node-rpc.md §1.2):

- named parameters (an object) are mapped onto positions by name (``"verbosity|verbose"`` gives
  aliases); an ``args`` array may carry the leading positional ones; an unknown name is -8
  "Unknown named parameter X", a name also given positionally is -8 "... specified twice ...";
- a wrong argument count answers the method's help text with code -1;
- every argument whose JSON type does not match is listed in one -3 "Wrong type passed:" object
  keyed "Position N (name)";
- integer arguments must be JSON integers (-1 "JSON integer out of range" otherwise, as UniValue);
- omitted and null optional arguments take their declared default;
- ``help CALL`` is the declaration printed as bitcoind prints it: the signature, the
  description, "Arguments:" (each with its type, default and description), "Result:" and
  "Examples:" (the declared ones, else one made from the required arguments' names).

A method runs under the node's chain lock (and its wallet's lock for wallet methods) unless it
declares ``locking=Locking.SELF`` and takes the locks it needs itself (long and heavy calls:
mining, sends, waits), so a long call never holds up the other clients.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import simplejson

from rpc.errors import RpcCode, RpcError


class JsonType(enum.Enum):
    NULL = "null"
    BOOL = "bool"
    NUMBER = "number"
    STRING = "string"
    ARRAY = "array"
    OBJECT = "object"


def json_type(value: Any) -> JsonType:
    if value is None:
        return JsonType.NULL
    if isinstance(value, bool):
        return JsonType.BOOL
    if isinstance(value, (int, Decimal, float)):
        return JsonType.NUMBER
    if isinstance(value, str):
        return JsonType.STRING
    if isinstance(value, list):
        return JsonType.ARRAY
    if isinstance(value, dict):
        return JsonType.OBJECT
    raise TypeError(f"not a JSON value: {type(value).__name__}")


class Kind(enum.Enum):
    """Declared argument kinds: (accepted JSON types, help label)."""

    STR = ((JsonType.STRING,), "string")
    HEX = ((JsonType.STRING,), "string")  # an alias of STR (same value): names a hex argument
    INT = ((JsonType.NUMBER,), "numeric")
    AMOUNT = ((JsonType.NUMBER, JsonType.STRING), "numeric or string")
    BOOL = ((JsonType.BOOL,), "boolean")
    OBJ = ((JsonType.OBJECT,), "json object")
    ARR = ((JsonType.ARRAY,), "json array")
    INT_OR_BOOL = ((JsonType.NUMBER, JsonType.BOOL), "numeric")
    ARR_OR_OBJ = ((JsonType.ARRAY, JsonType.OBJECT), "json array")
    HASH_OR_HEIGHT = ((JsonType.STRING, JsonType.NUMBER), "string or numeric")
    OBJ_OR_BOOL = ((JsonType.OBJECT, JsonType.BOOL), "json object")  # Core's legacy bool options
    ANY = ((), "any")

    @property
    def accepts(self) -> tuple[JsonType, ...]:
        return self.value[0]

    @property
    def label(self) -> str:
        return self.value[1]


_REQUIRED = object()


@dataclass(frozen=True, slots=True)
class Arg:
    names: str  # "name" or "name|alias"
    kind: Kind
    description: str = ""
    default: Any = _REQUIRED
    default_doc: str | None = None  # help text for a computed default ("wallet default")

    @property
    def name(self) -> str:
        return self.names.split("|", 1)[0]

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def mismatch(self, value: Any) -> str | None:
        """UniValue's complaint about ``value``, or None when it fits."""
        if value is None and not self.required:
            return None
        accepts = self.kind.accepts
        actual = json_type(value)
        if not accepts or actual in accepts:
            return None
        return (f"JSON value of type {actual.value} is not of expected type "
                f"{accepts[0].value}")

    def help_label(self) -> str:
        if self.required:
            return f"{self.kind.label}, required"
        if self.default_doc is not None:
            return f"{self.kind.label}, optional, default={self.default_doc}"
        if self.default is None:
            return f"{self.kind.label}, optional"
        shown = simplejson.dumps(self.default, use_decimal=True)
        return f"{self.kind.label}, optional, default={shown}"


def required(names: str, kind: Kind, description: str = "") -> Arg:
    return Arg(names, kind, description)


def optional(names: str, kind: Kind, default: Any = None, description: str = "",
             default_doc: str | None = None) -> Arg:
    return Arg(names, kind, description, default, default_doc)


class Locking(enum.Enum):
    CHAIN = "chain"  # run under the chain lock (and the wallet lock for wallet methods)
    SELF = "self"  # the handler takes the locks it needs


Handler = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    category: str
    handler: Handler
    args: tuple[Arg, ...] = ()
    description: str = ""
    result: str = ""
    examples: tuple[str, ...] = ()
    wallet: bool = False
    hidden: bool = False
    locking: Locking = Locking.CHAIN
    n_required: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        n = 0
        for i, arg in enumerate(self.args):
            if arg.required:
                n = i + 1
        object.__setattr__(self, "n_required", n)

    # --- binding ----------------------------------------------------------------------------

    def positional(self, params: list[Any] | dict[str, Any]) -> list[Any]:
        """The call's positional parameters (named ones mapped as bitcoind does)."""
        if isinstance(params, list):
            return params
        duplicate = getattr(params, "duplicate", None)  # rpc.jsonrpc.JsonObject
        if duplicate is not None:  # bitcoind's transformNamedArguments
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Parameter {duplicate} specified multiple times")
        remaining = dict(params)
        out: list[Any] = []
        hole = 0
        initial_hole = 0
        first_named: str | None = None
        for arg in self.args:
            key = next((n for n in arg.names.split("|") if n in remaining), None)
            if key is None:
                hole += 1
                if not out:
                    initial_hole = hole
                continue
            out.extend([None] * hole)
            hole = 0
            out.append(remaining.pop(key))
            if first_named is None:
                first_named = arg.names
        positional_args = remaining.pop("args", None)
        if isinstance(positional_args, list):
            if initial_hole < len(positional_args) and first_named is not None:
                raise RpcError(RpcCode.INVALID_PARAMETER,
                               f"Parameter {first_named} specified twice both as positional "
                               "and named argument")
            out = [*positional_args, *out[len(positional_args):]]
        elif positional_args is not None:
            remaining["args"] = positional_args
        if remaining:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           f"Unknown named parameter {next(iter(remaining))}")
        return out

    def bind(self, params: list[Any] | dict[str, Any]) -> list[Any]:
        """Checked Python arguments for the handler (module docstring for the rules)."""
        values = self.positional(params)
        if not self.n_required <= len(values) <= len(self.args):
            raise RpcError(RpcCode.MISC_ERROR, self.help_text())
        mismatches = {}
        for i, arg in enumerate(self.args):
            value = values[i] if i < len(values) else None
            if value is None and arg.required:
                mismatches[f"Position {i + 1} ({arg.names})"] = (
                    f"JSON value of type null is not of expected type "
                    f"{arg.kind.accepts[0].value if arg.kind.accepts else 'any'}")
                continue
            problem = arg.mismatch(value)
            if problem is not None:
                mismatches[f"Position {i + 1} ({arg.names})"] = problem
        if mismatches:
            text = simplejson.dumps(mismatches, indent=4)
            raise RpcError(RpcCode.TYPE_ERROR, f"Wrong type passed:\n{text}")
        bound = []
        for i, arg in enumerate(self.args):
            value = values[i] if i < len(values) else None
            if value is None:
                value = None if arg.required else arg.default
            elif arg.kind is Kind.INT or (arg.kind is Kind.INT_OR_BOOL
                                          and not isinstance(value, bool)):
                value = integer(value)
            bound.append(value)
        return bound

    # --- help -------------------------------------------------------------------------------

    def signature(self) -> str:
        parts = [self.name]
        opened = False
        for arg in self.args:
            shown = f'"{arg.name}"' if arg.kind in (Kind.STR, Kind.HEX) else arg.name
            if not arg.required and not opened:
                parts.append("(")
                opened = True
            parts.append(shown)
        if opened:
            parts.append(")")
        return " ".join(parts)

    def help_text(self) -> str:
        lines = [self.signature(), ""]
        if self.description:
            lines += [self.description.strip(), ""]
        if self.args:
            lines.append("Arguments:")
            width = max(len(a.name) for a in self.args)
            for i, arg in enumerate(self.args, 1):
                lines.append(f"{i}. {arg.name:<{width}}    ({arg.help_label()}) "
                             f"{arg.description}".rstrip())
            lines.append("")
        if self.result:
            lines += ["Result:", self.result.strip(), ""]
        lines.append("Examples:")
        lines += [f"> ctplugin cli {self.name} {ex}".rstrip() for ex in self.example_args()]
        lines.append("")
        return "\n".join(lines).rstrip("\n")

    def example_args(self) -> tuple[str, ...]:
        """The declared examples' arguments, else one made from the required arguments'
        names (strings quoted, as the command line takes them)."""
        if self.examples:
            return self.examples
        return (" ".join(f'"{a.name}"' if a.kind in (Kind.STR, Kind.HEX) else a.name
                         for a in self.args if a.required),)


def integer(value: Any) -> int:
    """A JSON integer as int (UniValue::getInt: decimals and exponents are refused)."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not -(1 << 63) <= value < (1 << 63):
            raise RpcError(RpcCode.MISC_ERROR, "JSON integer out of range")
        return value
    if isinstance(value, (Decimal, float)):
        raise RpcError(RpcCode.MISC_ERROR, "JSON integer out of range")
    raise RpcError(RpcCode.TYPE_ERROR,
                   f"JSON value of type {json_type(value).value} is not of expected type number")


class Registry:
    """Name → Method, filled by the ``rpc`` decorator of the method modules."""

    def __init__(self) -> None:
        self.methods: dict[str, Method] = {}

    def __contains__(self, name: object) -> bool:
        return name in self.methods

    def get(self, name: str) -> Method | None:
        return self.methods.get(name)

    def add(self, method: Method) -> None:
        if method.name in self.methods:
            raise ValueError(f"RPC method {method.name} registered twice")
        self.methods[method.name] = method

    def rpc(self, category: str, *, args: Sequence[Arg] = (), description: str = "",
            result: str = "", examples: Sequence[str] = (), wallet: bool = False,
            hidden: bool = False, locking: Locking = Locking.CHAIN,
            name: str | None = None) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self.add(Method(name or fn.__name__, category, fn, tuple(args), description,
                            result, tuple(examples), wallet, hidden, locking))
            return fn
        return register

    def overview(self) -> str:
        """``help`` without a command: the visible methods by category."""
        by_category: dict[str, list[Method]] = {}
        for method in self.methods.values():
            if not method.hidden:
                by_category.setdefault(method.category, []).append(method)
        blocks = []
        for category in sorted(by_category):
            lines = [f"== {category.capitalize()} =="]
            lines += [m.signature() for m in sorted(by_category[category], key=lambda m: m.name)]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)


REGISTRY = Registry()
rpc = REGISTRY.rpc
