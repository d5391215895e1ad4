"""Real-data check: real Elements/Liquid transactions whose spent outputs are published pass our
balance tally and surjection-proof checks (their range proofs are Borromean, out of scope), and
tampered copies fail.

Data: ``tests/fixtures/validator_realdata.json``, a copy of the transactions in
``../shared/elements-vectors/transactions.json`` whose prevouts are all in
``known_prevouts.json`` (asset ids there are in display, i.e. reversed, byte order).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from ctplugin import surjection
from ctplugin.batch import BatchVerifier
from ctplugin.bulletproofs import default_generators
from ctplugin.elements import Transaction, TxOut, parse_transaction
from ctplugin.errors import ValidationError
from tests.conftest import FIXTURES, load_json, shared_path
from validator.rules import AmountPlan, plan_amounts

DATA = load_json(FIXTURES / "validator_realdata.json")["transactions"]
LIQUID_POLICY_ASSET = bytes.fromhex(
    "6f0279e9ed041c3d710a9f57d0c02928416460c4b722ae3457a11eec381c526d")[::-1]


def spent_output(record: dict[str, Any]) -> TxOut:
    asset = (bytes.fromhex(record["assetcommitment"]) if "assetcommitment" in record
             else bytes.fromhex(record["asset"])[::-1])
    value = (bytes.fromhex(record["amountcommitment"]) if "amountcommitment" in record
             else round(record["amount_btc"] * 100_000_000))
    return TxOut(asset=asset, value=value, script_pubkey=bytes.fromhex(record["scriptPubKey"]))


def check(tx: Transaction, spent: list[TxOut]) -> tuple[bool, list[bool]]:
    """(balance holds, surjection verdicts) through the validator's own rules and batch."""
    plan: AmountPlan = plan_amounts(tx, 0, spent, LIQUID_POLICY_ASSET)
    batch = BatchVerifier(default_generators().fixed)
    batch.add(plan.balance)
    return batch.verify(), [
        surjection.verify_bytes(s.proof, s.targets.generators(), s.output_generator())
        for s in plan.surjections]


def _case(entry: dict[str, Any]) -> tuple[Transaction, list[TxOut]]:
    tx = parse_transaction(bytes.fromhex(entry["hex"]))
    return tx, [spent_output(r) for r in entry["spent"]]


@pytest.mark.parametrize("entry", DATA, ids=[e["id"] for e in DATA])
def test_real_transaction_balances_and_surjection_proofs_verify(entry: dict[str, Any]) -> None:
    tx, spent = _case(entry)
    if entry["txid"]:
        assert tx.txid_hex == entry["txid"]
    balanced, surjections = check(tx, spent)
    assert balanced
    assert surjections and all(surjections)


def test_the_set_covers_issuances_and_several_inputs() -> None:
    txs = [_case(e)[0] for e in DATA]
    assert len(txs) >= 8
    assert sum(any(i.issuance is not None for i in tx.inputs) for tx in txs) >= 3
    assert max(len(tx.inputs) for tx in txs) >= 3


def _with_outputs(tx: Transaction, outputs: list[TxOut]) -> Transaction:
    return Transaction(version=tx.version, inputs=tx.inputs, outputs=outputs,
                       locktime=tx.locktime)


@pytest.mark.parametrize("entry", DATA, ids=[e["id"] for e in DATA])
def test_tampered_copies_fail(entry: dict[str, Any]) -> None:
    tx, spent = _case(entry)
    outs = list(tx.outputs)
    fee_index = next(j for j, o in enumerate(outs) if o.is_fee)
    # one more unit of fee: the tally no longer balances
    more_fee = list(outs)
    more_fee[fee_index] = replace(outs[fee_index], value=outs[fee_index].value + 1)
    assert check(_with_outputs(tx, more_fee), spent)[0] is False
    # one byte of a surjection proof's challenge e0 flipped: that proof fails
    j = next(j for j, o in enumerate(outs) if o.surjection_proof)
    proof = bytearray(outs[j].surjection_proof)
    proof[-33] ^= 1  # inside the last s scalar (the proof ends with e0 ‖ s_0 … s_k)
    bad_proof = list(outs)
    bad_proof[j] = replace(outs[j], surjection_proof=bytes(proof))
    try:
        balanced, surjections = check(_with_outputs(tx, bad_proof), spent)
    except ValidationError:  # also acceptable: the altered scalar no longer parses
        return
    assert balanced and not all(surjections)
    # a spent output swapped for another one: the target list (and a reissuance's token
    # input) changes, so some check must fail
    if len(spent) > 1 and len({s.asset for s in spent}) > 1:
        assert rejected(tx, [spent[1], spent[0], *spent[2:]])


def rejected(tx: Transaction, spent: list[TxOut]) -> bool:
    try:
        balanced, surjections = check(tx, spent)
    except ValidationError:
        return True
    return not balanced or not all(surjections)


def test_fixture_matches_the_shared_vectors() -> None:
    path = shared_path("elements-vectors", "transactions.json")
    shared = {t["id"]: t["hex"] for t in load_json(path)["transactions"]}
    for entry in DATA:
        assert shared[entry["id"]] == entry["hex"]
    assert json.dumps(DATA)  # loadable and serializable
