"""``ctplugin node`` options, spelled as elementsd's (``--rpcport 7040`` or ``-rpcport=7040``).

As bitcoind, options may also sit in a configuration file, ``DATADIR/ctplugin.conf`` by default
(``--conf FILE`` names another; relative to the data directory): ``name=value`` lines, ``#``
comments, ``[regtest]``/``[elementsregtest]`` sections (other networks' sections are skipped).
The command line wins over the file. ``ctplugin cli`` reads the same file for its ``rpc*``
options, so a node on a non-default port needs the port written once.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctplugin.elements.consensus import COIN, MAX_MONEY
from ctplugin.secp256k1.kernel import MAX_THREADS
from regtest.params import CHAIN_NAMES, DEFAULT_CHAIN
from rpcclient import cookie_path
from validator import PolicySettings

DEFAULT_RPC_PORT = 7040  # elementsregtest's
DEFAULT_RPC_THREADS = 16
DEFAULT_RPC_WORKQUEUE = 64
DEFAULT_RPC_SERVERTIMEOUT = 30
DEFAULT_DATADIR = os.path.join(os.path.expanduser("~"), ".ctplugin")
CONFIG_FILENAME = "ctplugin.conf"
OUR_SECTIONS = ("", "regtest", "elementsregtest")
ZMQ_TOPICS = ("hashblock", "hashtx", "rawblock", "rawtx", "sequence")
DEFAULT_ZMQ_HWM = 1000


@dataclass(frozen=True, slots=True)
class NodeConfig:
    datadir: str
    chain: str = DEFAULT_CHAIN  # which of our chains (regtest.params.select_chain), Core's -chain
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
    maxtxfee: str = "0.10"  # BTC: the most fee one wallet transaction may pay (Core's default)
    par: int = 0
    """Kernel threads as Core's -par: 0 = every core, N > 0 = N, N < 0 = leave -N cores free."""
    sync: bool = True
    ignored_config: tuple[str, ...] = ()  # configuration-file names this node does not know
    relay: PolicySettings = field(default_factory=PolicySettings)
    """The mempool's policy (-acceptnonstdtxn, -minrelaytxfee, -dustrelayfee, -datacarrier...)."""

    @property
    def kernel_threads(self) -> int:
        """What ``--par`` asks of the kernel (``kernel.set_threads``: 0 = every core)."""
        if self.par >= 0:
            return self.par
        return max(1, (os.cpu_count() or 1) + self.par)

    @property
    def cookie_path(self) -> str:
        """Where this node writes its cookie: where a client looks for it (``rpcclient``)."""
        return str(cookie_path(self.datadir, rpccookiefile=self.rpccookiefile))


class ConfigFileError(Exception):
    """The configuration file cannot be read (message for the user)."""


def read_config_file(path: str) -> list[tuple[str, str]]:
    """The ``(name, value)`` entries of a bitcoind-style configuration file that apply to our
    network, in file order."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"Error reading configuration file {path}: {exc}") from None
    entries, section = [], ""
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        if text.startswith("[") and text.endswith("]"):
            section = text[1:-1].strip()
            continue
        name, equals, value = text.partition("=")
        name = name.strip().lstrip("-")
        if not equals or not name:
            raise ConfigFileError(f"Error reading configuration file {path}: parse error on "
                                  f"line {number}: {line}")
        network = section
        if "." in name:  # bitcoind's network-qualified spelling: regtest.rpcport=...
            network, name = name.split(".", 1)
        if network in OUR_SECTIONS:
            entries.append((name, value.strip()))
    return entries


def config_file_argv(parser: argparse.ArgumentParser, argv: Sequence[str],
                     skip: Sequence[str] = ("datadir", "conf")) -> tuple[list[str], list[str]]:
    """(``--name=value`` options from the configuration file that ``argv`` selects, names the
    parser does not know). ``argv`` is in ``--name`` form; a missing default file is no file,
    a missing ``--conf`` file is an error."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--datadir", default=DEFAULT_DATADIR)
    pre.add_argument("--conf")
    known, _ = pre.parse_known_args(list(argv))
    datadir = os.path.abspath(os.path.expanduser(known.datadir))
    path = os.path.join(datadir, os.path.expanduser(known.conf or CONFIG_FILENAME))
    if known.conf is None and not os.path.exists(path):
        return [], []
    options = {opt[2:]: action for action in parser._actions for opt in action.option_strings
               if opt.startswith("--")}
    out, unknown = [], []
    for name, value in read_config_file(path):
        action = options.get(name)
        if name in skip:
            continue
        if action is None:
            unknown.append(name)
        elif action.nargs == 0:  # a store_true flag: name=1 sets it
            if value.lower() not in ("0", "false", "no", "off"):
                out.append(f"--{name}")
        else:
            out.append(f"--{name}={value}")
    return out, unknown


