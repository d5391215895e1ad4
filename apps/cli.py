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
- bitcoin-cli's client-side commands ``-getinfo``, ``-netinfo``, ``-generate`` are
  ``apps.cli_info``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from apps.cli_info import (
    COLOR_CHOICES,
    NETINFO_HELP,
    CliUsageError,
    generate,
    getinfo,
    getinfo_text,
    netinfo,
)
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
from rpc.helpformat import FLAG_METAVAR, UserHelpFormatter
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


DESCRIPTION = """\
Call a running node's JSON-RPC as bitcoin-cli does: METHOD and its arguments (numbers,
booleans and JSON are converted as the method declares them), the result printed as the
node wrote it, errors as "error code: N" / "error message:" with exit status |N|.

  ctplugin cli --datadir /tmp/ctnode getblockcount
  ctplugin cli --datadir /tmp/ctnode -getinfo
  ctplugin cli --datadir /tmp/ctnode -generate 101
  ctplugin cli --datadir /tmp/ctnode --named sendtoaddress address=ADDR amount=1.5
  ctplugin cli --datadir /tmp/ctnode help getblock

The node's address, port and credentials are found as the node wrote them: its cookie in
DATADIR/<chain>/.cookie, and rpcport / rpcuser / rpcpassword / rpcconnect from
DATADIR/elements.conf (the command line wins). Options are spelled --name=value or, as
bitcoin-cli's, -name=value. "ctplugin cli help" lists the node's calls.
"""


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
    return with_node(args, lambda client: result_text(client.request(method, params)))


def with_node(args: argparse.Namespace, work: Callable[[RPCClient], str]) -> tuple[str, int]:
    """(text to print, exit status) of ``work`` on a client of the node: its errors printed
    as bitcoin-cli prints them, waiting for the node with ``--rpcwait``."""
    deadline = time.monotonic() + args.rpcwaittimeout if args.rpcwaittimeout else None
    with client_for(args) as client:
        while True:
            waiting = args.rpcwait and (deadline is None or time.monotonic() < deadline)
            try:
                return work(client), 0
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
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter)
    parser.add_argument("--datadir", default=program.datadir, metavar="DIR",
                        help="the node's data directory")
    parser.add_argument("--conf", metavar="FILE",
                        help=f"configuration file (default DATADIR/{CONFIG_FILENAME})")
    parser.add_argument("--rpcconnect", default="127.0.0.1", metavar="IP",
                        help="send calls to the node on this address")
    parser.add_argument("--rpcport", type=int, default=DEFAULT_RPC_PORT, metavar="PORT",
                        help="the node's JSON-RPC port")
    parser.add_argument("--rpcuser", metavar="USER",
                        help="user name for JSON-RPC (default: the node's cookie)")
    parser.add_argument("--rpcpassword", metavar="PW", help="password for JSON-RPC")
    parser.add_argument("--rpccookiefile", metavar="FILE",
                        help="the node's cookie (default DATADIR/<chain>/.cookie; relative "
                             "to there)")
    parser.add_argument("--rpcwallet", metavar="NAME",
                        help="call this wallet of the node (/wallet/NAME)")
    parser.add_argument("--rpcwait", action="store_true",
                        help="wait for the node to start and answer")
    parser.add_argument("--rpcwaittimeout", type=float, default=0, metavar="SECONDS",
                        help="with --rpcwait, give up after SECONDS (default 0: wait for ever)")
    parser.add_argument("--rpcclienttimeout", type=float, default=DEFAULT_TIMEOUT,
                        metavar="SECONDS",
                        help="timeout of each HTTP request, 0 for none")
    parser.add_argument("--named", action="store_true",
                        help="pass arguments by name (name=value) instead of by position")
    parser.add_argument("--stdin", action="store_true",
                        help="read more arguments from standard input, one per line until "
                             "end of file (for secrets such as passphrases)")
    parser.add_argument("--stdinrpcpass", action="store_true",
                        help="read the JSON-RPC password from the first line of standard "
                             "input")
    parser.add_argument("--chain", default=program.chain, metavar="NAME",
                        help="the node's chain (its files are in DATADIR/NAME/)")
    parser.add_argument("--getinfo", nargs="?", const="1", metavar=FLAG_METAVAR,
                        help="general information from the node: chain, blocks, network, "
                             "wallet, balance (several calls, not one snapshot); "
                             "-getinfo=0 prints it as JSON")
    parser.add_argument("--netinfo", action="store_true",
                        help="the node's peer connections dashboard; arguments: [LEVEL 0-4 "
                             "[outonly]] or help")
    parser.add_argument("--generate", action="store_true",
                        help="mine blocks to a new address of the wallet (getnewaddress, "
                             "then generatetoaddress); arguments: [NBLOCKS (default 1) "
                             "[MAXTRIES]]")
    parser.add_argument("--color", choices=COLOR_CHOICES, default="auto",
                        help="colors in -getinfo's output: always, never, or auto (when "
                             "standard output is a terminal)")
    parser.add_argument("method", nargs="?",
                        help="the call (\"ctplugin cli help\" lists them), or the first "
                             "argument of -generate / -netinfo")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the call's arguments")
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
        if method is None and values and not _client_command(args):
            method, values = values[0], values[1:]
        text, status = _dispatch(args, method, values, prog, stdout)
    except (CliError, ParamError, CliUsageError) as exc:
        print(f"error: {exc}", file=stderr)
        return 1
    if text:
        with contextlib.suppress(BrokenPipeError):  # `ctplugin cli ... | head`
            print(text, file=stdout if status == 0 else stderr, flush=True)
    return status


def _client_command(args: argparse.Namespace) -> bool:
    return args.getinfo is not None or args.netinfo or args.generate


def _dispatch(args: argparse.Namespace, method: str | None, values: list[str], prog: str,
              stdout: TextIO) -> tuple[str, int]:
    """(text, exit status) of the command line: a client-side command (bitcoin-cli's
    ``-getinfo``, ``-netinfo``, ``-generate``: ``apps.cli_info``) or one call."""
    words = [method, *values] if method is not None else values
    if args.getinfo is not None:
        if words:
            raise CliError("-getinfo takes no arguments")
        human = args.getinfo not in ("0", "false")
        colors = args.color == "always" or (args.color == "auto" and stdout.isatty())

        def info(client: RPCClient) -> str:
            result = getinfo(client, None if args.rpcwallet is not None else (
                lambda name: client_for(argparse.Namespace(**{**vars(args),
                                                              "rpcwallet": name}))))
            return getinfo_text(result, colors) if human else univalue_write(result)

        return with_node(args, info)
    if args.netinfo:
        if words[:1] in (["h"], ["help"]):
            return NETINFO_HELP, 0
        header = f"{prog} client v{__version__} {args.chain}"
        return with_node(args, lambda client: netinfo(client, words, header))
    if args.generate:
        return with_node(args, lambda client: generate(client, words))
    if method is None:
        raise CliError("too few parameters (need at least command)")
    return call(args, method, build_params(method, values, args.named))
