"""Every range proof in the real Elements/Liquid data (``../shared/elements-vectors``
transactions.json and blocks.json: outputs and issuances) verifies, agreeing with the C
reference; a tampered proof fails at its own site only.

Without ../shared the fixture copies (tests/fixtures/elements_*.json) run; with CI set a missing
shared file is a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctplugin import borromean
from ctplugin.borromean.elements import SITE_OUTPUT, ProofSite, transaction_claims
from ctplugin.elements import Transaction, parse_block, parse_transaction
from harness import zkp
from tests.conftest import FIXTURES, SHARED, load_json, shared_if_present


def _source(shared_name: str, fixture_name: str) -> Path:
    return shared_if_present("elements-vectors", shared_name) or FIXTURES / fixture_name


def _transactions() -> list[Transaction]:
    txs = [parse_transaction(bytes.fromhex(e["hex"]))
           for e in load_json(_source("transactions.json",
                                      "elements_transactions.json"))["transactions"]]
    for entry in load_json(_source("blocks.json", "elements_blocks.json"))["blocks"]:
        if entry.get("kind", "block") == "block":
            txs.extend(parse_block(bytes.fromhex(entry["hex"])).transactions)
    return txs


TXS = _transactions()
CLAIMS = [(tx.txid_hex, site, claim) for tx in TXS for site, claim in transaction_claims(tx)]


def test_every_range_proof_verifies() -> None:
    results = borromean.verify_many([claim for _, _, claim in CLAIMS], threads=2)
    failures = [(txid, str(site)) for (txid, site, _), r in zip(CLAIMS, results)
                if not isinstance(r, tuple)]
    assert not failures
    assert CLAIMS
    if (SHARED / "elements-vectors" / "transactions.json").exists():
        assert len(CLAIMS) >= 100
        assert any(site.kind != SITE_OUTPUT for _, site, _ in CLAIMS)  # issuance proofs too
        assert {borromean.info(c.proof).mantissa for _, _, c in CLAIMS} >= {32, 36, 52}


def test_the_c_reference_agrees() -> None:
    ref = zkp.rangeproof()
    if ref is None:
        pytest.skip("wallycore's secp256k1-zkp not loadable")
    results = borromean.verify_many([claim for _, _, claim in CLAIMS], threads=1)
    for (_, _, claim), ours in zip(CLAIMS, results):
        assert ref.verify(claim.proof, claim.commitment, claim.generator,
                          claim.extra_commit) == ours


@pytest.mark.parametrize("offset", [0, 1, 2, 100, -33, -1])
def test_a_tampered_proof_fails_at_its_own_site(offset: int) -> None:
    claims = [claim for _, _, claim in CLAIMS[:6]]
    victim = 3 % len(claims)
    proof = bytearray(claims[victim].proof)
    proof[offset] ^= 0x04
    claims[victim] = borromean.RangeProofClaim(bytes(proof), claims[victim].commitment,
                                               claims[victim].generator,
                                               claims[victim].extra_commit)
    results = borromean.verify_many(claims, threads=2)
    assert [isinstance(r, tuple) for r in results] == [i != victim for i in range(len(claims))]


def test_sites_name_outputs_and_issuances() -> None:
    assert str(ProofSite("output", 2)) == "output 2"
    assert str(ProofSite("issuance", 0)) == "input 0 issuance"