def _valid_zmq_endpoint(endpoint: str) -> bool:
    if endpoint.startswith("ipc://"):
        return len(endpoint) > len("ipc://")
    if not endpoint.startswith("tcp://"):
        return False
    host, _, port = endpoint[len("tcp://"):].rpartition(":")
    return bool(host) and port.isdigit() and 1 <= int(port) <= 65535


def normalize_argv(argv: Sequence[str]) -> list[str]:
    """Accept bitcoind's single-dash ``-name=value`` / ``-flag`` spelling as ``--name``."""
    out = []
    for arg in argv:
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
            arg = "-" + arg
        out.append(arg)
    return out


def parse_money(text: str) -> int | None:
    """Core's ParseMoney: a non-negative decimal amount of at most 8 decimals and 10 integer
    digits, within MAX_MONEY, in satoshis; None if it is not one."""
    text = text.strip()
    whole, _, fraction = text.partition(".")
    if not text or not whole.isascii() or not fraction.isascii():
        return None
    if (whole and not whole.isdigit()) or (fraction and not fraction.isdigit()):
        return None
    if len(whole) > 10 or len(fraction) > 8:
        return None
    value = int(whole or "0") * COIN + int(fraction.ljust(8, "0") or "0")
    return value if value <= MAX_MONEY else None


def _fee_rate(parser: argparse.ArgumentParser, name: str, text: str | None, default: int
              ) -> int:
    """A BTC/kvB option in sat/kvB; an unreadable amount is elementsd's start-up error."""
    if text is None:
        return default
    rate = parse_money(text)
    if rate is None:  # AmountErrMsg
        parser.exit(1, f"Error: Invalid amount for -{name}=<amount>: '{text}'\n")
    return rate


def _relay_settings(parser: argparse.ArgumentParser, args: argparse.Namespace
                    ) -> PolicySettings:
    """The mempool policy options (Core's names and defaults)."""
    defaults = PolicySettings()
    if args.datacarriersize < 0:
        parser.exit(1, "Error: -datacarriersize must not be negative\n")
    return PolicySettings(
        acceptnonstdtxn=bool(args.acceptnonstdtxn),
        minrelaytxfee=_fee_rate(parser, "minrelaytxfee", args.minrelaytxfee,
                                defaults.minrelaytxfee),
        dustrelayfee=_fee_rate(parser, "dustrelayfee", args.dustrelayfee, defaults.dustrelayfee),
        datacarrier=bool(args.datacarrier), datacarriersize=args.datacarriersize,
        acceptdiscountct=bool(args.acceptdiscountct))


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
    parser.add_argument("--conf", help=f"configuration file (default DATADIR/{CONFIG_FILENAME})")
    parser.add_argument("--chain", default=DEFAULT_CHAIN, metavar="NAME",
                        help=f"which chain: {', '.join(CHAIN_NAMES)} (default {DEFAULT_CHAIN}; "
                             "ctregtest-borromean takes Borromean range proofs, as Elements); "
                             "a data directory keeps the chain it was made for")
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
    parser.add_argument("--maxtxfee", default="0.10",
                        help="the most fee (BTC) one wallet transaction may pay (default 0.10)")
    parser.add_argument("--par", type=int, default=0, metavar="N",
                        help="verification threads of the kernel (MSM, proofs, signatures): "
                             "0 = every core (default), N < 0 leaves -N cores free, as Core's "
                             f"-par; at most {MAX_THREADS}")
    parser.add_argument("--nosync", action="store_true", help=argparse.SUPPRESS)
    defaults = PolicySettings()
    parser.add_argument("--acceptnonstdtxn", nargs="?", const=True, default=False, type=_bool,
                        help="accept non-standard transactions into the mempool (default 0)")
    parser.add_argument("--minrelaytxfee", metavar="AMOUNT",
                        help="lowest fee rate (BTC/kvB) the mempool accepts (default "
                             f"{defaults.minrelaytxfee / COIN:.8f})")
    parser.add_argument("--dustrelayfee", metavar="AMOUNT",
                        help="fee rate (BTC/kvB) that defines dust outputs (default "
                             f"{defaults.dustrelayfee / COIN:.8f})")
    parser.add_argument("--datacarrier", nargs="?", const=True, default=True, type=_bool,
                        help="relay OP_RETURN (data carrier) outputs (default 1)")
    parser.add_argument("--datacarriersize", type=int, default=defaults.datacarriersize,
                        metavar="N", help="largest OP_RETURN scriptPubKey relayed, in bytes "
                                          f"(default {defaults.datacarriersize})")
    parser.add_argument("--acceptdiscountct", nargs="?", const=True, default=False, type=_bool,
                        help="judge the relay fee on the discounted size of confidential "
                             "transactions (default 0)")
    # Accepted for command-line compatibility with elementsd test setups; no effect here.
    for name in ("regtest", "server", "listen", "discover", "dnsseed", "fixedseeds",
                 "listenonion", "upnp", "natpmp", "validatepegin", "rpcdoccheck"):
        parser.add_argument(f"--{name}", nargs="?", const=True, help=argparse.SUPPRESS)
    return parser


