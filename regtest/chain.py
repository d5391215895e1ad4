"""Regtest chain builder: blocks of confidential transactions made by the wallet, written to a
chain file and/or a Core-style ``blocks/`` directory
(``ctplugin chain --blocks N --txs M --out FILE [--blocks-dir DIR --xor-key HEX --shuffle S]``).

Blocks follow our chain's rules (``regtest.params``): coinbase with the BIP34 height push,
claiming exactly the block's fees per asset for the miner, and the witness commitment
(OP_RETURN aa21a9ed ‖ sha256d(witness root ‖ 32 zero bytes), witness root = fast Merkle root of
every transaction's withash, coinbase included) whose reserved value is the coinbase input's
single script-witness item. Chain files use Bitcoin's blk*.dat framing:
``NETWORK_MAGIC ‖ LE32 length ‖ block`` per block, genesis first.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ctplugin.elements import Block, BlockHeader, Transaction, TxIn, TxOut, _speedups
from ctplugin.elements.chainparams import ChainParams
from ctplugin.elements.consensus import COIN, MAX_BLOCK_WEIGHT
from ctplugin.elements.issuance import input_issuance_ids
from ctplugin.elements.script import script_num, witness_commitment_script
from ctplugin.errors import ParseError
from ctplugin.hashes import fast_merkle_root, sha256d
from regtest.blocksdir import XOR_KEY_SIZE, arrival_order, write_blocks_dir
from regtest.params import (
    BLOCK_CHALLENGE,
    BLOCK_VERSION,
    CHAIN_NAMES,
    DEFAULT_CHAIN,
    GENESIS_TIME,
    NETWORK_MAGIC,
    POLICY_ASSET,
    REGTEST_SEED,
    select_chain,
)
from regtest.wallet import Issuance, Payment, Reissuance, Wallet

BLOCK_INTERVAL = 60
WITNESS_RESERVED = bytes(32)

Progress = Callable[[int, int], None]
"""Called after each mined block with (blocks mined, blocks to mine)."""


def coinbase_transaction(height: int, fees: dict[bytes, int], miner_script: bytes,
                         others: Sequence[Transaction],
                         extra_outputs: Sequence[TxOut] = ()) -> Transaction:
    """The coinbase of a block at ``height`` holding ``others``: pays ``fees`` to the miner
    (then ``extra_outputs``, e.g. OP_RETURN commitments) and commits to every transaction's
    witness data."""
    script_sig = script_num(height)
    if len(script_sig) < 2:
        script_sig += b"\x00"  # bad-cb-length wants 2..100 bytes
    txin = TxIn(prevout_hash=bytes(32), prevout_index=0xFFFF_FFFF, script_sig=script_sig,
                script_witness=(WITNESS_RESERVED,))
    outputs = [TxOut(asset=asset, value=amount, script_pubkey=miner_script)
               for asset, amount in sorted(fees.items())]
    outputs += extra_outputs
    # The coinbase's withash covers only its witness (the reserved value), never its outputs.
    draft = Transaction(version=2, inputs=(txin,), outputs=(*outputs, _commitment_out(bytes(32))))
    root = fast_merkle_root([draft.withash, *(tx.withash for tx in others)])
    commitment = sha256d(root + WITNESS_RESERVED)
    return Transaction(version=2, inputs=(txin,), outputs=(*outputs, _commitment_out(commitment)))


def _commitment_out(commitment: bytes) -> TxOut:
    return TxOut(asset=POLICY_ASSET, value=0, script_pubkey=witness_commitment_script(commitment))


def make_block(prev_hash: bytes, height: int, time: int, txs: Sequence[Transaction],
               miner_script: bytes, extra_outputs: Sequence[TxOut] = (),
               fees: dict[bytes, int] | None = None) -> Block:
    """A block of ``txs`` on ``prev_hash`` whose coinbase pays their fees (``fees`` per asset
    when the caller already knows them, e.g. from mempool entries) to ``miner_script``."""
    if fees is None:
        fees = {}
        for tx in txs:
            for asset, amount in tx.fees().items():
                fees[asset] = fees.get(asset, 0) + amount
    coinbase = coinbase_transaction(height, fees, miner_script, txs, extra_outputs)
    all_txs = (coinbase, *txs)
    root, _ = _speedups.merkle_root(b"".join(tx.txid for tx in all_txs))
    header = BlockHeader(version=BLOCK_VERSION, prev_hash=prev_hash, merkle_root=root, time=time,
                         height=height, challenge=BLOCK_CHALLENGE, solution=b"")
    return Block(header=header, transactions=all_txs)


class ChainBuilder:
    """Mines blocks of wallet transactions on top of a chain's genesis (all in memory).
    ``params``: one of our chains (``regtest.params.select_chain``), the default one if not
    given; the wallets must make that chain's range proofs."""

    def __init__(self, wallets: Sequence[Wallet], miner_script: bytes | None = None,
                 params: ChainParams | None = None) -> None:
        self.wallets = list(wallets)
        self.genesis = (params or select_chain(DEFAULT_CHAIN)).genesis
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
                           self.pending, self.miner_script)
        self.pending = []
        for w in self.wallets:
            w.scan_block(block)
        self.blocks.append(block)
        return block


