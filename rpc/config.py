"""``ctplugin node`` options, spelled as elementsd's (``--rpcport 7040`` or ``-rpcport=7040``)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_RPC_PORT = 7040  # elementsregtest's
DEFAULT_RPC_THREADS = 16
DEFAULT_RPC_WORKQUEUE = 64
DEFAULT_RPC_SERVERTIMEOUT = 30
DEFAULT_DATADIR = os.path.join(os.path.expanduser("~"), ".ctplugin")
ZMQ_TOPICS = ("hashblock", "hashtx", "rawblock", "rawtx", "sequence")
DEFAULT_ZMQ_HWM = 1000


@dataclass(frozen=True, slots=True)
class NodeConfig:
    datadir: str
    rpcport: int = DEFAULT_RPC_PORT
    rpcbind: tuple[str, ...] = ()
    rpcallowip: tuple[str, ...] = ()
    rpcuser: str | None = None
    rpcpassword: str | None = None
    rpcauth: tuple[str, ...] = ()
    rpccookiefile: str | None = None
    rpcthreads: int = DEFAULT_RPC_THREADS
    rpcworkqueue: int = DEFAULT_RPC_WORKQUEUE
    rpcservertimeout: float = DEFAULT_RPC_SERVERTIMEOUT
    zmq: dict[str, str] = field(default_factory=dict)
    zmq_hwm: dict[str, int] = field(default_factory=dict)
    txindex: bool = False
    load_chain: str | None = None
    daemon: bool = False
    printtoconsole: bool = False
    wallets: tuple[str, ...] = ()
    disablewallet: bool = False
    fallbackfee: str = "0.0002"  # BTC/kvB, the test framework's
    sync: bool = True

    @property
    def cookie_path(self) -> str:
        path = self.rpccookiefile or ".cookie"
        return path if os.path.isabs(path) else os.path.join(self.datadir, path)


def normalize_argv(argv: Sequence[str]) -> list[str]:
    """Accept bitcoind's single-dash ``-name=value`` / ``-flag`` spelling as ``--name``."""
    out = []
    for arg in argv:
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            arg = "-" + arg
        out.append(arg)
    return out


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {text!r}")


def build_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datadir", default=DEFAULT_DATADIR,
                        help=f"data directory (default {DEFAULT_DATADIR})")
    parser.add_argument("--rpcport", type=int, default=DEFAULT_RPC_PORT,
                        help=f"JSON-RPC port (default {DEFAULT_RPC_PORT})")
    parser.add_argument("--rpcbind", action="append", default=[],
                        help="address[:port] to listen on (needs --rpcallowip)")
    parser.add_argument("--rpcallowip", action="append", default=[],
                        help="allow JSON-RPC from this IP, net/prefix or net/mask")
    parser.add_argument("--rpcuser")
    parser.add_argument("--rpcpassword")
    parser.add_argument("--rpcauth", action="append", default=[],
                        help="user:salt$hmac (Core's share/rpcauth format); repeatable")
    parser.add_argument("--rpccookiefile", help="cookie path (default DATADIR/.cookie)")
    parser.add_argument("--rpcthreads", type=int, default=DEFAULT_RPC_THREADS)
    parser.add_argument("--rpcworkqueue", type=int, default=DEFAULT_RPC_WORKQUEUE)
    parser.add_argument("--rpcservertimeout", type=float, default=DEFAULT_RPC_SERVERTIMEOUT)
    for topic in ZMQ_TOPICS:
        parser.add_argument(f"--zmqpub{topic}", metavar="ADDRESS",
                            help=f"publish {topic} on this ZMQ endpoint (tcp://127.0.0.1:PORT)")
        parser.add_argument(f"--zmqpub{topic}hwm", type=int, default=DEFAULT_ZMQ_HWM,
                            metavar="N", help=argparse.SUPPRESS)
    parser.add_argument("--txindex", nargs="?", const=True, default=False, type=_bool,
                        help="index every transaction (getrawtransaction without blockhash)")
    parser.add_argument("--load-chain", "--loadblock", dest="load_chain", metavar="FILE",
                        help="import the blocks of a chain file (blk*.dat framing) at start")
    parser.add_argument("--daemon", nargs="?", const=True, default=False, type=_bool,
                        help="run in the background once the RPC server is up")
    parser.add_argument("--printtoconsole", nargs="?", const=True, default=False, type=_bool)
    parser.add_argument("--wallet", action="append", default=[],
                        help="load this wallet at start (repeatable)")
    parser.add_argument("--disablewallet", nargs="?", const=True, default=False, type=_bool)
    parser.add_argument("--fallbackfee", default="0.0002",
                        help="wallet fee rate in BTC/kvB when none is given (default 0.0002)")
    parser.add_argument("--nosync", action="store_true", help=argparse.SUPPRESS)
    # Accepted for command-line compatibility with elementsd test setups; no effect here.
    for name in ("regtest", "server", "listen", "discover", "dnsseed", "fixedseeds",
                 "listenonion", "upnp", "natpmp", "validatepegin", "rpcdoccheck"):
        parser.add_argument(f"--{name}", nargs="?", const=True, help=argparse.SUPPRESS)
    parser.add_argument("--chain", help=argparse.SUPPRESS)
    return parser


def parse_config(argv: Sequence[str], prog: str, description: str | None) -> NodeConfig:
    parser = build_parser(prog, description)
    args = parser.parse_args(normalize_argv(argv))
    if args.rpcuser is not None and args.rpcpassword is None:
        parser.error("--rpcuser needs --rpcpassword")
    if not 1 <= args.rpcthreads <= 1024 or not 1 <= args.rpcworkqueue <= 100_000:
        parser.error("--rpcthreads must be in 1..1024 and --rpcworkqueue in 1..100000")
    zmq = {topic: getattr(args, f"zmqpub{topic}") for topic in ZMQ_TOPICS
           if getattr(args, f"zmqpub{topic}")}
    hwm = {topic: getattr(args, f"zmqpub{topic}hwm") for topic in zmq}
    return NodeConfig(
        datadir=os.path.abspath(os.path.expanduser(args.datadir)), rpcport=args.rpcport,
        rpcbind=tuple(args.rpcbind), rpcallowip=tuple(args.rpcallowip), rpcuser=args.rpcuser,
        rpcpassword=args.rpcpassword, rpcauth=tuple(args.rpcauth),
        rpccookiefile=args.rpccookiefile, rpcthreads=args.rpcthreads,
        rpcworkqueue=args.rpcworkqueue, rpcservertimeout=args.rpcservertimeout, zmq=zmq,
        zmq_hwm=hwm, txindex=bool(args.txindex),
        load_chain=str(Path(args.load_chain).resolve()) if args.load_chain else None,
        daemon=bool(args.daemon), printtoconsole=bool(args.printtoconsole),
        wallets=tuple(args.wallet), disablewallet=bool(args.disablewallet),
        fallbackfee=args.fallbackfee, sync=not args.nosync)
