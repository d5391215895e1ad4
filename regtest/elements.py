"""Elements' regtest chain, ``elementsregtest``, built from elementsd's chain options
(docs/elements-regtest.md §1.1; Elements ``src/kernel/chainparams.cpp`` ``CCustomParams``).

elementsd makes every chain name it does not know a *custom* chain: Bitcoin regtest's
parameters overridden by the chain options, with a genesis block that commits to the name and
the two scripts (``ctplugin.elements.genesis``). Here that is two steps:

- ``elements_chain_options(values)``: the option strings of a configuration (what the node's
  command line and ``elements.conf`` give, keys without the dash, e.g. ``"con_blocksubsidy"``)
  → one ``ElementsChainOptions`` value, every field with Elements' default when not given. A
  value we cannot honour raises ``ChainOptionError`` naming the option. Keys that are not chain
  options are left to their owners (the node, the wallet, the mempool).
- ``elements_chain(options)`` → the ``ChainParams`` those options imply: the genesis built as
  Elements builds it, the pegged asset as policy (fee and subsidy) asset, Borromean range proofs
  only (a Bulletproof is invalid there, as in Elements), message start ``5319f20e``.

What we do not have is refused, never approximated: dynamic federations (we support only
"never active", what Elements' functional framework configures), peg-in validation against a
parent bitcoind, PAK enforcement, non-Elements serialization, other genesis styles, a subsidy
or fee asset other than the pegged asset, and block challenges other than ``OP_TRUE`` (blocks
signed by a federation need the signblock RPCs).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache

from ctplugin.elements.chainparams import (
    ELEMENTS_RANGE_PROOFS,
    ELEMENTS_REGTEST_ADDRESSES,
    AddressParams,
    ChainOptionError,
    ChainParams,
)
from ctplugin.elements.consensus import DEFAULT_COINBASE_MATURITY, MAX_MONEY
from ctplugin.elements.genesis import (
    BITCOIN_REGTEST_GENESIS,
    OP_TRUE,
    GenesisOptions,
    genesis_block,
)
from ctplugin.errors import EncodingError
from regtest.params import (
    DEFAULT_CT_BITS,
    DEFAULT_CT_EXPONENT,
    ELEMENTSREGTEST,
    MAX_BLOCK_SIG_SIZE,
    SUBSIDY_HALVING_INTERVAL,
    select_chain,
)

ELEMENTS_MESSAGE_START = bytes.fromhex("5319f20e")
"""A custom chain's ``-pchmessagestart`` default: P2P magic and blk-file record magic."""
NEVER_ACTIVE_HEIGHT = 1 << 31
"""An ``-evbparams`` start height no chain reaches (the framework's ``dynafed:2147483648:::``)."""
NEVER_ACTIVE = -2  # Consensus::BIP9Deployment::NEVER_ACTIVE
DEFAULT_PEGGED_ASSET_NAME = "bitcoin"
BUILTIN_CHAINS = frozenset({"main", "test", "testnet4", "signet", "regtest", "liquidv1",
                            "liquidv1test", "liquidtestnet"})
"""elementsd's own chains (``src/util/chaintype.cpp``); every other name is a custom chain."""


