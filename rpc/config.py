"""The node's options as elementsd reads them (docs/elements-regtest.md §4, §9; Elements
``src/common/args.cpp``, ``src/common/config.cpp``): ``parse_config(argv, prog, ...)`` →
``NodeConfig``.

- Spelling: Core's ``-name=value`` (and ours, ``--name value``); ``-flag`` alone is
  ``-flag=1``, ``-noflag`` is ``-flag=0``.
- Data directory: ``-datadir`` (the program's default otherwise); everything a node writes goes
  to the chain's own subdirectory ``DATADIR/<chain>/`` (``NodeConfig.netdir``), as elementsd's
  ``GetDataDirNet``.
- Configuration file: ``DATADIR/elements.conf``, or ``-conf`` (relative to DATADIR). ``chain=``
  is read from the top section only; a ``[<chain>]`` section applies to that chain only (also
  spelt ``<chain>.name=value``), other sections are skipped; the network-only options
  (``NETWORK_ONLY``) are ignored in the top section with Core's warning. Precedence: command
  line, then the chain's section, then the top section; within the file the first value wins.
  Names the node does not know are skipped ("Ignoring unknown configuration value X" in
  debug.log); on the command line they are fatal ("Error: Invalid parameter -x").
- The old ``DATADIR/ctplugin.conf`` is refused with a one-line migration message.
- Logging options (``-debug``, ``-loglevel``, ``-logtimemicros``...) are ``rpc.logs``'s,
  collected in ``NodeConfig.logging``.
- Options of elementsd that concern what this node does not have (an address manager, seeds,
  Tor, SQLite) are accepted and have no effect (``NO_EFFECT``); the P2P options
  ``-port``, ``-bind``, ``-listen``, ``-connect``, ``-addnode``, ``-maxconnections``,
  ``-whitelist``, ``-peertimeout``, ``-bantime`` are real (``net``; docs/p2p.md §7.1); chain
  options (``CHAIN_OPTIONS``: ``-con_*``, ``-initialfreecoins``...) are collected for the
  chain's profile; the elementsd options it cannot honour (``UNSUPPORTED``) are a start-up
  error.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ctplugin import __version__
from ctplugin.elements.consensus import COIN, MAX_MONEY
from ctplugin.secp256k1.kernel import MAX_THREADS
from net.messages import user_agent
from regtest.params import CHAIN_NAMES, DEFAULT_CHAIN
from rpc.helpformat import UserHelpFormatter
from rpc.logs import CATEGORIES, LEVELS, LogOptionError, LogSettings, log_settings
from rpcclient import cookie_path
from validator import DEFAULT_CHECKBLOCKS, DEFAULT_CHECKLEVEL, PolicySettings

DEFAULT_RPC_PORT = 7040  # elementsregtest's (Elements src/chainparamsbase.cpp), every chain's here
DEFAULT_RPC_THREADS = 16
DEFAULT_RPC_WORKQUEUE = 64
DEFAULT_RPC_SERVERTIMEOUT = 30
DEFAULT_DATADIR = os.path.join(os.path.expanduser("~"), ".ctplugin")
ELEMENTS_DATADIR = os.path.join(os.path.expanduser("~"), ".elements")
ELEMENTS_DEFAULT_CHAIN = "liquidv1"  # elementsd's chain without any chain option
CONFIG_FILENAME = "elements.conf"
LEGACY_CONFIG_FILENAME = "ctplugin.conf"
DEFAULT_P2P_PORT = 18444  # elementsregtest's (Elements src/chainparams.cpp), every chain's here
DEFAULT_MAX_CONNECTIONS = 125
ZMQ_TOPICS = ("hashblock", "hashtx", "rawblock", "rawtx", "sequence")
DEFAULT_ZMQ_HWM = 1000

NETWORK_ONLY = frozenset({"port", "rpcport", "bind", "rpcbind", "wallet", "walletdir",
                          "addnode", "connect"})
"""Core's ``ArgsManager::NETWORK_ONLY`` options: read from a chain's section, never from the
top section of the file (only mainnet reads them there, and we run no main chain)."""

NO_EFFECT: dict[str, str] = {
    # logging: no peer addresses are logged, so there are none to hide or show
    "logips": "logging",
    # P2P beyond manual connections (net/): no address manager, seeds, Tor or permissions
    "seednode": "P2P",
    "whitebind": "P2P", "v2transport": "P2P", "discover": "P2P", "dnsseed": "P2P",
    "fixedseeds": "P2P", "listenonion": "P2P (Tor)", "onion": "P2P (Tor)", "proxy": "P2P",
    "upnp": "P2P", "natpmp": "P2P", "networkactive": "P2P", "maxuploadtarget": "P2P",
    # the wallet: one database format, keys derived when asked for
    "deprecatedrpc": "one wallet format (create_bdb and the rest)",
    "unsafesqlitesync": "no SQLite",
    # RPC help is generated from one table, so it cannot disagree with itself
    "rpcdoccheck": "RPC help",
}
"""elementsd options accepted with no effect here, and why (docs/elements-regtest.md §9)."""

CHAIN_OPTIONS = frozenset({
    "con_elementsmode", "con_blockheightinheader", "con_signed_blocks", "con_has_parent_chain",
    "con_genesis_style", "con_blocksubsidy", "con_nsubsidyhalvinginterval",
    "con_connect_genesis_outputs", "con_mandatorycoinbase", "con_bip34height",
    "con_bip65height", "con_bip66height", "con_csv_deploy_start", "con_max_block_sig_size",
    "con_parent_pegged_asset", "signblockscript", "fedpegscript", "parentgenesisblockhash",
    "initialfreecoins", "initialreissuancetokens", "anyonecanspendaremine", "blindedaddresses",
    "defaultpeggedassetname", "evbparams", "enforce_pak", "subsidyasset", "feeasset", "ct_bits",
    "ct_exponent", "pubkeyprefix", "scriptprefix", "secretprefix", "blindedprefix",
    "bech32_hrp", "blech32_hrp", "extpubkeyprefix", "extprvkeyprefix", "pchmessagestart",
    "validatepegin"})
"""Elements' chain options the elementsregtest profile honours (``regtest.elements``;
docs/elements-regtest.md §1): collected in ``NodeConfig.chain_options`` for it."""

UNSUPPORTED = frozenset({
    "vbparams", "testactivationheight", "con_dyna_deploy_signal", "con_dyna_deploy_start",
    "pak", "multi_data_permitted", "con_start_p2wsh_script", "con_parentpowlimit",
    "con_parent_chain_signblockscript", "con_powlimit", "dynamic_epoch_length",
    "total_valid_epochs", "peginconfirmationdepth", "parentpubkeyprefix",
    "parentscriptprefix", "parent_bech32_hrp", "parent_blech32_hrp", "mainchainrpchost",
    "mainchainrpcport", "mainchainrpcuser", "mainchainrpcpassword", "mainchainrpccookiefile",
    "creatediscountct",
    "acceptunlimitedissuances", "permitbaremultisig",
    "blocksonly", "prune", "assumevalid", "checkpoints",
    "includeconf"})
"""elementsd options this node knows of but cannot honour (yet): a start-up error, from the
command line or the file, rather than a node that silently behaves otherwise."""


MULTI_CHAIN_OPTIONS = frozenset({"evbparams"})
"""Chain options whose every value counts (one entry per deployment)."""


def is_chain_option(name: str) -> bool:
    return name in CHAIN_OPTIONS


@dataclass(frozen=True, slots=True)
class NodeConfig:
    datadir: str  # the base data directory (-datadir); the node's files are in ``netdir``
    chain: str = DEFAULT_CHAIN  # which of our chains (regtest.params.select_chain), Core's -chain
    chain_options: tuple[tuple[str, str], ...] = ()
    """-con_* and CHAIN_OPTIONS as (name, value): the file's, then the command line's."""
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
    logging: LogSettings = field(default_factory=LogSettings)  # -debug, -loglevel, ... (rpc.logs)
    wallets: tuple[str, ...] = ()
    """-wallet names; -nowallet (``nowallet``) loads none, not even settings.json's."""
    nowallet: bool = False
    disablewallet: bool = False
    keypool: int = 1000  # -keypool: keys derived ahead (Core's DEFAULT_KEYPOOL_SIZE)
    fallbackfee: str = "0.0002"  # BTC/kvB, the test framework's
    maxtxfee: str = "0.10"  # BTC: the most fee one wallet transaction may pay (Core's default)
    relay: PolicySettings = field(default_factory=PolicySettings)
    """The mempool's policy (-acceptnonstdtxn, -minrelaytxfee, -dustrelayfee, -datacarrier...)."""
    uacomment: tuple[str, ...] = ()  # appended to getnetworkinfo's subversion, as Core's
    port: int = DEFAULT_P2P_PORT  # -port: the P2P listening port
    listen: bool = False
    """-listen: accept P2P connections. Off unless -listen=1 or a -bind (Core's default is
    on; ours keeps nodes started side by side from fighting over one port,
    docs/p2p.md §7.1)."""
    bind: tuple[str, ...] = ()  # -bind=<addr>[:port]
    connect: tuple[str, ...] = ()  # -connect: manual connections only ("0": none)
    addnode: tuple[str, ...] = ()  # -addnode: kept in the added-node list and connected
    maxconnections: int = DEFAULT_MAX_CONNECTIONS
    whitelist: tuple[str, ...] = ()  # -whitelist=[perms@]net (net.permissions)
    peertimeout: int = 60  # -peertimeout: seconds to complete the handshake
    bantime: int = 60 * 60 * 24  # -bantime: setban's default duration
    par: int = 0
    """Kernel threads as Core's -par: 0 = every core, N > 0 = N, N < 0 = leave -N cores free."""
    sync: bool = True
    reindex: bool = False  # -reindex: rebuild the block index and chainstate from blk*.dat
    reindex_chainstate: bool = False  # -reindex-chainstate: rebuild the chainstate
    checkblocks: int = DEFAULT_CHECKBLOCKS  # -checkblocks: blocks verified at start (0: all)
    checklevel: int = DEFAULT_CHECKLEVEL  # -checklevel: how thoroughly (0-4, Core's levels)
    ignored_config: tuple[str, ...] = ()  # configuration-file names this node does not know
    warnings: tuple[str, ...] = ()  # Core's start-up warnings about the configuration

    @property
    def netdir(self) -> str:
        """The chain's own data directory, ``DATADIR/<chain>`` (Core's ``GetDataDirNet``):
        cookie, debug.log, blocks/, chainstate/, wallets/, settings.json, the pid file."""
        return os.path.join(self.datadir, self.chain)

    @property
    def kernel_threads(self) -> int:
        """What ``--par`` asks of the kernel (``kernel.set_threads``: 0 = every core)."""
        if self.par >= 0:
            return self.par
        return max(1, (os.cpu_count() or 1) + self.par)

    @property
    def cookie_path(self) -> str:
        """Where this node writes its cookie: where a client looks for it (``rpcclient``)."""
        return str(cookie_path(self.datadir, chain_subdir=self.chain,
                               rpccookiefile=self.rpccookiefile))