def parse_config(argv: Sequence[str], prog: str, description: str | None) -> NodeConfig:
    parser = build_parser(prog, description)
    argv = normalize_argv(argv)
    try:
        from_file, unknown = config_file_argv(parser, argv)
    except ConfigFileError as exc:
        parser.error(str(exc))
    args = parser.parse_args([*from_file, *argv])
    if args.chain not in CHAIN_NAMES:  # bitcoind's words, then the names there are
        parser.exit(1, f"Error: Unknown chain {args.chain}. Known chains: "
                       f"{', '.join(CHAIN_NAMES)}\n")
    if args.rpcuser is not None and args.rpcpassword is None:
        parser.error("--rpcuser needs --rpcpassword")
    if not 1 <= args.rpcport <= 65535:  # bitcoind's words, at parsing, before anything starts
        parser.exit(1, f"Error: Invalid port specified in -rpcport: '{args.rpcport}'\n")
    if not 1 <= args.rpcthreads <= 1024 or not 1 <= args.rpcworkqueue <= 100_000:
        parser.error("--rpcthreads must be in 1..1024 and --rpcworkqueue in 1..100000")
    if not -MAX_THREADS <= args.par <= MAX_THREADS:
        parser.error(f"--par must be in -{MAX_THREADS}..{MAX_THREADS} (0 = every core)")
    zmq = {topic: getattr(args, f"zmqpub{topic}") for topic in ZMQ_TOPICS
           if getattr(args, f"zmqpub{topic}")}
    for topic, endpoint in zmq.items():
        if not _valid_zmq_endpoint(endpoint):
            parser.exit(1, f"Error: Invalid address specified in -zmqpub{topic}: '{endpoint}' "
                           "(tcp://HOST:PORT with a port in 1..65535, or ipc://PATH)\n")
    hwm = {topic: getattr(args, f"zmqpub{topic}hwm") for topic in zmq}
    return NodeConfig(
        datadir=os.path.abspath(os.path.expanduser(args.datadir)), chain=args.chain,
        rpcport=args.rpcport,
        rpcbind=tuple(args.rpcbind), rpcallowip=tuple(args.rpcallowip), rpcuser=args.rpcuser,
        rpcpassword=args.rpcpassword, rpcauth=tuple(args.rpcauth),
        rpccookiefile=args.rpccookiefile, rpcthreads=args.rpcthreads,
        rpcworkqueue=args.rpcworkqueue, rpcservertimeout=args.rpcservertimeout, zmq=zmq,
        zmq_hwm=hwm, txindex=bool(args.txindex),
        load_chain=str(Path(args.load_chain).resolve()) if args.load_chain else None,
        daemon=bool(args.daemon), printtoconsole=bool(args.printtoconsole),
        wallets=tuple(args.wallet), disablewallet=bool(args.disablewallet),
        fallbackfee=args.fallbackfee, maxtxfee=args.maxtxfee, par=args.par,
        sync=not args.nosync,
        ignored_config=tuple(unknown), relay=_relay_settings(parser, args))