@dataclass(frozen=True, slots=True)
class ElementsChainOptions:
    """elementsd's chain options, each with its elementsregtest default (the option's name in
    parentheses; docs/elements-regtest.md §1.1 says what each means).

    Consensus: ``name`` (``-chain``), ``block_subsidy`` (``-con_blocksubsidy``, satoshis),
    ``subsidy_halving_interval`` (``-con_nsubsidyhalvinginterval``), ``connect_genesis_outputs``
    (``-con_connect_genesis_outputs``), ``bip34_height`` / ``bip65_height`` / ``bip66_height``
    (``-con_bip34height`` ...), ``csv_height`` (``-con_csv_deploy_start``), ``signblockscript``,
    ``max_block_sig_size`` (``-con_max_block_sig_size``), ``mandatory_coinbase``
    (``-con_mandatorycoinbase``, None: any script), ``fedpegscript``, ``parent_genesis``
    (``-parentgenesisblockhash``, internal byte order), ``parent_pegged_asset``
    (``-con_parent_pegged_asset``, internal byte order), ``initial_free_coins`` /
    ``initial_reissuance_tokens`` (``-initialfreecoins`` / ``-initialreissuancetokens``),
    ``message_start`` (``-pchmessagestart``), ``dynafed_start`` (the ``dynafed`` entry of
    ``-evbparams``: only never-active heights).

    Node and wallet: ``anyonecanspendaremine``, ``blinded_addresses`` (``-blindedaddresses``),
    ``default_pegged_asset_name`` (``-defaultpeggedassetname``), ``ct_bits`` / ``ct_exponent``,
    ``addresses`` (``-pubkeyprefix``, ``-scriptprefix``, ``-secretprefix``, ``-blindedprefix``,
    ``-bech32_hrp``, ``-blech32_hrp``, ``-extpubkeyprefix``, ``-extprvkeyprefix``).
    ``-validatepegin`` has no field: only 0 is accepted (there are no peg-ins to check).
    """

    name: str = ELEMENTSREGTEST
    block_subsidy: int = 0
    subsidy_halving_interval: int = SUBSIDY_HALVING_INTERVAL
    connect_genesis_outputs: bool = True
    bip34_height: int = 0
    bip65_height: int = 0
    bip66_height: int = 0
    csv_height: int = 1  # the help text says -1; chainparams.cpp reads 1
    signblockscript: bytes = OP_TRUE
    max_block_sig_size: int = MAX_BLOCK_SIG_SIZE
    mandatory_coinbase: bytes | None = None
    fedpegscript: bytes = OP_TRUE
    parent_genesis: bytes = BITCOIN_REGTEST_GENESIS
    parent_pegged_asset: bytes = bytes(32)
    initial_free_coins: int = 0
    initial_reissuance_tokens: int = 0
    message_start: bytes = ELEMENTS_MESSAGE_START
    dynafed_start: int = NEVER_ACTIVE_HEIGHT
    anyonecanspendaremine: bool = True
    blinded_addresses: bool = True
    default_pegged_asset_name: str = DEFAULT_PEGGED_ASSET_NAME
    ct_bits: int = DEFAULT_CT_BITS
    ct_exponent: int = DEFAULT_CT_EXPONENT
    addresses: AddressParams = ELEMENTS_REGTEST_ADDRESSES

    @property
    def genesis_options(self) -> GenesisOptions:
        """What the genesis block depends on (``ctplugin.elements.genesis``)."""
        return GenesisOptions(self.name, self.fedpegscript, self.signblockscript,
                              self.parent_genesis, self.initial_free_coins,
                              self.initial_reissuance_tokens)

    @property
    def pegged_asset(self) -> bytes:
        """The pegged asset (internal byte order): policy, fee and subsidy asset."""
        return self.genesis_options.pegged_asset


# --- parsing ---------------------------------------------------------------------------------

_ADDRESS_OPTIONS = ("pubkeyprefix", "scriptprefix", "secretprefix", "blindedprefix",
                    "bech32_hrp", "blech32_hrp", "extpubkeyprefix", "extprvkeyprefix")
_REQUIRED = {"con_elementsmode": True, "con_blockheightinheader": True,
             "con_signed_blocks": True, "con_has_parent_chain": True, "enforce_pak": False}
"""Boolean options whose other value would make another kind of chain than ours."""


def _last(values: Mapping[str, str | list[str]], option: str) -> str | None:
    # A repeated option: the last value counts (Core's command line; the node hands us the
    # values in the order it resolved them).
    value = values.get(option)
    if isinstance(value, list):
        return value[-1] if value else None
    return value


def _int(option: str, text: str, low: int, high: int) -> int:
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise ChainOptionError(option, f"{text!r} is not an integer") from None
    if not low <= value <= high:
        raise ChainOptionError(option, f"{value} is outside [{low}, {high}]")
    return value


