"""``ctplugin cli``: call a node's JSON-RPC with bitcoin-cli's habits (Bitcoin Core
``src/bitcoin-cli.cpp``; docs/node-rpc.md).

- Options may also come from the node's configuration file (``DATADIR/elements.conf`` or
  ``--conf``, read as the node reads it: its top section and the chain's ``[CHAIN]`` section):
  its ``rpcport``, ``rpcconnect``, ``rpcuser``, ``rpcpassword``... the command line wins.
- The chain: ``--chain``, else the file's top-section ``chain=``, else the program's default
  (``ctregtest``; ``ctplugin-elements-cli``: elementsd's ``liquidv1``).
- Credentials: ``--rpcuser``/``--rpcpassword`` if a password is given, else the cookie
  ``DATADIR/<chain>/.cookie`` (``--rpccookiefile`` overrides; relative to there); ``--rpcconnect``
  (default 127.0.0.1), ``--rpcport`` (7040), ``--rpcwallet NAME`` (``/wallet/NAME``);
  ``--rpcwait`` retries until the node answers (``--rpcwaittimeout`` seconds, 0 = for ever).
- Arguments: converted by the method table (``rpc.convert``); ``--named`` takes
  ``name=value``; ``--stdin`` reads more arguments, one per line.
- Output: a string result raw, null as nothing, anything else as UniValue's 2-space JSON.
  Errors: ``error code: N`` / ``error message:`` on stderr, exit status |N|; transport and HTTP
  problems as ``error: ...`` with exit status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from ctplugin import __version__
from rpc.config import (
    CONFIG_FILENAME,
    DEFAULT_RPC_PORT,
    NODE,
    ConfigFileError,
    Program,
    file_options,
    normalize_argv,
    resolve_config,
)
from rpc.convert import ParamError, build_params, univalue_write
from rpc.errors import RpcCode
from rpc.jsonrpc import JsonNumber
from rpcclient import (
    DEFAULT_TIMEOUT,
    Auth,
    RPCClient,
    RPCClientError,
    RPCConnectionError,
    RPCError,
    RPCHTTPError,
)


class CliError(Exception):
    """Printed as ``error: <message>``, exit status 1."""


def result_text(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    return univalue_write(result)


def error_text(error: RPCError) -> tuple[str, int]:
    """(``error code: N`` / ``error message:`` text, exit status |N|) as bitcoin-cli prints."""
    text = f"error code: {error.code}\nerror message:\n{error.message}"
    if error.code == RpcCode.WALLET_NOT_SPECIFIED:
        text += (' Or for the CLI, specify the "--rpcwallet=<walletname>" option before the '
                 'command (run "ctplugin cli -h" for help or "ctplugin cli listwallets" to see '
                 "which wallets are currently loaded).")
    return text, abs(error.code) or 1


def client_for(args: argparse.Namespace) -> RPCClient:
    """The client the options describe; its cookie is read when a call is sent."""
    auth = Auth.discover(args.datadir, rpcuser=args.rpcuser, rpcpassword=args.rpcpassword,
                         rpccookiefile=args.rpccookiefile, chain_subdir=args.chain)
    # Numbers keep their text (JsonNumber), so a result prints exactly as the node wrote it.
    return RPCClient(args.rpcconnect, args.rpcport, auth=auth, wallet=args.rpcwallet,
                     timeout=args.rpcclienttimeout or None, parse_float=JsonNumber)


def call(args: argparse.Namespace, method: str, params: Any) -> tuple[str, int]:
    """(text to print, exit status) of one call; text goes to stderr when status != 0."""
    deadline = time.monotonic() + args.rpcwaittimeout if args.rpcwaittimeout else None
    with client_for(args) as client:
        while True:
            waiting = args.rpcwait and (deadline is None or time.monotonic() < deadline)
            try:
                return result_text(client.request(method, params)), 0
            except RPCConnectionError as exc:
                if waiting:
                    time.sleep(1)
                    continue
                raise CliError(f"Could not connect to the server {args.rpcconnect}:"
                               f"{args.rpcport} ({exc})\n\nMake sure the ctplugin node is "
                               "running and that you are connecting to the correct RPC "
                               "port.") from None
            except RPCError as exc:
                if waiting and exc.code == RpcCode.IN_WARMUP:
                    time.sleep(1)
                    continue
                return error_text(exc)
            except RPCHTTPError as exc:
                if exc.status == 503:  # the work queue is full, or the node is stopping
                    raise CliError(f"Server response: {exc.body}") from None
                raise CliError(str(exc)) from None
            except RPCClientError as exc:
                raise CliError(str(exc)) from None


def build_parser(prog: str = "ctplugin cli", program: Program = NODE
                 ) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datadir", default=program.datadir)
    parser.add_argument("--conf", help=f"configuration file (default DATADIR/{CONFIG_FILENAME})")
    parser.add_argument("--rpcconnect", default="127.0.0.1")
    parser.add_argument("--rpcport", type=int, default=DEFAULT_RPC_PORT)
    parser.add_argument("--rpcuser")
    parser.add_argument("--rpcpassword")
    parser.add_argument("--rpccookiefile")
    parser.add_argument("--rpcwallet")
    parser.add_argument("--rpcwait", action="store_true")
    parser.add_argument("--rpcwaittimeout", type=float, default=0)
    parser.add_argument("--rpcclienttimeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("--named", action="store_true")
    parser.add_argument("--stdin", action="store_true")
    parser.add_argument("--stdinrpcpass", action="store_true")
    parser.add_argument("--chain", default=program.chain,
                        help=f"the node's chain (default {program.chain})")
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
         stdout: TextIO | None = None, stderr: TextIO | None = None,
         prog: str = "ctplugin cli", program: Program = NODE) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    raw = normalize_argv(sys.argv[1:] if argv is None else argv)
    parser = build_parser(prog, program)
    options = _options_then_command(parser, raw)
    own = options[:options.index("--")] if "--" in options else options
    if "--version" in own:  # bitcoin-cli's -version
        print(f"{prog} version v{__version__}", file=stdout)
        return 0
    try:
        datadir, chain, config_file = resolve_config(own, program)
    except ConfigFileError as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    # The node's file: only the options the cli has (rpcport, rpcuser, ...) are taken.
    from_file = file_options(parser, config_file, chain,
                             skip=("datadir", "conf", "named", "stdin", "stdinrpcpass"),
                             node=False)
    args = parser.parse_args([*from_file.argv, f"--chain={chain}", *options])
    args.datadir = datadir
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
    except (CliError, ParamError) as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    if text:
        with contextlib.suppress(BrokenPipeError):  # `ctplugin cli ... | head`
            print(text, file=stdout if status == 0 else stderr, flush=True)
    return status
