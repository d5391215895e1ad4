"""``ctplugin chain``: build blocks of wallet-made confidential transactions and write them to a
chain file and/or a Core-style ``blocks/`` directory
(``ctplugin chain --blocks N --txs M --out FILE [--blocks-dir DIR --xor-key HEX --shuffle S]``).

Blocks come from ``regtest.builder`` (``build_demo_chain``, ``build_transfer_chain``), chain
files are ``validator.write_chain``'s (genesis first, blk-file record framing with the chain's
network magic), ``blocks/`` directories ``regtest.blocksdir.write_blocks_dir``'s.
``--chain elementsregtest`` takes elementsd's chain options as ``--chain-option NAME=VALUE``
(``regtest.elements``; docs/elements-regtest.md §3.5).
"""

from __future__ import annotations

import argparse
import secrets
import sys

from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT
from ctplugin.errors import CtpluginError
from regtest.blocksdir import arrival_order, write_blocks_dir
from regtest.builder import (
    MAX_TRANSFER_TXS,
    TRANSFER_TX_WEIGHT,
    build_demo_chain,
    build_transfer_chain,
)
from regtest.elements import CHAIN_OPTION_HELP, chain_from_words
from regtest.params import CHAIN_NAMES, DEFAULT_CHAIN
from rpc.helpformat import UserHelpFormatter
from validator import NO_XOR_KEY, XOR_KEY_SIZE, unwritable, write_chain

DESCRIPTION = """\
Build a regtest chain of wallet-made confidential transactions and write it as a chain file
(--out, the input of "ctplugin replay" and "ctplugin node --load-chain") and/or as a
Bitcoin Core-style blocks/ directory of blk*.dat files (--blocks-dir), optionally obfuscated
(--xor-key) and in a shuffled arrival order (--shuffle), as a real node's directory can be.

  ctplugin chain --blocks 20 --txs 4 --out chain.dat
  ctplugin chain --shape ramp --blocks 30 --txs 50 --out ramp.dat --blocks-dir blocks
"""


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ctplugin chain", description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter)
    parser.add_argument("--blocks", type=int, default=6,
                        help="blocks after genesis (transfers and ramp: after the funding "
                             "block, which comes first)")
    parser.add_argument("--txs", type=int, default=4, help="wallet transactions per block")
    parser.add_argument("--shape", choices=["demo", "transfers", "ramp"], default="demo",
                        help="demo: payments between two wallets with an issuance and a "
                             "reissuance; transfers: the replay benchmark's lanes of "
                             "two-input, two-blinded-output transactions (one funding block "
                             "first); ramp: the same with blocks growing to --txs")
    parser.add_argument("--out", metavar="FILE", help="chain file to write")
    parser.add_argument("--blocks-dir", metavar="DIR",
                        help="also write a Core-style blocks/ directory")
    parser.add_argument("--xor-key", type=_xor_key, default=NO_XOR_KEY,
                        help="blocks/ obfuscation key (16 hex digits or 'random'; "
                             "default all zeros)")
    parser.add_argument("--shuffle", type=int, metavar="SEED",
                        help="write blocks/ in a shuffled arrival order (genesis first)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--chain", choices=CHAIN_NAMES, default=DEFAULT_CHAIN,
                        help=f"which of our chains (default {DEFAULT_CHAIN}; "
                             f"ctregtest-borromean: Borromean range proofs, demo shape only; "
                             f"elementsregtest: Elements' regtest, demo shape only, with "
                             f"--chain-option initialfreecoins=N to have coins to spend)")
    parser.add_argument("--chain-option", action="append", default=[], metavar="NAME=VALUE",
                        help=CHAIN_OPTION_HELP)
    args = parser.parse_args(argv)
    try:
        params = chain_from_words(args.chain, args.chain_option)
    except CtpluginError as exc:
        parser.error(str(exc))
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

    # rich only here: the builder reports progress through a plain callback
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
            try:
                chain = build_demo_chain(args.blocks, args.txs, progress=advance,
                                         params=params)
            except CtpluginError as exc:  # e.g. an Elements genesis without free coins
                print(f"ctplugin chain: {exc}", file=sys.stderr)
                return 2
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
            write_chain(args.out, chain.blocks, params.network_magic)
            print(f"wrote {len(chain.blocks)} blocks ({n_txs} transactions) to {args.out}")
        if args.blocks_dir:
            raw = [b.serialize() for b in chain.blocks]
            if args.shuffle is not None:
                raw = arrival_order(raw, args.shuffle)
            files = write_blocks_dir(args.blocks_dir, raw, xor_key=args.xor_key,
                                     magic=params.network_magic)
            print(f"wrote {len(raw)} blocks ({n_txs} transactions) to {args.blocks_dir} "
                  f"({len(files)} blk files, xor key {args.xor_key.hex()})")
    except OSError as exc:
        print(f"ctplugin chain: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