def subversion(config: NodeConfig) -> str:
    """The node's user agent, ``/ctplugin:VERSION(uacomment; ...)/`` (BIP14; getnetworkinfo's
    subversion and the version message's)."""
    return user_agent("ctplugin", __version__, config.uacomment)


class ConfigFileError(Exception):
    """The configuration file cannot be read (message for the user)."""


@dataclass(frozen=True, slots=True)
class ConfigFile:
    """A bitcoind-style configuration file: ``(section, name, value)`` in file order; the top
    section is ``""``."""

    path: str
    entries: tuple[tuple[str, str, str], ...]

    def chain(self) -> str | None:
        """The top section's ``chain=`` (the first one: Core's rule for the file)."""
        return next((value for section, name, value in self.entries
                     if section == "" and name == "chain"), None)

    def for_chain(self, chain: str) -> tuple[list[tuple[str, str]], list[str]]:
        """(the ``(name, value)`` entries that apply to ``chain`` in precedence order: the
        chain's section, then the top section, each in file order — so the first value of a
        name is the one that counts; Core's warnings about network-only names in the top
        section)."""
        top = [(n, v) for s, n, v in self.entries if s == "" and n not in ("chain", "regtest")]
        # chain= is read from the top section only (Core's GetChainTypeString).
        ours = [(n, v) for s, n, v in self.entries if s == chain and n != "chain"]
        warnings = []
        for name in dict.fromkeys(n for n, _ in top if n in NETWORK_ONLY):
            if not any(n == name for n, _ in ours):  # Core warns only when nothing overrides
                warnings.append(f"Warning: Config setting for -{name} only applied on {chain} "
                                f"network when in [{chain}] section.")
        return ours + [(n, v) for n, v in top if n not in NETWORK_ONLY], warnings


