"""Our chains, registered by name (docs/design.md "Chain parameters of our regtest chain").

``select_chain(name)`` gives a chain's ``ChainParams`` (genesis included), as Bitcoin Core's
``-chain=NAME`` selects a ``CChainParams`` (``src/chainparams.cpp``); ``CHAIN_NAMES`` lists
them, ``DEFAULT_CHAIN`` is the one every command line uses unless told otherwise:

- ``ctregtest``: our Bulletproof chain, the default;
- ``ctregtest-borromean``: the same chain (same genesis, asset, challenge, magic) taking the
  Borromean range proofs Elements' wallet makes instead of Bulletproofs;
- ``elementsregtest``: elementsd's ``-chain=elementsregtest`` with Elements' default chain options
  (``regtest.elements``: ``elements_chain(options)`` builds it for other option values).

The two ctregtest chains share these values:

- Serialization: Elements consensus format. Headers: Elements signed-block header with height;
  challenge ``OP_TRUE`` (0x51) and an empty solution.
- Policy asset (fees, initial free coins): ``POLICY_ASSET`` = tagged_hash("ctplugin/regtest",
  "policy asset"), an arbitrary NUMS id (internal byte order).
- The regtest key: key 0 of the wallet seed ``REGTEST_SEED`` = SHA256("ctplugin regtest seed"),
  published on purpose (regtest only), so ``Wallet(REGTEST_SEED)`` owns the initial free coins.
  Genesis pays ``INITIAL_FREE_COINS`` (explicit policy asset, explicit value) to its P2WPKH script.
  Genesis outputs are spendable at once (not coinbase outputs for maturity); block coinbases
  mature after ``COINBASE_MATURITY`` blocks.
- Block subsidy is 0 (as on Liquid): a coinbase may claim at most the block's fees, per asset.
- Chain file: Bitcoin ``blk*.dat`` framing, ``NETWORK_MAGIC`` ‖ LE32 length ‖ block, per block.

Two chains with one genesis are told apart by name: a node's data directory records the name of
the chain it was made for and refuses another (``validator.node``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from ctplugin.elements import Block, BlockHeader, Transaction, TxIn, TxOut
from ctplugin.elements.chainparams import (
    ELEMENTS_REGTEST_ADDRESSES,
    ChainOptionError,
    ChainParams,
    RangeProofKind,
    UnknownChainError,
)
from ctplugin.elements.consensus import DEFAULT_COINBASE_MATURITY, MAX_MONEY
from ctplugin.hashes import sha256, tagged_hash

if TYPE_CHECKING:
    from regtest.elements import ElementsChainOptions
    from regtest.wallet.keys import KeyPair

INITIAL_FREE_COINS = MAX_MONEY
COINBASE_MATURITY = DEFAULT_COINBASE_MATURITY
BLOCK_CHALLENGE = b"\x51"  # OP_TRUE: any (empty) solution satisfies it
BLOCK_VERSION = 0x2000_0000
GENESIS_TIME = 1_700_000_000
# Our chain files' and blocks/ directories' record magic: Bitcoin regtest's (and liquidv1's)
# message start. elementsregtest's own is 5319f20e (docs/replay.md §1): replay's BlocksDirSource
# takes the magic as a parameter (this by default) for directories of other chains.
NETWORK_MAGIC = bytes.fromhex("fabfb5da")
SUBSIDY_HALVING_INTERVAL = 150  # Bitcoin regtest's, which Elements' custom chains keep
MAX_BLOCK_SIG_SIZE = 74  # Elements' -con_max_block_sig_size default
DEFAULT_CT_BITS = 52  # Elements' wallet -ct_bits / -ct_exponent defaults (docs/borromean.md §3)
DEFAULT_CT_EXPONENT = 0

POLICY_ASSET = tagged_hash("ctplugin/regtest", b"policy asset")
REGTEST_SEED = sha256(b"ctplugin regtest seed")


@cache
def regtest_key() -> KeyPair:
    """Key 0 of ``REGTEST_SEED``: owner of the initial free coins."""
    from regtest.wallet.keys import KeyChain  # the wallet package imports this module

    return KeyChain(REGTEST_SEED).key(0)


GENESIS_SCRIPT_SIG = b"\x14ctplugin regtest 2026"  # 21 bytes: within bad-cb-length's 2..100


@cache
def _genesis_block() -> Block:
    """The genesis block: one coinbase paying the initial free coins to the regtest key."""
    coinbase = Transaction(
        version=2,
        inputs=(TxIn(prevout_hash=bytes(32), prevout_index=0xFFFF_FFFF,
                     script_sig=GENESIS_SCRIPT_SIG),),
        outputs=(TxOut(asset=POLICY_ASSET, value=INITIAL_FREE_COINS,
                       script_pubkey=regtest_key().script_pubkey),),
    )
    merkle = coinbase.txid  # a one-transaction tree's root is its txid
    header = BlockHeader(version=BLOCK_VERSION, prev_hash=bytes(32), merkle_root=merkle,
                         time=GENESIS_TIME, height=0, challenge=BLOCK_CHALLENGE, solution=b"")
    return Block(header=header, transactions=(coinbase,))


def _ctregtest(name: str, range_proofs: RangeProofKind) -> ChainParams:
    # Our chains' rules since they began: no subsidy, the genesis coins spendable at once, every
    # buried deployment from block 1, SIGHASH_RANGEPROOF on, any coinbase script.
    return ChainParams(name=name, genesis=_genesis_block(), policy_asset=POLICY_ASSET,
                       block_challenge=BLOCK_CHALLENGE, coinbase_maturity=COINBASE_MATURITY,
                       range_proofs=frozenset({range_proofs}), network_magic=NETWORK_MAGIC,
                       block_subsidy=0, subsidy_halving_interval=SUBSIDY_HALVING_INTERVAL,
                       connect_genesis_outputs=True, bip34_height=1, bip65_height=1,
                       bip66_height=1, csv_height=1, sighash_rangeproof=True,
                       mandatory_coinbase=None, max_block_sig_size=MAX_BLOCK_SIG_SIZE,
                       ct_bits=DEFAULT_CT_BITS, ct_exponent=DEFAULT_CT_EXPONENT,
                       addresses=ELEMENTS_REGTEST_ADDRESSES)


def _elementsregtest() -> ChainParams:
    from regtest.elements import elements_chain  # builds on this module's constants

    return elements_chain()


CTREGTEST = "ctregtest"
CTREGTEST_BORROMEAN = "ctregtest-borromean"
ELEMENTSREGTEST = "elementsregtest"
DEFAULT_CHAIN = CTREGTEST

# Built on first selection (the genesis needs the regtest key: an EC multiplication), so importing
# this module computes nothing.
_PROFILES: dict[str, Callable[[], ChainParams]] = {
    CTREGTEST: cache(lambda: _ctregtest(CTREGTEST, RangeProofKind.BULLETPROOF)),
    CTREGTEST_BORROMEAN: cache(lambda: _ctregtest(CTREGTEST_BORROMEAN,
                                                  RangeProofKind.BORROMEAN)),
    ELEMENTSREGTEST: cache(_elementsregtest),
}
CHAIN_NAMES: tuple[str, ...] = tuple(_PROFILES)
"""Every chain ``select_chain`` knows, the default first."""


def select_chain(name: str, options: ElementsChainOptions | None = None) -> ChainParams:
    """The chain called ``name`` (one value per name and options: selecting twice gives the
    same object). ``options``: elementsd's chain options of ``elementsregtest``
    (``regtest.elements.elements_chain_options``; None: Elements' defaults); our ctregtest
    chains take none (``ChainOptionError``). ``UnknownChainError`` names the chains there are."""
    if not isinstance(name, str) or name not in _PROFILES:
        raise UnknownChainError(f"unknown chain {name!r}; known chains: {', '.join(CHAIN_NAMES)}")
    if options is not None:
        from regtest.elements import elements_chain

        if name != ELEMENTSREGTEST or options.name != name:
            raise ChainOptionError("chain", f"elementsd's chain options make the chain "
                                   f"{options.name!r}; {name!r} takes none")
        return elements_chain(options)
    return _PROFILES[name]()
