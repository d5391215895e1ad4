"""JSON-RPC over one HTTP body, as bitcoind v28+ answers it (docs/node-rpc.md §2.4).

- A request is 2.0 only with ``"jsonrpc": "2.0"``; a missing key or ``"1.0"`` is legacy; any other
  string is -32600 "JSON-RPC version not supported", a non-string -32600 "jsonrpc field must be a
  string".
- Legacy replies always carry ``result`` and ``error``; an error answers HTTP 404 for -32601,
  400 for -32600 and 500 for everything else. 2.0 replies carry one of them and HTTP 200, even
  for RPC errors; a 2.0 request without ``id`` is a notification: executed, answered 204 with no
  body.
- A batch (top-level array) is always HTTP 200 with the replies of its non-notification elements;
  an all-notification batch is 204; ``[]`` is answered ``[]``.
- Undecodable bodies, nesting deeper than ``MAX_JSON_DEPTH``, strings holding a lone surrogate
  (``"\\ud800"``) and non-container top levels are -32700 with HTTP 500; a reply object has
  the key order ``jsonrpc, result, error, id``; ``id`` is the request's, null when the body
  could not be read as a request, and absent when the request had none.

Non-integer numbers are read as ``JsonNumber`` (a Decimal that keeps its exact text) and
written with simplejson's Decimal support, so no value ever passes through a float or a marker
string; an integer longer than Python converts (4300 digits) is a ``JsonNumber`` too, so it is
refused by the parameter's own check (UniValue reads any number as text) rather than as a
parse error. An object that names a key twice keeps both in UniValue, whose lookups
(``find_value``) find the first: ``JsonObject`` keeps the first value and remembers the first
repeated key (named parameters refuse it, -8 "Parameter X specified multiple times").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import simplejson

from rpc.errors import RpcCode, RpcError

MAX_JSON_DEPTH = 512  # UniValue's limit
_NO_ID = object()

Params = list[Any] | dict[str, Any]
Execute = Callable[[str, Params], Any]
"""Runs one method with its params; raises ``RpcError`` (anything else is an internal bug the
caller turns into -1 before it gets here)."""


class JsonNumber(Decimal):
    """A non-integer JSON number: a Decimal that prints as the text it was read from (UniValue
    keeps numbers as text), so ``echo 1e-8`` answers ``1e-8`` and ``0.10`` stays ``0.10``."""

    __slots__ = ("_text",)
    _text: str

    def __new__(cls, text: str) -> JsonNumber:
        number = Decimal.__new__(cls, text)
        number._text = text
        return number

    def __str__(self) -> str:
        return self._text


class JsonObject(dict[str, Any]):
    """A JSON object read as UniValue resolves a repeated key: the first value counts;
    ``duplicate`` is the first key that was repeated (None when none was)."""

    __slots__ = ("duplicate",)
    duplicate: str | None


def _object(pairs: list[tuple[str, Any]]) -> JsonObject:
    obj = JsonObject()
    obj.duplicate = None
    for key, value in pairs:
        if key in obj:
            if obj.duplicate is None:
                obj.duplicate = key
            continue
        obj[key] = value
    return obj


def _integer(text: str) -> int | JsonNumber:
    try:
        return int(text)
    except ValueError:  # over Python's int-conversion digit limit
        return JsonNumber(text)


def decode_json(body: bytes | str) -> Any:
    """Parse a JSON document exactly (numbers keep their text, no NaN/Infinity, first value of
    a repeated key) or raise -32700."""
    try:
        try:
            value = simplejson.loads(body, parse_float=JsonNumber, allow_nan=False,
                                     object_pairs_hook=_object)
        except ValueError:  # perhaps only an integer too long for int(): read those as text
            value = simplejson.loads(body, parse_float=JsonNumber, parse_int=_integer,
                                     allow_nan=False, object_pairs_hook=_object)
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise RpcError(RpcCode.PARSE_ERROR, "Parse error") from None
    # A \u escape may name half of a surrogate pair alone: not a character (UniValue refuses
    # it at parse time), and nothing downstream could encode it.
    escapes = "\\u" in body if isinstance(body, str) else b"\\u" in body
    if _refused(value, escapes):
        raise RpcError(RpcCode.PARSE_ERROR, "Parse error")
    return value


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _refused(value: Any, check_strings: bool) -> bool:
    """True when arrays/objects nest deeper than MAX_JSON_DEPTH, or (``check_strings``) a string
    or key holds a lone surrogate (iterative: no recursion)."""
    if check_strings and isinstance(value, str):
        return _not_utf8(value)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
            if check_strings and any(_not_utf8(key) for key in item):
                return True
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            return True
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
            elif check_strings and isinstance(child, str) and _not_utf8(child):
                return True
    return False


def encode_json(value: Any) -> bytes:
    """Compact JSON text plus the newline bitcoind ends every reply with."""
    return simplejson.dumps(value, use_decimal=True, separators=(",", ":"),
                            ensure_ascii=False).encode() + b"\n"


@dataclass(slots=True)
class Request:
    """One request object. ``id`` is null until the request's own is read, and ``_NO_ID`` when
    it had none (bitcoind's ``std::optional<UniValue> id = VNULL``)."""

    id: Any = None
    v2: bool = False
    method: str = ""
    params: Params | None = None

    @property
    def is_notification(self) -> bool:
        return self.v2 and self.id is _NO_ID


def parse_request(obj: Any, into: Request) -> None:
    """Fill ``into`` from a request object (id and version first, so errors raised later still
    carry them), raising -32600 for what bitcoind's ``JSONRPCRequest::parse`` refuses."""
    if not isinstance(obj, dict):
        raise RpcError(RpcCode.INVALID_REQUEST, "Invalid Request object")
    into.id = obj.get("id", _NO_ID)
    version = obj.get("jsonrpc")
    if version is not None:
        if not isinstance(version, str):
            raise RpcError(RpcCode.INVALID_REQUEST, "jsonrpc field must be a string")
        if version == "2.0":
            into.v2 = True
        elif version != "1.0":
            raise RpcError(RpcCode.INVALID_REQUEST, "JSON-RPC version not supported")
    method = obj.get("method")
    if method is None:
        raise RpcError(RpcCode.INVALID_REQUEST, "Missing method")
    if not isinstance(method, str):
        raise RpcError(RpcCode.INVALID_REQUEST, "Method must be a string")
    into.method = method
    params = obj.get("params")
    if params is None:
        params = []
    elif not isinstance(params, (list, dict)):
        raise RpcError(RpcCode.INVALID_REQUEST, "Params must be an array or object")
    into.params = params


def reply_object(request: Request, result: Any = None,
                 error: RpcError | None = None) -> dict[str, Any]:
    reply: dict[str, Any] = {}
    if request.v2:
        reply["jsonrpc"] = "2.0"
        if error is None:
            reply["result"] = result
        else:
            reply["error"] = error.to_json()
    else:
        reply["result"] = result
        reply["error"] = None if error is None else error.to_json()
    if request.id is not _NO_ID:
        reply["id"] = request.id
    return reply


def _legacy_status(error: RpcError) -> int:
    if error.code == RpcCode.INVALID_REQUEST:
        return 400
    if error.code == RpcCode.METHOD_NOT_FOUND:
        return 404
    return 500


def _execute_one(request: Request, execute: Execute) -> dict[str, Any]:
    """Run a parsed request and build its reply; RPC errors become error replies."""
    assert request.params is not None
    try:
        result = execute(request.method, request.params)
    except RpcError as error:
        return reply_object(request, error=error)
    return reply_object(request, result=result)


def handle_body(body: bytes, execute: Execute) -> tuple[int, bytes | None]:
    """(HTTP status, JSON reply or None for 204) of one POST body (module docstring)."""
    request = Request()
    try:
        payload = decode_json(body)
        if isinstance(payload, dict):
            parse_request(payload, request)
            if request.v2:
                reply = _execute_one(request, execute)
                if request.is_notification:
                    return 204, None
                return 200, encode_json(reply)
            assert request.params is not None
            result = execute(request.method, request.params)  # legacy: errors are HTTP errors
            return 200, encode_json(reply_object(request, result=result))
        if isinstance(payload, list):
            replies = []
            for element in payload:
                request = Request()
                try:
                    parse_request(element, request)
                except RpcError as error:
                    replies.append(reply_object(request, error=error))
                    continue
                reply = _execute_one(request, execute)
                if not request.is_notification:
                    replies.append(reply)
            if payload and not replies:
                return 204, None
            return 200, encode_json(replies)
        raise RpcError(RpcCode.PARSE_ERROR, "Top-level object parse error")
    except RpcError as error:
        return _legacy_status(error), encode_json(reply_object(request, error=error))