def _bool(option: str, text: str) -> bool:
    # Core's GetBoolArg: an empty value (a bare "-option") is true, else the number's truth.
    if text.strip() == "":
        return True
    return _int(option, text, -(1 << 63), (1 << 63) - 1) != 0


def _hex(option: str, text: str) -> bytes:
    try:
        return bytes.fromhex(text.strip())
    except ValueError:
        raise ChainOptionError(option, f"{text!r} is not hex") from None


def _uint256(option: str, text: str) -> bytes:
    """uint256S: display-order hex, an optional 0x, shorter values left-padded with zeros;
    returned in internal byte order."""
    digits = text.strip()
    if digits[:2].lower() == "0x":
        digits = digits[2:]
    if not digits or len(digits) > 64:
        raise ChainOptionError(option, f"{text!r} is not a 256-bit hex value")
    return _hex(option, digits.rjust(64, "0"))[::-1]


def _addresses(values: Mapping[str, str | list[str]]) -> AddressParams:
    base = ELEMENTS_REGTEST_ADDRESSES
    given = {o: v for o in _ADDRESS_OPTIONS if (v := _last(values, o)) is not None}
    if not given:
        return base
    fields: dict[str, object] = {}
    for option in ("pubkeyprefix", "scriptprefix", "secretprefix", "blindedprefix"):
        if option in given:
            fields[option.replace("prefix", "_prefix")] = _int(option, given[option], 0, 255)
    for option in ("bech32_hrp", "blech32_hrp"):
        if option in given:
            hrp = given[option]
            if not hrp or not hrp.isascii() or hrp != hrp.lower():
                raise ChainOptionError(option, f"{hrp!r} is not a lower-case HRP")
            fields[option] = hrp
    for option in ("extpubkeyprefix", "extprvkeyprefix"):
        if option in given:
            prefix = _hex(option, given[option])
            if len(prefix) != 4:
                raise ChainOptionError(option, "takes 8 hex digits")
            fields[option.replace("keyprefix", "key_prefix")] = prefix
    try:
        return replace(base, **fields)  # type: ignore[arg-type]
    except EncodingError as exc:
        raise ChainOptionError(next(iter(given)), str(exc)) from None


def _evbparams(entries: str | list[str] | None) -> int:
    """The dynafed start height of the ``-evbparams`` entries (``dep:start:end:period:
    threshold``); only never-active dynafed and deployments that change no rule are accepted."""
    dynafed_start = NEVER_ACTIVE_HEIGHT
    for entry in [entries] if isinstance(entries, str) else entries or []:
        parts = entry.split(":")
        if len(parts) != 5:
            raise ChainOptionError("evbparams", f"{entry!r}: takes dep:start:end:period:threshold")
        name, start = parts[0], parts[1]
        for value in parts[1:]:
            if value:
                _int("evbparams", value, -(1 << 63), (1 << 63) - 1)
        if name == "dynafed":
            begin = int(start) if start else None
            if begin is None or not (begin == NEVER_ACTIVE or begin >= NEVER_ACTIVE_HEIGHT):
                raise ChainOptionError("evbparams", f"{entry!r}: dynamic federations are not "
                                       "supported; only a never-active dynafed (start "
                                       f"{NEVER_ACTIVE_HEIGHT}) is")
            dynafed_start = begin
        elif name == "taproot":
            if start and int(start) != -1:  # ALWAYS_ACTIVE, as taproot is on our chains
                raise ChainOptionError("evbparams", f"{entry!r}: taproot is always active here")
        elif name == "simplicity":
            if start and not (int(start) == NEVER_ACTIVE or int(start) >= NEVER_ACTIVE_HEIGHT):
                raise ChainOptionError("evbparams", f"{entry!r}: Simplicity is not supported")
        elif name != "testdummy":  # testdummy changes no rule
            raise ChainOptionError("evbparams", f"{entry!r}: unknown deployment {name!r}")
    return dynafed_start


