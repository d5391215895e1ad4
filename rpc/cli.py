"""``ctplugin cli``: call a node's JSON-RPC with bitcoin-cli's habits.

- Options may also come from the node's configuration file (``DATADIR/ctplugin.conf`` or
  ``--conf``): its ``rpcport``, ``rpcconnect``, ``rpcuser``, ``rpcpassword``... the command line
  wins.
- Credentials: ``--rpcuser``/``--rpcpassword`` if given, else the cookie ``DATADIR/.cookie``
  (``--rpccookiefile`` overrides); ``--rpcconnect`` (default 127.0.0.1), ``--rpcport`` (7040),
  ``--rpcwallet NAME`` (``/wallet/NAME``); ``--rpcwait`` retries until the node answers.
- Arguments: for the node's own methods, each argument is sent as a JSON value unless the method
  declares it a string (bitcoin-cli's conversion table, taken from the method registry); for
  unknown methods, JSON-looking arguments are parsed and the rest sent as strings. ``--named``
  takes ``name=value`` (bare values become the ``args`` array); ``--stdin`` reads more arguments,
  one per line.
- Output: a string result raw, null as nothing, anything else as UniValue's 2-space JSON.
  Errors: ``error code: N`` / ``error message:`` on stderr, exit status |N|; transport and HTTP
  problems as ``error: ...`` with exit status 1.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import socket
import sys
import time
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, TextIO
from urllib.parse import quote

import simplejson

import rpc.methods  # noqa: F401  (registers the methods whose argument types we convert by)
from rpc.auth import read_cookie
from rpc.config import (
    CONFIG_FILENAME,
    DEFAULT_DATADIR,
    DEFAULT_RPC_PORT,
    ConfigFileError,
    config_file_argv,
    normalize_argv,
)
from rpc.errors import RpcCode, RpcError
from rpc.jsonrpc import decode_json
from rpc.registry import REGISTRY, Kind

DEFAULT_CLIENT_TIMEOUT = 900.0


class CliError(Exception):
    """Printed as ``error: <message>``, exit status 1."""


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
        raise CliError(f"Error parsing JSON: {text}") from None


def build_params(method: str, args: Sequence[str], named: bool) -> list[Any] | dict[str, Any]:
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


def result_text(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    return univalue_write(result)


def error_text(error: Any) -> tuple[str, int]:
    if not isinstance(error, dict):
        return "error: " + simplejson.dumps(error, use_decimal=True), 1
    text = ""
    code = error.get("code")
    if code is not None:
        text = f"error code: {code}\n"
    message = error.get("message")
    if isinstance(message, str):
        text += "error message:\n" + message
    if code == RpcCode.WALLET_NOT_SPECIFIED:
        text += (' Or for the CLI, specify the "--rpcwallet=<walletname>" option before the '
                 'command (run "ctplugin cli -h" for help or "ctplugin cli listwallets" to see '
                 "which wallets are currently loaded).")
    status = abs(code) if isinstance(code, int) else 1
    return text, status if status else 1


def _credentials(args: argparse.Namespace) -> tuple[str, str]:
    if args.rpcpassword is not None:
        return args.rpcuser or "", args.rpcpassword
    cookie_path = args.rpccookiefile or ".cookie"
    if not cookie_path.startswith("/"):
        cookie_path = f"{args.datadir.rstrip('/')}/{cookie_path}"
    pair = read_cookie(cookie_path)
    if pair is None:
        raise CliError("Could not locate RPC credentials. No authentication cookie could be "
                       "found, and RPC password is not set.  See -rpcpassword and "
                       f"-stdinrpcpass.  Cookie file: ({cookie_path})")
    return pair


class _Unavailable(Exception):
    """The node is not (yet) answering: connection refused or -28 warm-up."""


def _call_once(args: argparse.Namespace, body: bytes) -> tuple[int, str]:
    user, password = _credentials(args)
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    path = "/"
    if args.rpcwallet is not None:
        path = "/wallet/" + quote(args.rpcwallet, safe="")
    connection = http.client.HTTPConnection(args.rpcconnect, args.rpcport,
                                            timeout=args.rpcclienttimeout or None)
    try:
        connection.request("POST", path, body, {"Authorization": f"Basic {auth}",
                                                "Content-Type": "application/json",
                                                "Host": args.rpcconnect})
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", errors="replace")
    except (ConnectionError, socket.gaierror, OSError) as exc:
        raise _Unavailable(str(exc)) from None
    finally:
        connection.close()


def call(args: argparse.Namespace, method: str, params: Any) -> tuple[str, int]:
    """(text to print, exit status) of one call; text goes to stderr when status != 0."""
    body = simplejson.dumps({"method": method, "params": params, "id": 1}, use_decimal=True)
    deadline = time.monotonic() + args.rpcwaittimeout if args.rpcwaittimeout else None
    while True:
        try:
            status, text = _call_once(args, body.encode())
        except _Unavailable as exc:
            if args.rpcwait and (deadline is None or time.monotonic() < deadline):
                time.sleep(1)
                continue
            raise CliError(f"Could not connect to the server {args.rpcconnect}:{args.rpcport} "
                           f"({exc})\n\nMake sure the ctplugin node is running and that you "
                           "are connecting to the correct RPC port.") from None
        if status == 401:
            raise CliError("Authorization failed: Incorrect rpcuser or rpcpassword")
        if status == 503:
            raise CliError(f"Server response: {text}")
        if status >= 400 and status not in (400, 404, 500):
            raise CliError(f"server returned HTTP error {status}")
        if not text:
            raise CliError("no response from server")
        try:
            reply = decode_json(text)
        except RpcError:
            raise CliError("couldn't parse reply from server") from None
        if not isinstance(reply, dict) or ("result" not in reply and "error" not in reply):
            raise CliError("expected reply to have result, error and id properties")
        error = reply.get("error")
        if error is not None:
            if (args.rpcwait and isinstance(error, dict) and error.get("code") == -28
                    and (deadline is None or time.monotonic() < deadline)):
                time.sleep(1)
                continue
            return error_text(error)
        return result_text(reply.get("result")), 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctplugin cli", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datadir", default=DEFAULT_DATADIR)
    parser.add_argument("--conf", help=f"configuration file (default DATADIR/{CONFIG_FILENAME})")
    parser.add_argument("--rpcconnect", default="127.0.0.1")
    parser.add_argument("--rpcport", type=int, default=DEFAULT_RPC_PORT)
    parser.add_argument("--rpcuser")
    parser.add_argument("--rpcpassword")
    parser.add_argument("--rpccookiefile")
    parser.add_argument("--rpcwallet")
    parser.add_argument("--rpcwait", action="store_true")
    parser.add_argument("--rpcwaittimeout", type=float, default=0)
    parser.add_argument("--rpcclienttimeout", type=float, default=DEFAULT_CLIENT_TIMEOUT)
    parser.add_argument("--named", action="store_true")
    parser.add_argument("--stdin", action="store_true")
    parser.add_argument("--stdinrpcpass", action="store_true")
    parser.add_argument("--regtest", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--chain", help=argparse.SUPPRESS)
    parser.add_argument("method", nargs="?")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    return parser


def _options_then_command(parser: argparse.ArgumentParser, raw: list[str]) -> list[str]:
    """Options end at the method name (bitcoin-cli's rule): put ``--`` before it so arguments
    after it that look like options (``-1``, ``--x``) are passed to the method."""
    takes_value = {opt for action in parser._actions if action.nargs is None
                   and not isinstance(action, (argparse._StoreTrueAction,
                                               argparse._HelpAction))
                   for opt in action.option_strings}
    i = 0
    while i < len(raw) and raw[i].startswith("-") and raw[i] != "--":
        option = raw[i].split("=", 1)[0]
        i += 2 if option in takes_value and "=" not in raw[i] else 1
    if i < len(raw) and raw[i] == "--":
        return raw
    return [*raw[:i], "--", *raw[i:]] if i < len(raw) else raw[:i]


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    raw = normalize_argv(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    options = _options_then_command(parser, raw)
    try:
        # The node's file: only the options the cli has (rpcport, rpcuser, ...) are taken.
        from_file, _node_only = config_file_argv(
            parser, options[:options.index("--")] if "--" in options else options,
            skip=("datadir", "conf", "named", "stdin", "stdinrpcpass"))
    except ConfigFileError as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    args = parser.parse_args([*from_file, *options])
    try:
        if args.stdinrpcpass:
            args.rpcpassword = stdin.readline().rstrip("\n")
        extra = [line.rstrip("\n") for line in stdin] if args.stdin else []
        method = args.method
        values = [*args.args, *extra]
        if method is None:
            if not values:
                raise CliError("too few parameters (need at least command)")
            method, values = values[0], values[1:]
        params = build_params(method, values, args.named)
        text, status = call(args, method, params)
    except CliError as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    if text:
        with contextlib.suppress(BrokenPipeError):  # `ctplugin cli ... | head`
            print(text, file=stdout if status == 0 else stderr, flush=True)
    return status
