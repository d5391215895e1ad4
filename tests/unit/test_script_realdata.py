"""Real Elements/Liquid transactions (``../shared/elements-vectors/transactions.json``) whose
spent outputs are published (``known_prevouts.json``): every input's script verifies under
our chain's block flags — legacy P2PKH spends included — with Elements' legacy and v0
digests, immediately and through deferred checks."""

from __future__ import annotations

from typing import Any

from ctplugin.elements import TxOut, parse_transaction
from ctplugin.script.checker import DeferredChecks, checker_for
from ctplugin.script.flags import BLOCK
from ctplugin.script.interpreter import verify_input
from ctplugin.script.sighash import PrecomputedTransaction
from ctplugin.secp256k1 import libsecp
from tests.conftest import load_json, shared_path


def _spent(record: dict[str, Any]) -> TxOut:
    asset = (bytes.fromhex(record["assetcommitment"]) if record.get("assetcommitment")
             else bytes.fromhex(record["asset"])[::-1])
    value = (bytes.fromhex(record["amountcommitment"]) if record.get("amountcommitment")
             else round(record["amount_btc"] * 100_000_000))
    return TxOut(asset=asset, value=value, script_pubkey=bytes.fromhex(record["scriptPubKey"]))


def test_published_prevouts_let_every_input_verify() -> None:
    prevouts = {(p["prevout_txid"], p["vout"]): _spent(p)
                for p in load_json(shared_path("elements-vectors", "known_prevouts.json"))[
                    "prevouts"] if "prevout_txid" in p}
    entries = load_json(shared_path("elements-vectors", "transactions.json"))["transactions"]
    checked = []
    for entry in entries:
        tx = parse_transaction(bytes.fromhex(entry["hex"]))
        keys = [(t.prevout_hash[::-1].hex(), t.prevout_index) for t in tx.inputs]
        if tx.is_coinbase or not all(k in prevouts for k in keys):
            continue
        # the genesis hash only enters taproot digests (none among these spends)
        pre = PrecomputedTransaction(tx, [prevouts[k] for k in keys], bytes(32))
        for i in range(len(tx.inputs)):
            verify_input(pre, i, int(BLOCK), checker_for(pre, i, int(BLOCK)))
            deferred = DeferredChecks()
            verify_input(pre, i, int(BLOCK), checker_for(pre, i, int(BLOCK), deferred, i))
            assert all(c.verify() for c in deferred.ecdsa)
            assert all(libsecp.schnorr_verify(c.pubkey, c.msg, c.sig) for c in deferred.schnorr)
            checked.append((entry["id"], i, pre.spent[i].script_pubkey[:3] if pre.spent else b""))
    assert len(checked) >= 17
    assert {spk for _, _, spk in checked} == {b"\x76\xa9\x14"}  # the P2PKH spends
