"""The JSON-RPC server, end to end: a real aiohttp server on 127.0.0.1 over a LevelDB node."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ctplugin.elements.consensus import COIN
from regtest.chain import ChainBuilder
from regtest.params import REGTEST_SEED, chain_params, genesis_block
from regtest.wallet import Payment, Wallet
from rpc.server import RpcServer
from validator.node import Node

AUTH = ("alice", "s3cret")


class Client:
    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url
        self.headers = {"Authorization": "Basic " + base64.b64encode(b"alice:s3cret").decode()}

    async def raw(self, payload: Any, headers: dict[str, str] | None = None,
                  data: bytes | None = None) -> tuple[int, Any]:
        async with self.session.post(self.url, json=None if data else payload, data=data,
                                     headers=self.headers if headers is None else headers) as r:
            text = await r.text()
            return r.status, (await r.json(content_type=None)) if text else None

    async def call(self, method: str, *params: Any) -> Any:
        status, body = await self.raw({"id": 1, "method": method, "params": list(params)})
        assert status == 200, body
        assert body["error"] is None
        return body["result"]

    async def error(self, method: str, *params: Any) -> tuple[int, int]:
        status, body = await self.raw({"id": 7, "method": method, "params": list(params)})
        return status, body["error"]["code"]


@pytest.fixture
async def rpc(tmp_path: Path) -> AsyncIterator[tuple[Client, RpcServer, ChainBuilder]]:
    alice, bob = Wallet(REGTEST_SEED), Wallet(b"rpc test wallet")
    chain = ChainBuilder([alice, bob])
    node = Node.open(tmp_path / "node", genesis_block(), chain_params())
    server = RpcServer(node, "127.0.0.1", 0, auth=AUTH)
    await server.start()
    try:
        async with aiohttp.ClientSession() as session:
            yield Client(session, server.url), server, chain
    finally:
        await server.close()
        node.close()


async def test_chain_and_mempool_calls(rpc: tuple[Client, RpcServer, ChainBuilder]) -> None:
    client, _server, chain = rpc
    alice, bob = chain.wallets
    assert await client.call("getblockcount") == 0
    assert await client.call("getbestblockhash") == genesis_block().header.hash_hex

    chain.add(alice.build_transaction([Payment(5 * COIN, bob.new_address())], fee=500,
                                      height=chain.next_height))
    block = chain.mine()
    assert await client.call("submitblock", block.serialize().hex()) is None
    assert await client.call("getblockcount") == 1
    assert await client.call("submitblock", block.serialize().hex()) == "duplicate"

    tx = bob.build_transaction([Payment(COIN, alice.new_address())], fee=700,
                               height=chain.next_height)
    decoded = await client.call("decoderawtransaction", tx.hex())
    assert decoded["txid"] == tx.txid_hex and decoded["fee"]
    [verdict] = await client.call("testmempoolaccept", [tx.hex()])
    assert verdict["allowed"] is True and verdict["txid"] == tx.txid_hex
    assert await client.call("getrawmempool") == []  # testmempoolaccept does not add
    assert await client.call("sendrawtransaction", tx.hex()) == tx.txid_hex
    assert await client.call("getrawmempool") == [tx.txid_hex]
    [again] = await client.call("testmempoolaccept", [tx.hex()])
    assert again == {"txid": tx.txid_hex, "wtxid": tx.wtxid_hex, "allowed": False,
                     "reject-reason": "txn-already-in-mempool"}
    info = await client.call("getproofcacheinfo")
    assert info["inserts"] >= 2  # range + surjection proofs cached at acceptance

    chain.add(tx)
    block2 = chain.mine()
    assert await client.call("submitblock", block2.serialize().hex()) is None
    assert await client.call("getrawmempool") == []
    assert (await client.call("getproofcacheinfo"))["hits"] >= 2


async def test_rejects_carry_elements_reasons(rpc: tuple[Client, RpcServer, ChainBuilder]) -> None:
    client, _server, chain = rpc
    alice, bob = chain.wallets
    tx = alice.build_transaction([Payment(COIN, bob.new_address())], fee=500,
                                 height=chain.next_height)
    raw = bytearray(tx.serialize())
    fee_out = next(out for out in tx.outputs if out.is_fee)
    amount = fee_out.value.to_bytes(8, "big")
    at = bytes(raw).index(b"\x01" + amount)  # explicit value: 0x01 + 8-byte big-endian amount
    raw[at + 1: at + 9] = (fee_out.value - 1).to_bytes(8, "big")  # fee lowered: outputs ≠ inputs
    [verdict] = await client.call("testmempoolaccept", [raw.hex()])
    assert verdict["allowed"] is False and verdict["reject-reason"] == "bad-txns-in-ne-out"
    assert await client.error("sendrawtransaction", raw.hex()) == (500, -26)

    spent_twice = alice.build_transaction([Payment(COIN, bob.new_address())], fee=500,
                                          height=chain.next_height)
    chain.add(spent_twice)
    block = chain.mine()
    raw_block = bytearray(block.serialize())
    raw_block[-40] ^= 1  # inside a range proof: the witness commitment no longer matches
    assert await client.call("submitblock", raw_block.hex()) == "bad-witness-merkle-match"
    assert await client.call("getblockcount") == 0


async def test_protocol_errors(rpc: tuple[Client, RpcServer, ChainBuilder]) -> None:
    client, server, _chain = rpc
    assert await client.error("nosuchmethod") == (404, -32601)
    assert await client.error("decoderawtransaction", "zz") == (500, -22)
    assert await client.error("decoderawtransaction", "00") == (500, -22)
    assert await client.error("decoderawtransaction", 5) == (500, -3)
    assert await client.error("getblockcount", 1) == (500, -32602)
    assert await client.error("testmempoolaccept", []) == (500, -8)
    assert await client.error("submitblock", "0000") == (500, -22)
    status, body = await client.raw(None, data=b"{not json")
    assert (status, body["error"]["code"]) == (500, -32700)
    status, body = await client.raw({"id": 1, "method": "getblockcount"}, headers={})
    assert status == 401 and body is None
    status, body = await client.raw([
        {"jsonrpc": "2.0", "id": 1, "method": "getblockcount"},
        {"jsonrpc": "2.0", "id": 2, "method": "nosuchmethod"},
        {"jsonrpc": "2.0", "method": "getblockcount"},  # a notification: no reply
    ])
    assert status == 200
    assert body == [{"jsonrpc": "2.0", "id": 1, "result": 0},
                    {"jsonrpc": "2.0", "id": 2,
                     "error": {"code": -32601, "message": "Method not found"}}]
    status, body = await client.raw({"id": 3, "method": "getblockcount",
                                     "params": {"bogus": 1}})
    assert status == 500 and body["error"]["code"] == -8
    assert await client.call("stop") == "ctplugin stopping"
    await asyncio.wait_for(server.stopped.wait(), timeout=5)
