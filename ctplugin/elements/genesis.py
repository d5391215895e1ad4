"""Elements' genesis block, built from a chain's options as elementsd builds it
(docs/elements-regtest.md §2; Elements ``src/kernel/chainparams.cpp`` ``CommitToArguments``,
``CreateGenesisBlock``, ``SetGenesisBlock``, and ``src/issuance.cpp`` ``AppendInitialIssuance``).

The chain's name and its two scripts are committed to::

    commit = SHA256(name ‖ hex(fedpeg_script) ‖ hex(signblock_script))     (ASCII, lower-case hex)

and that commitment is used twice:

- the genesis coinbase's scriptSig is the single push ``<commit>``, with one explicit, zero-value
  OP_RETURN output of the all-zero asset;
- the pegged (policy) asset is issued "from" the outpoint ``(commit, 0)`` with the parent
  chain's genesis hash as the contract hash (``pegged_asset``):
  ``entropy = FMR(sha256d(commit ‖ LE32(0)), parent_genesis)``, ``asset = FMR(entropy, 0³²)``.

With initial free coins or reissuance tokens, a second transaction issues them to ``OP_TRUE``
outputs. The genesis block is never validated; its hash is what binds a chain's options: the
same code gives liquidv1's hash that Elements asserts and elementsregtest's for every option set.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ctplugin.elements.issuance import issuance_asset_id, issuance_entropy, reissuance_token_id
from ctplugin.elements.model import AssetIssuance, Block, BlockHeader, Transaction, TxIn, TxOut
from ctplugin.errors import EncodingError

OP_TRUE = b"\x51"
OP_RETURN = b"\x6a"
GENESIS_TIME = 1_296_688_602  # every "elements"-style genesis (chainparams.cpp)
GENESIS_VERSION = 1
BITCOIN_REGTEST_GENESIS = bytes.fromhex(
    "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206")[::-1]
"""Bitcoin regtest's genesis hash (internal byte order): a custom chain's default parent."""
BITCOIN_MAINNET_GENESIS = bytes.fromhex(
    "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f")[::-1]
"""Bitcoin's genesis hash (internal byte order): liquidv1's parent chain."""


def chain_commitment(name: str, fedpeg_script: bytes, signblock_script: bytes) -> bytes:
    """``CommitToArguments``: SHA256 over the chain name and the lower-case hex of both scripts."""
    if not isinstance(name, str) or not name.isascii():
        raise EncodingError("the chain name must be an ASCII string", reason="type")
    text = name + fedpeg_script.hex() + signblock_script.hex()
    return hashlib.sha256(text.encode("ascii")).digest()


@dataclass(frozen=True, slots=True)
class GenesisOptions:
    """The chain options the genesis block depends on (elementsd's names in parentheses).

    - ``name``: the chain name (``-chain``), e.g. ``elementsregtest``;
    - ``fedpeg_script`` (``-fedpegscript``) and ``signblock_script`` (``-signblockscript``);
    - ``parent_genesis`` (``-parentgenesisblockhash``, internal byte order): the pegged asset's
      contract hash;
    - ``initial_free_coins`` (``-initialfreecoins``) and ``initial_reissuance_tokens``
      (``-initialreissuancetokens``), in satoshis.
    """

    name: str
    fedpeg_script: bytes = OP_TRUE
    signblock_script: bytes = OP_TRUE
    parent_genesis: bytes = BITCOIN_REGTEST_GENESIS
    initial_free_coins: int = 0
    initial_reissuance_tokens: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.parent_genesis, bytes) or len(self.parent_genesis) != 32:
            raise EncodingError("parent_genesis must be 32 bytes", reason="length")
        for what in ("initial_free_coins", "initial_reissuance_tokens"):
            value = getattr(self, what)
            if not isinstance(value, int) or not 0 <= value < 1 << 63:
                raise EncodingError(f"{what} must be a satoshi amount", reason="value-range")

    @property
    def commitment(self) -> bytes:
        return chain_commitment(self.name, self.fedpeg_script, self.signblock_script)

    @property
    def pegged_asset_entropy(self) -> bytes:
        return issuance_entropy(self.commitment, 0, self.parent_genesis)

    @property
    def pegged_asset(self) -> bytes:
        """The chain's pegged asset id (internal byte order): its default policy asset."""
        return issuance_asset_id(self.pegged_asset_entropy)

    @property
    def pegged_asset_token(self) -> bytes:
        """The pegged asset's reissuance token (the genesis issuance is explicit)."""
        return reissuance_token_id(self.pegged_asset_entropy, amount_is_blinded=False)


def genesis_block(options: GenesisOptions) -> Block:
    """The "elements"-style genesis block of a chain with ``options``."""
    commit = options.commitment
    coinbase = Transaction(
        version=1,
        inputs=(TxIn(prevout_hash=bytes(32), prevout_index=0xFFFF_FFFF,
                     script_sig=bytes([len(commit)]) + commit),),
        outputs=(TxOut(asset=bytes(32), value=0, script_pubkey=OP_RETURN),),
    )
    transactions = [coinbase]
    coins, tokens = options.initial_free_coins, options.initial_reissuance_tokens
    if coins or tokens:
        # A zero count is still written as an explicit 0, never as a null value.
        issuance = AssetIssuance(asset_blinding_nonce=bytes(32),
                                 asset_entropy=options.parent_genesis,
                                 amount=coins, inflation_keys=tokens)
        outputs = []
        if coins:
            outputs.append(TxOut(asset=options.pegged_asset, value=coins, script_pubkey=OP_TRUE))
        if tokens:
            outputs.append(TxOut(asset=options.pegged_asset_token, value=tokens,
                                 script_pubkey=OP_TRUE))
        transactions.append(Transaction(
            version=1,
            inputs=(TxIn(prevout_hash=commit, prevout_index=0, issuance=issuance),),
            outputs=tuple(outputs)))
    unrooted = Block(header=_header(bytes(32), options.signblock_script),
                     transactions=tuple(transactions))
    merkle_root, _ = unrooted.compute_merkle_root()
    return Block(header=_header(merkle_root, options.signblock_script),
                 transactions=tuple(transactions))


def _header(merkle_root: bytes, challenge: bytes) -> BlockHeader:
    # nBits 0x207fffff and nNonce 2 exist only in memory: signed-block headers do not carry them.
    return BlockHeader(version=GENESIS_VERSION, prev_hash=bytes(32), merkle_root=merkle_root,
                       time=GENESIS_TIME, height=0, challenge=challenge, solution=b"")