def read_config_file(path: str) -> ConfigFile:
    """Parse ``path``: ``name=value`` lines, ``#`` comments, ``[section]`` headers and the
    ``section.name=value`` spelling; ``ConfigFileError`` when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"Error: Error reading configuration file {path}: {exc}") from None
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
            raise ConfigFileError(f"Error: Error reading configuration file {path}: parse "
                                  f"error on line {number}: {line}")
        network = section
        if "." in name:  # bitcoind's network-qualified spelling: elementsregtest.rpcport=...
            network, name = name.split(".", 1)
        entries.append((network, name, value.strip()))
    return ConfigFile(path, tuple(entries))


@dataclass(frozen=True, slots=True)
class FileOptions:
    """What a configuration file adds to a command line."""

    argv: list[str]  # ``--name=value`` options, file precedence applied
    chain_options: list[tuple[str, str]]
    unknown: list[str]  # names the parser does not know (skipped, logged)
    warnings: list[str]


def locate_config(datadir: str, conf: str | None) -> str | None:
    """The configuration file's path (``-conf`` relative to DATADIR), or None: no ``-conf``
    and no ``DATADIR/elements.conf``. ``ConfigFileError`` for the old ``ctplugin.conf``."""
    path = os.path.join(datadir, os.path.expanduser(conf or CONFIG_FILENAME))
    if conf is not None or os.path.exists(path):
        return path
    legacy = os.path.join(datadir, LEGACY_CONFIG_FILENAME)
    if os.path.exists(legacy):
        raise ConfigFileError(f"Error: {legacy} is no longer read: rename it to "
                              f"{CONFIG_FILENAME} and put its chain options (rpcport, ...) in a "
                              "[CHAIN] section, e.g. [ctregtest] (docs/elements-regtest.md §4)")
    return None


def file_options(parser: argparse.ArgumentParser, config: ConfigFile | None, chain: str,
                 skip: Sequence[str] = ("datadir", "conf"), node: bool = True) -> FileOptions:
    """The options ``config`` gives ``chain``, as ``--name=value`` arguments for ``parser``
    (to be put before the command line's, which then win). For the ``node`` an
    ``UNSUPPORTED`` name is a ``ConfigFileError``; a client takes only its own names."""
    if config is None:
        return FileOptions([], [], [], [])
    entries, warnings = config.for_chain(chain)
    actions = _long_options(parser)
    chosen: dict[str, list[str]] = {}
    chain_options: list[tuple[str, str]] = []
    unknown: list[str] = []
    for name, value in entries:  # in precedence order: the first value of a name counts
        if name in skip:
            continue
        if name in UNSUPPORTED and node:
            raise ConfigFileError(_unsupported(name))
        if is_chain_option(name):
            if name in MULTI_CHAIN_OPTIONS or all(n != name for n, _ in chain_options):
                chain_options.append((name, value))
            continue
        action = actions.get(name)
        if action is None:
            unknown.append(name)
        elif isinstance(action, argparse._AppendAction):
            chosen.setdefault(name, []).append(value)  # a list: every value counts
        else:
            chosen.setdefault(name, [value])
    argv = []
    for name, values in chosen.items():
        for value in values:
            if actions[name].nargs == 0:  # a store_true flag: name=1 sets it
                if value.lower() not in ("0", "false", "no", "off"):
                    argv.append(f"--{name}")
            else:
                argv.append(f"--{name}={value}")
    return FileOptions(argv, chain_options, list(dict.fromkeys(unknown)), warnings)


def _long_options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {opt[2:]: action for action in parser._actions for opt in action.option_strings
            if opt.startswith("--")}


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


def split_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]
                       ) -> tuple[list[str], list[tuple[str, str]]]:
    """(the options for ``parser``, the chain options) of a normalized command line; Core's
    ``-noname`` becomes ``--name=0``. An option the parser does not know exits with Core's
    "Error: Invalid parameter -x" (status 1)."""
    actions = _long_options(parser)
    out: list[str] = []
    chain_options: list[tuple[str, str]] = []
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("--") or arg == "--":
            out.append(arg)
            continue
        name, equals, value = arg[2:].partition("=")
        if is_chain_option(name):
            chain_options.append((name, value if equals else "1"))
            continue
        negated = name[2:]
        if name not in actions and name.startswith("no") and (
                negated in actions or is_chain_option(negated)):
            # -nofoo is Core's -foo=0, and -nofoo=0 its -foo=1
            value = "1" if equals and _bool_or_none(value) is False else "0"
            if is_chain_option(negated):
                chain_options.append((negated, value))
            else:
                out.append(f"--{negated}={value}")
            continue
        if name in UNSUPPORTED or (name.startswith("no") and negated in UNSUPPORTED):
            parser.exit(1, f"{_unsupported(name if name in UNSUPPORTED else negated)}\n")
        if name not in actions and name != "help":
            parser.exit(1, f"Error: Invalid parameter -{name}\n")
        out.append(arg)
        action = actions.get(name)
        if action is not None and not equals and action.nargs is None and i < len(args):
            out.append(args[i])  # ``--name value``: ours, not Core's
            i += 1
    return out, chain_options


def _unsupported(name: str) -> str:
    return (f"Error: -{name} is not supported by this node: it cannot be honoured "
            "(docs/elements-regtest.md §9)")


def _bool_or_none(text: str) -> bool | None:
    if text.lower() in ("1", "true", "yes", "on", ""):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    return None


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


def _logging(parser: argparse.ArgumentParser, args: argparse.Namespace) -> LogSettings:
    """The logging options (``rpc.logs``); a category or level Core does not know is its
    start-up error."""
    try:
        return log_settings(args.debug, args.debugexclude, args.loglevel,
                            timestamps=args.logtimestamps, timemicros=args.logtimemicros,
                            threadnames=args.logthreadnames,
                            sourcelocations=args.logsourcelocations,
                            shrinkdebugfile=args.shrinkdebugfile)
    except LogOptionError as exc:
        parser.exit(1, f"{exc}\n")


def _bool(text: str) -> bool:
    value = _bool_or_none(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"not a boolean: {text!r}")
    return value


@dataclass(frozen=True, slots=True)
class Program:
    """The defaults of one command line that starts a node: ``ctplugin node`` (``NODE``) or
    ``ctplugin-elementsd`` (``ELEMENTSD``, elementsd's own defaults)."""

    name: str
    datadir: str
    chain: str
    printtoconsole: bool  # the log on stdout in the foreground, unless -printtoconsole=0


NODE = Program("ctplugin node", DEFAULT_DATADIR, DEFAULT_CHAIN, False)
# elementsd logs to stdout too unless -daemon (Core's -printtoconsole default)
ELEMENTSD = Program("ctplugin-elementsd", ELEMENTS_DATADIR, ELEMENTS_DEFAULT_CHAIN, True)


def build_parser(prog: str, description: str | None,
                 program: Program = NODE) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=description,
                                     formatter_class=UserHelpFormatter)
    parser.add_argument("--datadir", default=program.datadir,
                        help=f"data directory (default {program.datadir}); the chain's files "
                             "are in DATADIR/<chain>/")
    parser.add_argument("--conf", help=f"configuration file (default DATADIR/{CONFIG_FILENAME})")
    parser.add_argument("--chain", default=program.chain, metavar="NAME",
                        help=f"which chain: {', '.join(CHAIN_NAMES)} (default {program.chain}; "
                             "ctregtest-borromean takes Borromean range proofs, as Elements)")
    parser.add_argument("--rpcport", type=int, default=DEFAULT_RPC_PORT,
                        help=f"JSON-RPC port (default {DEFAULT_RPC_PORT})")
    parser.add_argument("--rpcbind", action="append", default=[],
                        help="address[:port] to listen on (needs --rpcallowip)")
    parser.add_argument("--rpcallowip", action="append", default=[],
                        help="allow JSON-RPC from this IP, net/prefix or net/mask")
    parser.add_argument("--rpcuser", help="user name for JSON-RPC (with --rpcpassword; "
                                          "default: the cookie file)")
    parser.add_argument("--rpcpassword", help="password for JSON-RPC (with --rpcuser)")
    parser.add_argument("--rpcauth", action="append", default=[],
                        help="user:salt$hmac (Core's share/rpcauth format); repeatable")
    parser.add_argument("--rpccookiefile",
                        help="cookie path (default DATADIR/<chain>/.cookie; relative to there)")
    parser.add_argument("--rpcthreads", type=int, default=DEFAULT_RPC_THREADS,
                        help="calls served at the same time")
    parser.add_argument("--rpcworkqueue", type=int, default=DEFAULT_RPC_WORKQUEUE,
                        help="calls waiting for a thread before the node answers 503")
    parser.add_argument("--rpcservertimeout", type=float, default=DEFAULT_RPC_SERVERTIMEOUT,
                        help="seconds an idle HTTP connection stays open")
    parser.add_argument("--server", nargs="?", const=True, default=True, type=_bool,
                        help="serve JSON-RPC (always: -server=0 is refused)")
    for topic in ZMQ_TOPICS:
        parser.add_argument(f"--zmqpub{topic}", metavar="ADDRESS",
                            help=f"publish {topic} on this ZMQ endpoint (tcp://127.0.0.1:PORT)")
        parser.add_argument(f"--zmqpub{topic}hwm", type=int, default=DEFAULT_ZMQ_HWM,
                            metavar="N", help=argparse.SUPPRESS)
    parser.add_argument("--txindex", nargs="?", const=True, default=False, type=_bool,
                        help="index every transaction (getrawtransaction without blockhash; "
                             "default 0)")
    parser.add_argument("--load-chain", "--loadblock", dest="load_chain", metavar="FILE",
                        help="import the blocks of a chain file (blk*.dat framing) at start")
    parser.add_argument("--daemon", nargs="?", const=True, default=False, type=_bool,
                        help="run in the background once the RPC server is up (default 0)")
    parser.add_argument("--printtoconsole", nargs="?", const=True,
                        default=program.printtoconsole, type=_bool,
                        help="the log on stdout too, in the foreground (default "
                             f"{int(program.printtoconsole)})")
    parser.add_argument("--debug", nargs="?", const="1", action="append", default=[],
                        metavar="CATEGORY",
                        help="write a category's debug lines to debug.log (repeatable; alone or "
                             "1/all: every category; 0/none: none). Categories: "
                             f"{', '.join(CATEGORIES)}")
    parser.add_argument("--debugexclude", nargs="?", const="1", action="append", default=[],
                        metavar="CATEGORY",
                        help="leave out a category's debug lines (takes priority over --debug)")
    parser.add_argument("--loglevel", action="append", default=[], metavar="[CATEGORY:]LEVEL",
                        help="level threshold of every category's lines, or of one (repeatable;"
                             f" default debug). Levels: {', '.join(LEVELS)}")
    for name, text in (("logtimestamps", "prefix each line with its UTC time (default 1)"),
                       ("logtimemicros", "times with microseconds (default 0)"),
                       ("logthreadnames", "prefix each line with its thread's name (default 0)"),
                       ("logsourcelocations", "prefix each line with its source file, line "
                                              "and function (default 0)"),
                       ("shrinkdebugfile", "at start, a debug.log over 11 MB keeps its last "
                                           "10 MB (default 1 unless --debug)")):
        parser.add_argument(f"--{name}", nargs="?", const="1", metavar="0|1", help=text)
    parser.add_argument("--uacomment", action="append", default=[],
                        help="comment appended to the user agent (getnetworkinfo subversion)")
    parser.add_argument("--port", type=int, default=DEFAULT_P2P_PORT,
                        help=f"P2P port (default {DEFAULT_P2P_PORT})")
    parser.add_argument("--listen", nargs="?", const=True, default=None, type=_bool,
                        help="accept P2P connections (default 0; 1 with -bind)")
    parser.add_argument("--bind", action="append", default=[],
                        help="address[:port] to listen on for P2P (implies -listen=1)")
    parser.add_argument("--connect", action="append", default=[],
                        help="connect to this P2P node (repeatable); -connect=0: none")
    parser.add_argument("--addnode", action="append", default=[],
                        help="add this P2P node to the added-node list (repeatable)")
    parser.add_argument("--maxconnections", type=int, default=DEFAULT_MAX_CONNECTIONS,
                        help="most P2P connections, 11 of them kept for outbound as Core "
                             f"(default {DEFAULT_MAX_CONNECTIONS})")
    parser.add_argument("--whitelist", action="append", default=[],
                        help="[permissions@]IP or network: permissions of matching peers "
                             "(noban, mempool, relay, ...; docs/p2p.md §6.2)")
    parser.add_argument("--peertimeout", type=int, default=60,
                        help="seconds a new P2P connection has to complete its handshake "
                             "(default 60)")
    parser.add_argument("--bantime", type=int, default=60 * 60 * 24,
                        help="default setban duration in seconds (default 86400)")
    parser.add_argument("--wallet", action="append", default=[],
                        help="load this wallet at start (repeatable)")
    parser.add_argument("--disablewallet", nargs="?", const=True, default=False, type=_bool,
                        help="load no wallet and serve no wallet calls (default 0)")
    parser.add_argument("--keypool", type=int, default=1000,
                        help="keys each wallet derives ahead of the last one handed out, as "
                             "Core's keypool (default 1000)")
    parser.add_argument("--fallbackfee", default="0.0002",
                        help="wallet fee rate in BTC/kvB when none is given (default 0.0002)")
    parser.add_argument("--maxtxfee", default="0.10",
                        help="the most fee (BTC) one wallet transaction may pay (default 0.10)")
    parser.add_argument("--walletrbf", nargs="?", const=True, default=False, type=_bool,
                        help="wallet transactions signal BIP125 replaceability: our wallet's "
                             "never do (-walletrbf=1 is refused)")
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
    parser.add_argument("--par", type=int, default=0, metavar="N",
                        help="verification threads of the kernel (MSM, proofs, signatures): "
                             "0 = every core (default), N < 0 leaves -N cores free, as Core's "
                             f"-par; at most {MAX_THREADS}")
    parser.add_argument("--nosync", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reindex", nargs="?", const=True, default=False, type=_bool,
                        help="rebuild the block index and the chainstate from the blk*.dat "
                             "files (every block validated again)")
    parser.add_argument("--reindex-chainstate", nargs="?", const=True, default=False,
                        type=_bool, help="rebuild the chainstate from the indexed blocks")
    parser.add_argument("--checkblocks", type=int, default=DEFAULT_CHECKBLOCKS, metavar="N",
                        help=f"how many blocks to check at start-up (default "
                             f"{DEFAULT_CHECKBLOCKS}, 0 = all)")
    parser.add_argument("--checklevel", type=int, default=DEFAULT_CHECKLEVEL, metavar="N",
                        help="how thorough the start-up check is: 0 reads the blocks, 1 "
                             "checks their validity, 2 their undo data, 3 disconnects them on "
                             "a scratch view of the UTXO set (4 = 3; default "
                             f"{DEFAULT_CHECKLEVEL})")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    for name, reason in NO_EFFECT.items():
        parser.add_argument(f"--{name}", nargs="?", const="1", action="append",
                            help=f"accepted, no effect ({reason})")
    return parser


def resolve_config(options: Sequence[str], program: Program
                   ) -> tuple[str, str, ConfigFile | None]:
    """(data directory, chain, configuration file or None) of a normalized command line, as
    Core finds them: ``-datadir``, then the file (``-conf`` or ``DATADIR/elements.conf``),
    then ``-chain`` from the command line, else the file's top section, else the program's
    default. ``ConfigFileError`` when the file cannot be read."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--datadir", default=program.datadir)
    pre.add_argument("--conf")
    pre.add_argument("--chain")
    known, _ = pre.parse_known_args(list(options))
    datadir = os.path.abspath(os.path.expanduser(known.datadir))
    path = locate_config(datadir, known.conf)
    config_file = read_config_file(path) if path is not None else None
    chain = known.chain or (config_file.chain() if config_file else None) or program.chain
    return datadir, chain, config_file


def parse_config(argv: Sequence[str], prog: str, description: str | None,
                 program: Program = NODE) -> NodeConfig:
    """The configuration of a node started with ``argv`` (module docstring). A usage error
    exits: status 1 with Core's "Error: ..." line, or argparse's status 2 for a malformed
    value."""
    parser = build_parser(prog, description, program)
    raw = ["--help" if arg in ("-?", "--?") else arg for arg in normalize_argv(argv)]
    options, cmdline_chain = split_command_line(parser, raw)
    try:
        datadir, chain, config_file = resolve_config(options, program)
    except ConfigFileError as exc:
        parser.exit(1, f"{exc}\n")
    try:
        from_file = file_options(parser, config_file, chain)
    except ConfigFileError as exc:
        parser.exit(1, f"{exc}\n")
    args, extra = parser.parse_known_args([*from_file.argv, *options])
    if args.version:
        print(f"{prog} version v{__version__}")
        raise SystemExit(0)
    if extra:  # Core's words for a stray word on the command line
        parser.exit(1, f"Error: Command line contains unexpected token '{extra[0]}', see "
                       f"{prog} -h for a list of options.\n")
    if chain not in CHAIN_NAMES:  # bitcoind's words, then the names there are
        hint = (" (elementsd's default chain: give -chain=elementsregtest)"
                if chain == ELEMENTS_DEFAULT_CHAIN else "")
        parser.exit(1, f"Error: Unknown chain {chain}{hint}. Known chains: "
                       f"{', '.join(CHAIN_NAMES)}\n")
    if not args.server:
        parser.exit(1, "Error: -server=0 is not supported: this node is its JSON-RPC server\n")
    if args.walletrbf:
        parser.exit(1, "Error: -walletrbf=1 is not supported: the wallet's transactions do not "
                       "signal replaceability (use -walletrbf=0)\n")
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
    if not 1 <= args.port <= 65535:
        parser.exit(1, f"Error: Invalid port specified in -port: '{args.port}'\n")
    if args.maxconnections < 0:
        parser.exit(1, "Error: -maxconnections must not be negative\n")
    if args.peertimeout <= 0:
        parser.exit(1, "Error: peertimeout must be a positive integer.\n")
    connect = tuple(c for c in args.connect if c not in ("0", ""))  # -connect=0: none
    # The command line's come last: the chain's profile takes the last value of a name.
    chain_options = (*from_file.chain_options, *cmdline_chain)
    return NodeConfig(
        datadir=datadir, chain=chain, chain_options=chain_options,
        rpcport=args.rpcport,
        rpcbind=tuple(args.rpcbind), rpcallowip=tuple(args.rpcallowip), rpcuser=args.rpcuser,
        rpcpassword=args.rpcpassword, rpcauth=tuple(args.rpcauth),
        rpccookiefile=args.rpccookiefile, rpcthreads=args.rpcthreads,
        rpcworkqueue=args.rpcworkqueue, rpcservertimeout=args.rpcservertimeout, zmq=zmq,
        zmq_hwm=hwm, txindex=bool(args.txindex),
        load_chain=str(Path(args.load_chain).resolve()) if args.load_chain else None,
        daemon=bool(args.daemon), printtoconsole=bool(args.printtoconsole),
        logging=_logging(parser, args),
        wallets=tuple(w for w in args.wallet if w != "0"), nowallet="0" in args.wallet,
        disablewallet=bool(args.disablewallet), keypool=args.keypool,
        fallbackfee=args.fallbackfee, maxtxfee=args.maxtxfee,
        relay=_relay_settings(parser, args), uacomment=tuple(args.uacomment), par=args.par,
        port=args.port, listen=bool(args.listen) if args.listen is not None else bool(args.bind),
        bind=tuple(args.bind), connect=connect, addnode=tuple(args.addnode),
        maxconnections=args.maxconnections, whitelist=tuple(args.whitelist),
        peertimeout=args.peertimeout, bantime=args.bantime,
        sync=not args.nosync, reindex=bool(args.reindex),
        reindex_chainstate=bool(args.reindex_chainstate), checkblocks=args.checkblocks,
        checklevel=args.checklevel, ignored_config=tuple(from_file.unknown),
        warnings=tuple(from_file.warnings))