def build_demo_chain(n_blocks: int = 6, txs_per_block: int = 4,
                     seed: bytes = b"ctplugin demo wallet seed",
                     progress: Progress | None = None,
                     params: ChainParams | None = None) -> ChainBuilder:
    """A reproducible chain: the regtest-key wallet funds a second wallet, both pay each other
    with two blinded outputs per transaction, one block issues an asset and a later one
    reissues it. ``params``: which of our chains (default ``DEFAULT_CHAIN``); its wallets
    make the chain's range proofs (``ChainParams.wallet_range_proof``)."""
    params = params or select_chain(DEFAULT_CHAIN)
    alice = Wallet(REGTEST_SEED, range_proofs=params.wallet_range_proof,
                   genesis_hash=params.genesis_hash)
    bob = Wallet(seed, range_proofs=params.wallet_range_proof, genesis_hash=params.genesis_hash)
    chain = ChainBuilder([alice, bob], params=params)
    fee = 1000
    for _ in range(txs_per_block):
        chain.add(alice.build_transaction([Payment(10 * COIN, bob.new_address())], fee=fee,
                                          height=chain.next_height))
    chain.mine()
    if progress is not None:
        progress(1, n_blocks)
    asset = None
    for b in range(1, n_blocks):
        height = chain.next_height
        for t in range(txs_per_block):
            payer, payee = (bob, alice) if (b + t) % 2 else (alice, bob)
            amount = (1 + (b * 7 + t * 3) % 5) * COIN // 10
            chain.add(payer.build_transaction([Payment(amount, payee.new_address())], fee=fee,
                                              height=height))
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


# ------------------------------------------------------------------------------------------------
# Chain files
# ------------------------------------------------------------------------------------------------


def write_chain(path: str | os.PathLike[str], blocks: Sequence[Block]) -> None:
    """Write blocks in blk*.dat framing, atomically (temporary file, then rename)."""
    tmp = Path(f"{os.fspath(path)}.tmp")
    with tmp.open("wb") as handle:
        for block in blocks:
            raw = block.serialize()
            handle.write(NETWORK_MAGIC + len(raw).to_bytes(4, "little") + raw)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


MAX_BLOCK_SERIALIZED = 4_000_000


def read_chain(path: str | os.PathLike[str]) -> Iterator[bytes]:
    """Raw blocks of a chain file, read one frame at a time (memory stays at one block);
    ``ParseError`` on bad framing."""
    for _, raw in read_chain_records(path):
        yield raw


def read_chain_records(path: str | os.PathLike[str],
                       skip: Callable[[bytes], bool] | None = None) -> Iterator[tuple[int, bytes]]:
    """(file offset, raw block) per frame of a chain file. ``skip(head)``, given the first
    bytes of a block (its 80-byte fixed header part, or fewer), True: the frame is passed over
    without reading it (``b""`` is yielded for it) — a resumed replay skips what it has."""
    with Path(path).open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        pos = 0
        while pos < size:
            head = handle.read(8)
            if len(head) < 8 or head[:4] != NETWORK_MAGIC:
                raise ParseError(pos, "bad chain-file magic or truncated frame header")
            length = int.from_bytes(head[4:], "little")
            if length > MAX_BLOCK_SERIALIZED or pos + 8 + length > size:
                raise ParseError(pos + 4, "chain-file frame length out of range")
            if skip is not None and skip(handle.read(min(length, 80))):
                handle.seek(pos + 8 + length)
                yield pos, b""
            else:
                handle.seek(pos + 8)
                yield pos, handle.read(length)
            pos += 8 + length


