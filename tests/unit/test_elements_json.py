"""elementsd-style JSON (``decode``), script asm/type, and the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from apps.elements import main
from ctplugin.elements import _speedups, parse_transaction
from ctplugin.elements.issuance import input_issuance_ids
from ctplugin.elements.rpcjson import decode_transaction, dumps, value_from_amount
from ctplugin.elements.script import script_to_asm, script_type
from harness.elements_vectors import load_entries
from tests.conftest import FIXTURES, REPO, shared_path

TX_FIXTURE = FIXTURES / "elements_transactions.json"
ENTRIES = {e["id"]: e for e in load_entries([TX_FIXTURE], "transactions")}


def _decoded(tx_id: str) -> dict[str, Any]:
    tx = parse_transaction(bytes.fromhex(ENTRIES[tx_id]["hex"]))
    return json.loads(dumps(decode_transaction(tx)))


@pytest.mark.parametrize(("amount", "text"), [
    (0, "0.00000000"), (1, "0.00000001"), (36_480, "0.00036480"),
    (2_100_000_000_000_000, "21000000.00000000"),
    ((1 << 64) - 1, "-0.00000001"),  # CAmount is signed 64-bit
])
def test_amount_text(amount: int, text: str) -> None:
    assert str(format(value_from_amount(amount), "f")) == text
    assert dumps({"v": value_from_amount(amount)}, indent=None) == f'{{"v": {text}}}'


@pytest.mark.parametrize(("script", "asm"), [
    (bytes.fromhex("76a914" + "11" * 20 + "88ac"),
     "OP_DUP OP_HASH160 " + "11" * 20 + " OP_EQUALVERIFY OP_CHECKSIG"),
    (b"\x00\x01\x05\x01\x81\x02\xff\x00\x4f\x51\x60", "0 5 -1 255 -1 1 16"),
    (b"\x6a\x05hello", "OP_RETURN 68656c6c6f"),
    (b"\x4c\x05abc", "[error]"),
    (b"\x51\x4d\x01", "1 [error]"),
    (b"\xbb\xc1\xff", "OP_UNKNOWN OP_CHECKSIGFROMSTACK OP_INVALIDOPCODE"),
])
def test_script_asm(script: bytes, asm: str) -> None:
    assert script_to_asm(script) == asm


def test_scriptsig_sighash_decoding() -> None:
    sig = bytes.fromhex("3044022057cf5a8a0e8d5b4a1c8ee95bcd7a0cd3f3d3a50f09f2b4c6e1a2f4f0c1d3e5a7"
                        "022045a7e6b1d5f3c2a1b0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7")
    sig += b"\x01"  # SIGHASH_ALL
    pubkey = b"\x02" + b"\x33" * 32
    script = bytes((len(sig),)) + sig + bytes((len(pubkey),)) + pubkey
    assert script_to_asm(script, True) == f"{sig[:-1].hex()}[ALL] {pubkey.hex()}"
    assert script_to_asm(script, False) == f"{sig.hex()} {pubkey.hex()}"
    not_der = b"\x47" + b"\x30" + b"\x00" * 70
    assert script_to_asm(not_der, True) == (b"\x30" + b"\x00" * 70).hex()


@pytest.mark.parametrize(("script", "kind"), [
    (b"", "fee"),
    (bytes.fromhex("76a914" + "11" * 20 + "88ac"), "pubkeyhash"),
    (bytes.fromhex("a914" + "11" * 20 + "87"), "scripthash"),
    (bytes.fromhex("0014" + "11" * 20), "witness_v0_keyhash"),
    (bytes.fromhex("0020" + "11" * 32), "witness_v0_scripthash"),
    (bytes.fromhex("5120" + "11" * 32), "witness_v1_taproot"),
    (bytes.fromhex("5202" + "1111"), "witness_unknown"),
    (bytes.fromhex("6a0401020304"), "nulldata"),
    (bytes.fromhex("21" + "02" + "11" * 32 + "ac"), "pubkey"),
    (bytes.fromhex("51" + "21" + "02" + "11" * 32 + "21" + "03" + "22" * 32 + "52ae"), "multisig"),
    (b"\x51", "nonstandard"),
])
def test_script_type(script: bytes, kind: str) -> None:
    assert script_type(script) == kind


def test_decode_confidential_transaction() -> None:
    decoded = _decoded("tx001")
    tx = parse_transaction(bytes.fromhex(ENTRIES["tx001"]["hex"]))
    assert decoded["txid"] == ENTRIES["tx001"]["expected_txid"]
    assert decoded["hash"] == decoded["wtxid"] == ENTRIES["tx001"]["expected_wtxid"]
    assert (decoded["size"], decoded["weight"]) == (tx.size, tx.weight)
    assert decoded["vsize"] == (tx.weight + 3) // 4
    fee_asset = "b2e15d0d7a0c94e4e2ce0fe6e8691b9e451377f6e46e8045a86f7c4b5d4f0f23"
    assert decoded["fee"] == {fee_asset: 0.0003648}
    blinded, fee = decoded["vout"][0], decoded["vout"][2]
    exponent, mantissa, minimum, maximum = _speedups.rangeproof_info(tx.outputs[0].range_proof)
    assert blinded["ct-exponent"] == exponent and blinded["ct-bits"] == mantissa
    assert blinded["value-minimum"] == minimum / 1e8
    assert blinded["value-maximum"] == maximum / 1e8
    assert blinded["valuecommitment"] == tx.outputs[0].value.hex()
    assert blinded["assetcommitment"] == tx.outputs[0].asset.hex()
    assert blinded["surjectionproof"] == tx.outputs[0].surjection_proof.hex()
    assert blinded["commitmentnonce_fully_valid"] is True
    assert blinded["scriptPubKey"]["type"] == "pubkeyhash"
    assert fee["asset"] == fee_asset and fee["value"] == 0.0003648
    assert fee["commitmentnonce"] == "" and fee["commitmentnonce_fully_valid"] is False
    assert fee["scriptPubKey"] == {"asm": "", "hex": "", "type": "fee"}
    assert [v["n"] for v in decoded["vout"]] == [0, 1, 2]
    assert decoded["vin"][0]["is_pegin"] is False
    assert decoded["vin"][0]["scriptSig"]["asm"].endswith(tx.inputs[0].script_sig[-33:].hex())


def test_decode_coinbase_pegin_and_issuance() -> None:
    coinbase = _decoded("tx002")["vin"][0]
    assert "coinbase" in coinbase and "txid" not in coinbase
    pegin = _decoded("tx003")["vin"][0]
    assert pegin["is_pegin"] is True and len(pegin["pegin_witness"]) == 6
    tx = parse_transaction(bytes.fromhex(ENTRIES["tx005"]["hex"]))
    issuance = _decoded("tx005")["vin"][0]["issuance"]
    ids = input_issuance_ids(tx.inputs[0])
    assert ids is not None and issuance["isreissuance"] is False
    assert issuance["asset"] == ids.asset[::-1].hex()
    assert issuance["token"] == ids.token[::-1].hex()
    assert issuance["assetEntropy"] == ids.entropy[::-1].hex()
    assert "assetamountcommitment" in issuance


def test_issuance_ids_match_wallycore() -> None:
    wallycore = pytest.importorskip("wallycore")
    checked = 0
    for entry in ENTRIES.values():
        for txin in parse_transaction(bytes.fromhex(entry["hex"])).inputs:
            ids = input_issuance_ids(txin)
            if ids is None or txin.issuance.is_reissuance:
                continue
            entropy = bytes(wallycore.tx_elements_issuance_generate_entropy(
                txin.prevout_hash, txin.prevout_index, txin.issuance.asset_entropy))
            assert entropy == ids.entropy
            assert bytes(wallycore.tx_elements_issuance_calculate_asset(entropy)) == ids.asset
            token = wallycore.tx_elements_issuance_calculate_reissuance_token(
                entropy, int(txin.issuance.amount_is_blinded))
            assert bytes(token) == ids.token
            checked += 1
    assert checked


def test_cli_decode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decode", ENTRIES["tx004"]["hex"]]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["txid"] == ENTRIES["tx004"]["expected_txid"]
    assert main(["decode", "02000000"]) == 1
    assert "TX decode failed" in capsys.readouterr().err
    assert main(["decode", "zz"]) == 1


def test_cli_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(TX_FIXTURE)]) == 0
    assert main(["check", str(FIXTURES / "elements_blocks.json")]) == 0
    data = json.loads(TX_FIXTURE.read_text())
    data["transactions"][0]["expected_txid"] = "00" * 32
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["check", str(broken)]) == 1
    assert "txid" in capsys.readouterr().out
    data["transactions"][0]["hex"] = data["transactions"][0]["hex"][:-2]
    broken.write_text(json.dumps(data))
    assert main(["check", str(broken)]) == 1
    assert main(["check", str(tmp_path / "missing.json")]) == 2


@pytest.mark.parametrize("name", ["transactions.json", "blocks.json"])
def test_cli_check_shared_vectors(name: str) -> None:
    path = shared_path("elements-vectors", name)
    done = subprocess.run([sys.executable, "-m", "apps.main", "elements", "check", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 failures" in done.stdout


def test_decode_pegout_and_discount_fields() -> None:
    decoded = _decoded("tx004")
    # inside the scriptPubKey object, as Elements' ScriptToUniv (feature_fedpeg.py reads them
    # there)
    pegouts = [v["scriptPubKey"] for v in decoded["vout"] if "pegout_chain" in v["scriptPubKey"]]
    assert len(pegouts) == 1
    # Elements regtest parent (bitcoin regtest) genesis hash
    assert pegouts[0]["pegout_chain"] == (
        "0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206")
    assert pegouts[0]["pegout_type"] == "pubkeyhash"
    assert pegouts[0]["type"] == "nulldata"
    confidential = _decoded("tx001")
    tx = parse_transaction(bytes.fromhex(ENTRIES["tx001"]["hex"]))
    assert confidential["discountweight"] == tx.discount_weight < tx.weight
    assert confidential["discountvsize"] == (tx.discount_weight + 3) // 4
    # two blinded outputs: proofs, value and nonce commitments are all discounted
    proofs = sum(len(o.serialize_witness()) - 2 for o in tx.outputs)
    assert tx.weight - tx.discount_weight == proofs + 2 * (24 + 32) * 4


# --- which range proofs have a header to print ---------------------------------------------------

def _blinded_output_tx(proof: bytes) -> Any:
    from ctplugin.elements import Transaction, TxIn, TxOut
    from ctplugin.pedersen import commit, generator_generate

    generator = generator_generate(bytes(32))
    out = TxOut(asset=generator.serialize(), value=commit(5, 7, generator).serialize(),
                script_pubkey=b"\x51", range_proof=proof)
    txin = TxIn(prevout_hash=bytes(range(32)), prevout_index=0)
    return Transaction(version=2, inputs=(txin,), outputs=(out,))


def test_a_bulletproof_is_not_read_as_a_borromean_header() -> None:
    """A 675-byte Bulletproof whose first bytes happen to look like an exact-value Borromean
    header (flags 0x20, min 5): elementsd's reading (the default) prints value 5, but on a
    Bulletproof chain the proof has no header, so no range or value is printed (a wallet or
    test reading ``value`` would otherwise take a blinded output for an explicit one)."""
    from ctplugin.bulletproofs import CONSENSUS_NBITS
    from ctplugin.bulletproofs.layout import proof_length
    from ctplugin.elements.chainparams import (
    CONSENSUS_BULLETPROOF_SIZE,
    RangeProofKind,
    range_proof_kind,
)

    assert proof_length(CONSENSUS_NBITS, 1) == CONSENSUS_BULLETPROOF_SIZE
    proof = b"\x20" + (5).to_bytes(8, "big") + bytes(CONSENSUS_BULLETPROOF_SIZE - 9)
    assert _speedups.rangeproof_info(proof) == (-1, 0, 5, 5)
    tx = _blinded_output_tx(proof)
    as_elementsd = json.loads(dumps(decode_transaction(tx)))["vout"][0]
    assert as_elementsd["value"] == 5e-8 and "valuecommitment" in as_elementsd
    for kinds in (frozenset({RangeProofKind.BULLETPROOF}),
                  frozenset({RangeProofKind.BULLETPROOF, RangeProofKind.BORROMEAN})):
        assert range_proof_kind(proof, kinds) == RangeProofKind.BULLETPROOF
        vout = json.loads(dumps(decode_transaction(tx, kinds)))["vout"][0]
        assert not {"value", "value-minimum", "value-maximum", "ct-exponent", "ct-bits"} & set(vout)
        assert vout["valuecommitment"] == tx.outputs[0].value.hex()
    both = frozenset({RangeProofKind.BULLETPROOF, RangeProofKind.BORROMEAN})
    assert range_proof_kind(proof[:-1], both) == RangeProofKind.BORROMEAN


@pytest.mark.parametrize(("document", "message"), [
    ('{"transactions": 5}', "transactions must be a list"),
    ('{"blocks": [5]}', "block 0 is not an object"),
    ('{"transactions": [{"id": "x"}]}', "transaction 0: hex must be a hex string"),
    ('{"transactions": [{"hex": "0g"}]}', "transaction 0: hex is not hex"),
    ("[1]", "a vectors file is a JSON object"),
    ('{"neither": 1}', "neither a 'transactions' nor a 'blocks' vectors file"),
    ('{"transactions": [', "not JSON"),
])
def test_cli_check_malformed_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          document: str, message: str) -> None:
    """A malformed vectors file is named as such, exit 2 (QA: a TypeError traceback, exit 1)."""
    path = tmp_path / "f.json"
    path.write_text(document)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"malformed vectors file {path}: ") or "not JSON" in err, err
    assert message in err and "Traceback" not in err
    path.write_text('{"blocks": [{"hex": "00", "source": 5, "computed": []}]}')
    assert main(["check", str(path)]) == 1  # a block that does not parse: a failure, no crash
    assert "parse error" in capsys.readouterr().out