def elements_chain_options(values: Mapping[str, str | list[str]]) -> ElementsChainOptions:
    """The chain options in ``values`` (keys without the dash, as ``elements.conf`` spells
    them; a list: the option given several times, the last counts, except ``evbparams``
    whose entries all count) with Elements' defaults for the rest. ``ChainOptionError`` names
    the first option whose value is malformed or cannot be honoured."""
    options: dict[str, object] = {}

    def text(option: str) -> str | None:
        return _last(values, option)

    for option, required in _REQUIRED.items():
        given = text(option)
        if given is not None and _bool(option, given) != required:
            raise ChainOptionError(option, f"only {int(required)} is supported")
    if (style := text("con_genesis_style")) is not None and style != "elements":
        raise ChainOptionError("con_genesis_style", "only the 'elements' genesis is supported")
    if (chain := text("chain")) is not None:
        if not chain or not chain.isascii():
            raise ChainOptionError("chain", f"{chain!r} is not a chain name")
        if chain in BUILTIN_CHAINS:
            raise ChainOptionError("chain", f"{chain!r} is one of elementsd's built-in chains, "
                                   "not a custom chain: we do not run it")
        options["name"] = chain
    amounts = {"con_blocksubsidy": "block_subsidy", "initialfreecoins": "initial_free_coins",
               "initialreissuancetokens": "initial_reissuance_tokens"}
    for option, name in amounts.items():
        if (given := text(option)) is not None:
            options[name] = _int(option, given, 0, MAX_MONEY if option == "con_blocksubsidy"
                                 else (1 << 63) - 1)
    heights = {"con_nsubsidyhalvinginterval": ("subsidy_halving_interval", 1),
               "con_bip34height": ("bip34_height", 0), "con_bip65height": ("bip65_height", 0),
               "con_bip66height": ("bip66_height", 0),
               "con_csv_deploy_start": ("csv_height", 0),
               "con_max_block_sig_size": ("max_block_sig_size", 0)}
    for option, (name, low) in heights.items():
        if (given := text(option)) is not None:
            options[name] = _int(option, given, low, (1 << 31) - 1)
    flags = {"con_connect_genesis_outputs": "connect_genesis_outputs",
             "anyonecanspendaremine": "anyonecanspendaremine",
             "blindedaddresses": "blinded_addresses"}
    for option, name in flags.items():
        if (given := text(option)) is not None:
            options[name] = _bool(option, given)
    for option in ("signblockscript", "fedpegscript"):
        # an empty value keeps the default OP_TRUE (StrHexToScriptWithDefault)
        if (given := text(option)) is not None and given.strip():
            options[option] = _hex(option, given)
    if (given := text("con_mandatorycoinbase")) is not None:
        script = _hex("con_mandatorycoinbase", given)
        options["mandatory_coinbase"] = script or None  # blank: any destination
    if (given := text("parentgenesisblockhash")) is not None:
        parent = _uint256("parentgenesisblockhash", given)
        if parent == bytes(32):
            raise ChainOptionError("parentgenesisblockhash",
                                   "a null parent means no parent chain, which we do not run")
        options["parent_genesis"] = parent
    if (given := text("con_parent_pegged_asset")) is not None:
        options["parent_pegged_asset"] = _uint256("con_parent_pegged_asset", given)
    if (given := text("pchmessagestart")) is not None:
        magic = _hex("pchmessagestart", given)
        if len(magic) != 4:
            raise ChainOptionError("pchmessagestart", "takes 8 hex digits")
        options["message_start"] = magic
    options["dynafed_start"] = _evbparams(values.get("evbparams"))
    if (given := text("defaultpeggedassetname")) is not None:
        if not given:
            raise ChainOptionError("defaultpeggedassetname", "the label may not be empty")
        options["default_pegged_asset_name"] = given
    if (given := text("ct_bits")) is not None:
        options["ct_bits"] = _int("ct_bits", given, 1, 64)
    if (given := text("ct_exponent")) is not None:
        options["ct_exponent"] = _int("ct_exponent", given, -1, 18)
    if (given := text("validatepegin")) is not None and _bool("validatepegin", given):
        raise ChainOptionError("validatepegin", "peg-ins are not supported, so there is no "
                               "parent chain to validate them against; set -validatepegin=0")
    options["addresses"] = _addresses(values)
    made = ElementsChainOptions(**options)  # type: ignore[arg-type]
    for option in ("subsidyasset", "feeasset"):
        if (given := text(option)) is not None \
                and _uint256(option, given) != made.pegged_asset:
            raise ChainOptionError(option, "only the pegged asset is supported")
    try:
        made.genesis_options  # noqa: B018 - checks the amounts and scripts it takes
    except EncodingError as exc:
        raise ChainOptionError("initialfreecoins", str(exc)) from None
    return made