def _xor_key(text: str) -> bytes:
    if text == "random":
        return secrets.token_bytes(XOR_KEY_SIZE)
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != XOR_KEY_SIZE:
        raise argparse.ArgumentTypeError("the XOR key is 16 hex digits (8 bytes) or 'random'")
    return key


def unwritable(path: str | os.PathLike[str] | None) -> str | None:
    """Why a command could not create or replace the file or directory ``path`` (None if it
    can, or for None): checked before long work whose result goes there."""
    if path is None:
        return None
    target = Path(path)
    parent = target.parent
    if not parent.is_dir():
        return "No such file or directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return "Permission denied"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ctplugin chain", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=6,
                        help="blocks after genesis (transfers and ramp: after the funding "
                             "block, which comes first)")
    parser.add_argument("--txs", type=int, default=4, help="wallet transactions per block")
    parser.add_argument("--shape", choices=["demo", "transfers", "ramp"], default="demo",
                        help="demo: payments between two wallets with an issuance and a "
                             "reissuance; transfers: the replay benchmark's lanes of "
                             "two-input, two-blinded-output transactions (one funding block "
                             "first); ramp: the same with blocks growing to --txs")
    parser.add_argument("--out", help="chain file to write")
    parser.add_argument("--blocks-dir", help="also write a Core-style blocks/ directory")
    parser.add_argument("--xor-key", type=_xor_key, default=bytes(XOR_KEY_SIZE),
                        help="blocks/ obfuscation key (16 hex digits or 'random'; "
                             "default all zeros)")
    parser.add_argument("--shuffle", type=int, metavar="SEED",
                        help="write blocks/ in a shuffled arrival order (genesis first)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--chain", choices=CHAIN_NAMES, default=DEFAULT_CHAIN,
                        help=f"which of our chains (default {DEFAULT_CHAIN}; "
                             f"ctregtest-borromean: Borromean range proofs, demo shape only)")
    args = parser.parse_args(argv)
    if not args.out and not args.blocks_dir:
        parser.error("give --out FILE and/or --blocks-dir DIR")
    if args.blocks < 1 or args.txs < 1:
        parser.error("--blocks and --txs must be positive")
    if args.shape != "demo" and args.chain != DEFAULT_CHAIN:
        parser.error(f"--shape {args.shape} builds {DEFAULT_CHAIN} chains only (its weights "
                     "are those of Bulletproof outputs)")
    if args.shape != "demo" and args.txs > MAX_TRANSFER_TXS:
        parser.error(f"--txs {args.txs} exceeds the block weight limit: at most "
                     f"{MAX_TRANSFER_TXS} transactions of the {args.shape} shape per block "
                     f"({TRANSFER_TX_WEIGHT} weight units each)")
    for target in (args.out, args.blocks_dir):
        if (reason := unwritable(target)) is not None:
            print(f"ctplugin chain: cannot write {target}: {reason}", file=sys.stderr)
            return 2

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("building blocks"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, disable=args.quiet, transient=True) as bar:
        task = bar.add_task("chain", total=args.blocks)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        if args.shape == "demo":
            chain = build_demo_chain(args.blocks, args.txs, progress=advance,
                                     params=select_chain(args.chain))
        else:
            chain = build_transfer_chain(args.blocks, args.txs, progress=advance,
                                         ramp=args.shape == "ramp")
    for height, block in enumerate(chain.blocks):
        if block.weight > MAX_BLOCK_WEIGHT:  # never a chain our own validator rejects
            print(f"ctplugin chain: block {height} would weigh {block.weight} > "
                  f"{MAX_BLOCK_WEIGHT} (bad-blk-weight): use fewer --txs; nothing written",
                  file=sys.stderr)
            return 2
    n_txs = sum(len(b.transactions) for b in chain.blocks)
    try:
        if args.out:
            write_chain(args.out, chain.blocks)
            print(f"wrote {len(chain.blocks)} blocks ({n_txs} transactions) to {args.out}")
        if args.blocks_dir:
            raw = [b.serialize() for b in chain.blocks]
            if args.shuffle is not None:
                raw = arrival_order(raw, args.shuffle)
            files = write_blocks_dir(args.blocks_dir, raw, xor_key=args.xor_key)
            print(f"wrote {len(raw)} blocks ({n_txs} transactions) to {args.blocks_dir} "
                  f"({len(files)} blk files, xor key {args.xor_key.hex()})")
    except OSError as exc:
        print(f"ctplugin chain: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
