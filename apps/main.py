"""``ctplugin COMMAND [ARGS...]``: the one console script; each command is a layer's own ``main``.

Commands are imported only when run, so ``ctplugin --help`` stays instant and a command's heavy
dependencies (Dask, matplotlib, ...) load only for the commands that need them; a command whose
optional extra is not installed is refused in one line (``apps.extras``). ``ctplugin`` alone
prints the usage on stderr and exits 2, as argparse does for a missing command. Ctrl-C ends any
command with one line on stderr and status 130 (128 + SIGINT), never a traceback.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import NamedTuple

from apps.extras import Extra, missing_message
from ctplugin import __version__


class Command(NamedTuple):
    module: str
    summary: str
    extras: tuple[Extra, ...] = ()  # checked before the module is imported (apps.extras)


COMMANDS: dict[str, Command] = {
    "demo": Command("apps.demo", "build a regtest chain of confidential transactions and "
                                 "validate it (make demo)"),
    "node": Command("apps.node", "run a regtest node (JSON-RPC as elementsd; mining, wallets, "
                                 "ZMQ)", (Extra.NODE,)),
    "cli": Command("apps.cli", "call a running node's JSON-RPC as bitcoin-cli does"),
    "chain": Command("apps.chain", "build a chain of wallet-made confidential blocks: a "
                                   "chain file and/or a Core-style blocks/ directory",
                     (Extra.REPLAY,)),
    "replay": Command("apps.replay", "replay blocks (chain file, blocks/ directory or a "
                                     "node's RPC) into a data directory, in one of five "
                                     "verification modes, with progress and reports",
                      (Extra.REPLAY,)),
    "audit": Command("apps.audit", "audit real Elements/Liquid data: every range proof, and "
                                   "the surjection proofs and balances of known spent outputs"),
    "elements": Command("apps.elements", "decode a transaction or check an Elements vectors "
                                         "file"),
    "bulletproofs": Command("apps.bulletproofs", "check a Bulletproof vectors file"),
    "oracle": Command("apps.oracle", "a deterministic DLC oracle for tests and demos: announce "
                                     "events, attest outcomes (rust-dlc JSON)"),
}


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: ctplugin COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<{width}}  {cmd.summary}" for name, cmd in COMMANDS.items()]
    lines += ["", "ctplugin COMMAND --help describes a command; ctplugin [COMMAND] --version "
              "prints the version."]
    return "\n".join(lines)


INTERRUPTED = 128 + signal.SIGINT  # 130: a shell's status of a command ended by Ctrl-C


def ignore_further_interrupts() -> None:
    """A command is ending because of a Ctrl-C: another one (a double tap) has nothing left to
    stop and would only raise a second ``KeyboardInterrupt`` somewhere in the way out, with a
    traceback. Main thread only (where handlers live)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        code = _run(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        # Ctrl-C wherever a command does not handle it itself: one line, the shell's status,
        # no traceback. What a command must undo on the way out it does in ``finally``.
        ignore_further_interrupts()
        name = f"ctplugin {args[0]}" if args and args[0] in COMMANDS else "ctplugin"
        print(f"{name}: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # The reader closed the pipe (``ctplugin ... | head``): stop quietly, as a Unix tool
        # killed by SIGPIPE does (same status). Python would report the unflushed rest again
        # at exit, so stdout now points at /dev/null. (SIGPIPE itself stays ignored: the node
        # writes to sockets.)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    return code


def _run(args: list[str]) -> int:
    if not args:  # argparse's convention for a missing command: usage on stderr, status 2
        print(_usage(), file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    if args[0] in ("--version", "-version", "version"):
        print(f"ctplugin {__version__}")
        return 0
    command = COMMANDS.get(args[0])
    if command is not None and args[1:2] in (["--version"], ["-version"]):
        print(f"ctplugin {args[0]} {__version__}")  # every command, bitcoin-cli's -version too
        return 0
    if command is None:
        print(f"ctplugin: unknown command {args[0]!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    if (message := missing_message(f"ctplugin {args[0]}", *command.extras)) is not None:
        print(message, file=sys.stderr)
        return 2
    entry: Callable[[list[str]], int] = importlib.import_module(command.module).main
    return entry(args[1:])


if __name__ == "__main__":
    sys.exit(main())
