"""Regtest block builder: blocks of confidential transactions made by the wallet, in memory
(``ctplugin chain``, ``apps.chain``, writes them to a chain file and/or a Core-style ``blocks/``
directory).

Blocks follow the chain's rules (``ChainParams``) and carry the coinbase Elements' miner builds
(``src/node/miner.cpp`` CreateNewBlock; docs/elements-regtest.md §3.1): scriptSig = the BIP34
height push then OP_0; the data commitments (``getnewblockhex``'s ``commit_data``) first; then
one payout of the policy asset, explicit, worth the block's policy-asset fees plus the chain's
subsidy, to the miner's script — to ``OP_RETURN`` when that value is 0 (fees in other assets are
not claimed, as in Elements); last the witness commitment (explicit 0 of the policy asset,
OP_RETURN aa21a9ed ‖ sha256d(witness root ‖ 32 zero bytes), witness root = fast Merkle root of
every transaction's withash, coinbase included) whose reserved value is the coinbase input's
single script-witness item.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctplugin.elements import Block, BlockHeader, Transaction, TxIn, TxOut, _speedups
from ctplugin.elements.chainparams import ChainOptionError, ChainParams
from ctplugin.elements.consensus import COIN, MAX_BLOCK_WEIGHT
from ctplugin.elements.genesis import OP_TRUE
from ctplugin.elements.issuance import input_issuance_ids
from ctplugin.elements.script import script_num, witness_commitment_script
from ctplugin.hashes import fast_merkle_root, sha256d
from regtest.params import (
    BLOCK_VERSION,
    DEFAULT_CHAIN,
    GENESIS_TIME,
    POLICY_ASSET,
    REGTEST_SEED,
    select_chain,
)
from regtest.wallet import Issuance, Payment, Reissuance, Wallet

BLOCK_INTERVAL = 60
WITNESS_RESERVED = bytes(32)
OP_RETURN = b"\x6a"

Progress = Callable[[int, int], None]
"""Called after each mined block with (blocks mined, blocks to mine)."""


def coinbase_transaction(height: int, payout: int, miner_script: bytes,
                         others: Sequence[Transaction],
                         commitments: Sequence[TxOut] = (),
                         policy_asset: bytes = POLICY_ASSET) -> Transaction:
    """The coinbase of a block at ``height`` holding ``others`` (module docstring): the
    ``commitments`` outputs, then ``payout`` satoshis of ``policy_asset`` (the chain's) to
    ``miner_script`` (``OP_RETURN`` when ``payout`` is 0: a 0-value output must be
    unspendable), then the commitment to every transaction's witness data."""
    script_sig = script_num(height) + b"\x00"  # CScript() << nHeight << OP_0
    txin = TxIn(prevout_hash=bytes(32), prevout_index=0xFFFF_FFFF, script_sig=script_sig,
                script_witness=(WITNESS_RESERVED,))
    outputs = [*commitments, TxOut(asset=policy_asset, value=payout,
                                   script_pubkey=miner_script if payout else OP_RETURN)]
    # The coinbase's withash covers only its witness (the reserved value), never its outputs.
    draft = Transaction(version=2, inputs=(txin,),
                        outputs=(*outputs, _commitment_out(bytes(32), policy_asset)))
    root = fast_merkle_root([draft.withash, *(tx.withash for tx in others)])
    commitment = sha256d(root + WITNESS_RESERVED)
    return Transaction(version=2, inputs=(txin,),
                       outputs=(*outputs, _commitment_out(commitment, policy_asset)))


def _commitment_out(commitment: bytes, asset: bytes) -> TxOut:
    return TxOut(asset=asset, value=0, script_pubkey=witness_commitment_script(commitment))


def make_block(prev_hash: bytes, height: int, time: int, txs: Sequence[Transaction],
               miner_script: bytes, commitments: Sequence[TxOut] = (),
               fees: dict[bytes, int] | None = None,
               params: ChainParams | None = None) -> Block:
    """A block of ``txs`` on ``prev_hash`` of the chain ``params`` (default ``DEFAULT_CHAIN``)
    whose coinbase (module docstring) pays their policy-asset fees (from ``fees`` per asset
    when the caller already knows them, e.g. from mempool entries) and the block subsidy to
    ``miner_script``, after the ``commitments`` outputs; the header carries the chain's
    challenge."""
    params = params or select_chain(DEFAULT_CHAIN)
    policy = params.policy_asset
    fee = (sum(tx.fees().get(policy, 0) for tx in txs) if fees is None
           else fees.get(policy, 0))
    coinbase = coinbase_transaction(height, fee + params.block_subsidy_at(height), miner_script,
                                    txs, commitments, policy)
    all_txs = (coinbase, *txs)
    root, _ = _speedups.merkle_root(b"".join(tx.txid for tx in all_txs))
    header = BlockHeader(version=BLOCK_VERSION, prev_hash=prev_hash, merkle_root=root, time=time,
                         height=height, challenge=params.block_challenge, solution=b"")
    return Block(header=header, transactions=all_txs)


def genesis_claim(params: ChainParams, script_pubkey: bytes, fee: int) -> Transaction | None:
    """A transaction moving the chain's anyone-can-spend genesis coins of its policy asset
    (Elements' ``-initialfreecoins``: ``OP_TRUE`` outputs, spent with an empty scriptSig and
    witness) to ``script_pubkey``, explicit, less ``fee``; None if the genesis has none in the
    UTXO set (none issued, or ``connect_genesis_outputs`` off)."""
    if not params.connect_genesis_outputs:
        return None
    coins = [(tx.txid, n, out.value) for tx in params.genesis.transactions
             for n, out in enumerate(tx.outputs)
             if out.script_pubkey == OP_TRUE and out.asset == params.policy_asset
             and isinstance(out.value, int) and out.value > fee]
    if not coins:
        return None
    total = sum(value for _, _, value in coins)
    return Transaction(
        version=2,
        inputs=tuple(TxIn(prevout_hash=txid, prevout_index=n) for txid, n, _ in coins),
        outputs=(TxOut(asset=params.policy_asset, value=total - fee, script_pubkey=script_pubkey),
                 TxOut(asset=params.policy_asset, value=fee)))


class ChainBuilder:
    """Mines blocks of wallet transactions on top of a chain's genesis (all in memory).
    ``params``: one of our chains (``regtest.params.select_chain``), the default one if not
    given; the wallets must make that chain's range proofs."""

    def __init__(self, wallets: Sequence[Wallet], miner_script: bytes | None = None,
                 params: ChainParams | None = None) -> None:
        self.wallets = list(wallets)
        self.params = params or select_chain(DEFAULT_CHAIN)
        self.genesis = self.params.genesis
        for w in self.wallets:
            w.scan_block(self.genesis)
        self.miner_script = miner_script or self.wallets[0].new_address().script_pubkey
        self.blocks: list[Block] = [self.genesis]
        self.pending: list[Transaction] = []

    @property
    def tip(self) -> Block:
        return self.blocks[-1]

    @property
    def next_height(self) -> int:
        return self.tip.header.height + 1

    def add(self, tx: Transaction) -> Transaction:
        """Queue a transaction for the next block; every wallet learns its outputs now."""
        for w in self.wallets:
            w.scan_transaction(tx, None)
        self.pending.append(tx)
        return tx

    def mine(self) -> Block:
        height = self.next_height
        block = make_block(self.tip.hash, height, GENESIS_TIME + BLOCK_INTERVAL * height,
                           self.pending, self.miner_script, params=self.params)
        self.pending = []
        for w in self.wallets:
            w.scan_block(block)
        self.blocks.append(block)
        return block


def build_demo_chain(n_blocks: int = 6, txs_per_block: int = 4,
                     seed: bytes = b"ctplugin demo wallet seed",
                     progress: Progress | None = None,
                     params: ChainParams | None = None) -> ChainBuilder:
    """A reproducible chain: the regtest-key wallet funds a second wallet (on an Elements
    genesis, after claiming its anyone-can-spend free coins in block 1), both pay each other
    with two blinded outputs per transaction, one block issues an asset and a later one
    reissues it. ``params``: which of our chains (default ``DEFAULT_CHAIN``); its wallets
    make the chain's range proofs (``ChainParams.wallet_range_proof``)."""
    params = params or select_chain(DEFAULT_CHAIN)
    alice = Wallet.for_chain(REGTEST_SEED, params)
    bob = Wallet.for_chain(seed, params)
    chain = ChainBuilder([alice, bob], params=params)
    fee = 1000
    policy = params.policy_asset
    if not alice.coins:
        # An Elements genesis: its free coins are anyone's; block 1 claims them first.
        claim = genesis_claim(params, alice.new_address(kind="p2wpkh").script_pubkey, fee)
        if claim is None:
            raise ChainOptionError("initialfreecoins", f"chain {params.name} has no genesis "
                                   "coins to spend (give -initialfreecoins and keep "
                                   "-con_connect_genesis_outputs=1)")
        chain.add(claim)
    for _ in range(txs_per_block):
        chain.add(alice.build_transaction([Payment(10 * COIN, bob.new_address(), asset=policy)],
                                          fee=fee, height=chain.next_height))
    chain.mine()
    if progress is not None:
        progress(1, n_blocks)
    asset = None
    for b in range(1, n_blocks):
        height = chain.next_height
        for t in range(txs_per_block):
            payer, payee = (bob, alice) if (b + t) % 2 else (alice, bob)
            amount = (1 + (b * 7 + t * 3) % 5) * COIN // 10
            chain.add(payer.build_transaction([Payment(amount, payee.new_address(), asset=policy)],
                                              fee=fee, height=height))
        if b == 2:
            tx = alice.build_transaction([], fee=fee, height=height,
                                         issuance=Issuance(amount=1_000_000, tokens=10))
            chain.add(tx)
            ids = input_issuance_ids(tx.inputs[0])
            assert ids is not None
            asset = ids.asset
            bob.add_known_asset(asset)
        elif b == 3 and asset is not None:
            chain.add(alice.build_transaction([Payment(400_000, bob.new_address(), asset=asset)],
                                              fee=fee, height=height))
        elif b == 4 and asset is not None:
            chain.add(alice.build_transaction([], fee=fee, height=height,
                                              reissuance=Reissuance(asset, 500_000)))
        chain.mine()
        if progress is not None:
            progress(b + 1, n_blocks)
    return chain


TRANSFER_TX_WEIGHT = 3316
"""The weight of every transaction of ``build_transfer_chain`` (fixed-size proofs, signatures
and scripts; a test checks it)."""
MAX_TRANSFER_TXS = (MAX_BLOCK_WEIGHT - 4000) // TRANSFER_TX_WEIGHT
"""The most transfer transactions a block holds (4000 weight units left for the header and the
coinbase)."""


def build_transfer_chain(n_blocks: int, txs_per_block: int,
                         progress: Progress | None = None, ramp: bool = False) -> ChainBuilder:
    """The replay benchmark's shape: block 1 fans the regtest coins out into
    2 × ``txs_per_block`` explicit coins; each of the next ``n_blocks`` blocks holds
    ``txs_per_block`` transactions, each spending its lane's two coins of the previous block
    into two blinded outputs (Bulletproof + two-input surjection proof each) and a fee.
    ``ramp``: block k of n uses only the first ⌈k·txs_per_block/n⌉ lanes (sizes from small to
    full, so a replay plot shows time against proofs per block)."""
    alice = Wallet(REGTEST_SEED)
    chain = ChainBuilder([alice], miner_script=alice.new_address().script_pubkey)
    fanout = [Payment(COIN, script_pubkey=alice.new_address().script_pubkey)
              for _ in range(2 * txs_per_block)]
    chain.add(alice.build_transaction(fanout, fee=10_000, height=1, blind_change=False))
    chain.mine()
    funding = chain.blocks[1].transactions[1]
    lanes = [[alice.coins[(funding.txid, 2 * i)], alice.coins[(funding.txid, 2 * i + 1)]]
             for i in range(txs_per_block)]
    if progress is not None:
        progress(1, n_blocks + 1)
    for b in range(n_blocks):
        height = chain.next_height
        active = -(-(b + 1) * txs_per_block // n_blocks) if ramp else txs_per_block
        for lane in lanes[:active]:
            total = sum(coin.value for coin in lane)
            tx = chain.add(alice.build_transaction(
                [Payment(total // 3, alice.new_address())], fee=1000, height=height,
                inputs=lane))
            lane[:] = [alice.coins[(tx.txid, 0)], alice.coins[(tx.txid, 1)]]
        chain.mine()
        if progress is not None:
            progress(b + 2, n_blocks + 1)
    return chain