DEFAULT_OPTIONS = ElementsChainOptions()


def option_values(words: Sequence[str]) -> dict[str, str | list[str]]:
    """Command-line words ``[-]NAME=VALUE`` (``-NAME`` alone: an empty value, true for a
    boolean; ``-noNAME``: 0, as Core's ArgsManager reads them) → the mapping
    ``elements_chain_options`` takes; a repeated name keeps every value in order."""
    values: dict[str, str | list[str]] = {}
    for word in words:
        name, eq, value = word.lstrip("-").partition("=")
        if not name:
            raise ChainOptionError(word, "is not an option")
        if not eq and name.startswith("no"):
            name, value = name[2:], "0"
        previous = values.get(name)
        if previous is None:
            values[name] = value
        else:
            values[name] = [*([previous] if isinstance(previous, str) else previous), value]
    return values


def elements_chain(options: ElementsChainOptions = DEFAULT_OPTIONS) -> ChainParams:
    """The chain ``options`` describe (one value per option set: asking twice gives the same
    object). ``ChainOptionError`` for a block challenge other than ``OP_TRUE``."""
    if options.signblockscript != OP_TRUE:
        raise ChainOptionError("signblockscript", "only OP_TRUE (51) is supported: blocks "
                               "signed by a federation need the signblock RPCs")
    return _elements_chain(options)


@cache
def _elements_chain(options: ElementsChainOptions) -> ChainParams:
    genesis = options.genesis_options
    return ChainParams(
        name=options.name, genesis=genesis_block(genesis), policy_asset=genesis.pegged_asset,
        block_challenge=options.signblockscript, coinbase_maturity=DEFAULT_COINBASE_MATURITY,
        range_proofs=ELEMENTS_RANGE_PROOFS, network_magic=options.message_start,
        block_subsidy=options.block_subsidy,
        subsidy_halving_interval=options.subsidy_halving_interval,
        connect_genesis_outputs=options.connect_genesis_outputs,
        bip34_height=options.bip34_height, bip65_height=options.bip65_height,
        bip66_height=options.bip66_height, csv_height=options.csv_height,
        # SIGHASH_RANGEPROOF comes with dynafed, never active here
        sighash_rangeproof=False,
        mandatory_coinbase=options.mandatory_coinbase,
        max_block_sig_size=options.max_block_sig_size,
        ct_bits=options.ct_bits, ct_exponent=options.ct_exponent,
        addresses=options.addresses)


CHAIN_OPTION_HELP = ("elementsd's chain option for --chain elementsregtest, e.g. "
                     "initialfreecoins=2100000000000000 or con_blocksubsidy=5000000000 "
                     "(repeatable; docs/elements-regtest.md §1.1)")


def chain_from_words(name: str, words: Sequence[str] = ()) -> ChainParams:
    """The chain a command line selects: ``--chain NAME`` and its ``--chain-option`` words
    (``option_values``); without words, ``select_chain(name)``. ``ChainOptionError`` /
    ``UnknownChainError`` say what is wrong."""
    if not words:
        return select_chain(name)
    values = option_values(words)
    values.setdefault("chain", name)
    return select_chain(name, elements_chain_options(values))
