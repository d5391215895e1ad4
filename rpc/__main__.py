"""``python -m rpc --datadir DIR [--rpcport N] [--rpcuser U --rpcpassword P] [--load-chain FILE]``

Runs a regtest node: a validating ``Node`` on the regtest chain (``regtest.params``) served over
JSON-RPC on 127.0.0.1. ``--load-chain`` first connects every block of a chain file written by
``regtest.chain`` (blocks already connected are skipped). Stops on the ``stop`` call or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

from ctplugin.elements import parse_block
from ctplugin.errors import ValidationError
from regtest.chain import read_chain
from regtest.params import chain_params, genesis_block
from rpc.server import RpcServer
from validator import Node

DEFAULT_PORT = 18884


def load_chain(node: Node, path: Path) -> int:
    """Submit the blocks of a chain file; returns how many were new (known ones are skipped)."""
    added = 0
    for raw in read_chain(path):
        result = node.submit_block(parse_block(raw))
        if result.error is not None:
            raise ValidationError(result.error.reason, detail=f"chain file block rejected: "
                                                              f"{result.error}")
        added += result.status not in ("duplicate", "duplicate-invalid")
    return added


async def serve(args: argparse.Namespace) -> None:
    auth = (args.rpcuser, args.rpcpassword) if args.rpcuser else None
    with Node.open(args.datadir, genesis_block(), chain_params()) as node:
        if args.load_chain:
            print(f"loaded {load_chain(node, args.load_chain)} blocks", flush=True)
        server = RpcServer(node, "127.0.0.1", args.rpcport, auth=auth)
        await server.start()
        tip = node.tip
        print(f"ctplugin regtest node at {server.url} (height {tip.height})", flush=True)
        try:
            await server.stopped.wait()
        finally:
            await server.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rpc", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datadir", type=Path, required=True)
    parser.add_argument("--rpcport", type=int, default=DEFAULT_PORT)
    parser.add_argument("--rpcuser")
    parser.add_argument("--rpcpassword")
    parser.add_argument("--load-chain", type=Path)
    args = parser.parse_args(argv)
    if bool(args.rpcuser) != bool(args.rpcpassword):
        parser.error("--rpcuser and --rpcpassword go together")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
