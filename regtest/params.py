"""Parameters of our regtest chain (design.md "Chain parameters of our regtest chain").

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
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from ctplugin.elements import Block, BlockHeader, Transaction, TxIn, TxOut
from ctplugin.elements.chainparams import RANGE_PROOF_BULLETPROOF, ChainParams
from ctplugin.elements.consensus import DEFAULT_COINBASE_MATURITY, MAX_MONEY
from ctplugin.hashes import sha256, tagged_hash

if TYPE_CHECKING:
    from regtest.wallet.keys import KeyPair

INITIAL_FREE_COINS = MAX_MONEY
COINBASE_MATURITY = DEFAULT_COINBASE_MATURITY
BLOCK_CHALLENGE = b"\x51"  # OP_TRUE: any (empty) solution satisfies it
BLOCK_VERSION = 0x2000_0000
GENESIS_TIME = 1_700_000_000
# Our chain files' and blocks/ directories' record magic: Bitcoin regtest's (and liquidv1's)
# message start. elementsregtest's own is 5319f20e (replay.md §1): replay's BlocksDirSource takes
# the magic as a parameter (this by default) for directories of other chains.
NETWORK_MAGIC = bytes.fromhex("fabfb5da")

POLICY_ASSET = tagged_hash("ctplugin/regtest", b"policy asset")
REGTEST_SEED = sha256(b"ctplugin regtest seed")


@cache
def regtest_key() -> KeyPair:
    """Key 0 of ``REGTEST_SEED``: owner of the initial free coins."""
    from regtest.wallet.keys import KeyChain  # the wallet package imports this module

    return KeyChain(REGTEST_SEED).key(0)
GENESIS_SCRIPT_SIG = b"\x14ctplugin regtest 2026"  # 21 bytes: within bad-cb-length's 2..100


@cache
def genesis_block() -> Block:
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



def chain_params(range_proofs: str = RANGE_PROOF_BULLETPROOF) -> ChainParams:
    """What the validator needs to know about our regtest chain. Two profiles (design.md): the
    default takes Bulletproofs only; ``RANGE_PROOF_BORROMEAN`` takes the Borromean proofs
    Elements' wallet makes (the wallet's ``range_proofs`` option), everything else alike."""
    return ChainParams(policy_asset=POLICY_ASSET, block_challenge=BLOCK_CHALLENGE,
                       coinbase_maturity=COINBASE_MATURITY,
                       range_proofs=frozenset({range_proofs}), genesis_hash=genesis_block().hash,
                       network_magic=NETWORK_MAGIC)
