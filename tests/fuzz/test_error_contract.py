"""The error contract (ctplugin.errors): on hostile input of the right Python types, every public
entry point of ctplugin, validator (its store included), regtest and replay's block sources
either returns or raises a ``CtpluginError`` subclass — never ValueError, KeyError, IndexError,
TypeError, OverflowError, ZeroDivisionError, AssertionError, RecursionError, ... — and the typed
errors carry a machine-readable ``reason``.

Each entry below is one public function or constructor with a hypothesis strategy for its
arguments: random bytes, right-sized bytes with hostile content, mutated valid encodings,
out-of-range integers, hostile JSON documents. (Arguments of the wrong Python type altogether,
``None`` for bytes, are caller bugs and may raise TypeError.)
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin import borromean, hashes, serialize, surjection
from ctplugin.batch import Claim
from ctplugin.bulletproofs import generator_set, prove, range_proof_claim, rewind_output, verify
from ctplugin.dlc import ecdsa_adaptor, messages
from ctplugin.dlc.contract import validate_offer
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.oracle import OracleAttestation
from ctplugin.elements import (
    Block,
    Transaction,
    TxIn,
    TxOut,
    issuance_asset_id,
    issuance_entropy,
    parse_block,
    parse_block_header,
    parse_transaction,
    reissuance_token_id,
)
from ctplugin.elements import address as eaddress
from ctplugin.elements import script as escript
from ctplugin.elements.chainparams import ELEMENTS_REGTEST_ADDRESSES
from ctplugin.elements.merkleblock import build_proof, parse_proof
from ctplugin.elements.rpcjson import decode_transaction
from ctplugin.errors import (
    CtpluginError,
    EncodingError,
    ParseError,
    ProofError,
    ValidationError,
)
from ctplugin.pedersen import (
    H_GENERATOR,
    Commitment,
    Generator,
    commit,
    generator_generate,
    generator_generate_blinded,
)
from ctplugin.script import sighash, taproot
from ctplugin.script.checker import SigVersion, checker_for
from ctplugin.script.flags import BLOCK, STANDARD
from ctplugin.script.interpreter import eval_script, verify_input
from ctplugin.secp256k1 import (
    KIND_COMPRESSED,
    KIND_GENERATOR,
    KIND_PEDERSEN,
    KIND_XONLY,
    KIND_XQR,
    G,
    Point,
    Scalar,
    bip340,
    ct,
    decode_points,
    kernel,
)
from ctplugin.surjection import SurjectionProof, verify_bytes
from harness.elements_vectors import load_entries
from regtest.params import CTREGTEST, NETWORK_MAGIC, POLICY_ASSET, REGTEST_SEED, select_chain
from regtest.wallet import Payment, Wallet
from regtest.wallet.keys import p2wpkh_script
from replay.sources import BlocksDirSource, ChainFileSource
from tests.conftest import FIXTURES, SLOW_SCALE
from validator import (
    Node,
    Outpoint,
    RecordFile,
    RecordReader,
    UtxoEntry,
    audit_transactions,
    decode_txout,
    read_chain,
)
from validator.rules import check_transaction, plan_amounts

_k = kernel.backend
GENS = generator_set(256)
_TXS = [bytes.fromhex(e["hex"]) for e in load_entries([FIXTURES / "elements_transactions.json"],
                                                      "transactions")][:6]
_BLOCKS = [bytes.fromhex(e["hex"]) for e in load_entries([FIXTURES / "elements_blocks.json"],
                                                         "blocks")][:2]
_MERKLE_BLOCKS = [build_proof(block.header, [t.txid for t in block.transactions],
                              {block.transactions[-1].txid})
                  for block in map(parse_block, _BLOCKS)]
_PROOF = prove([5], [7], H_GENERATOR, b"\x01" * 32, gens=GENS)
_COMMIT = commit(5, 7, H_GENERATOR).serialize()
_HG = H_GENERATOR.serialize()
_BORROMEAN = [bytes.fromhex(c["proof"]) for c in json.loads(
    (FIXTURES / "borromean_vectors.json").read_text())["zkp_fixed"]][:4]


def _flip(data: bytes, flips: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for pos, mask in flips:
        if out:
            out[pos % len(out)] ^= mask
    return bytes(out)


def mutated(pool: list[bytes]) -> st.SearchStrategy[bytes]:
    """A valid encoding from ``pool`` with bytes flipped, cut or extended."""
    flips = st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=4)
    return st.one_of(
        st.builds(_flip, st.sampled_from(pool), flips),
        st.builds(lambda d, n: d[:n], st.sampled_from(pool), st.integers(0, 400)),
        st.builds(lambda d, tail: d + tail, st.sampled_from(pool), st.binary(max_size=8)))


def sized(*lengths: int) -> st.SearchStrategy[bytes]:
    return st.one_of(*(st.binary(min_size=n, max_size=n) for n in lengths))


hostile = st.one_of(st.binary(max_size=120), sized(32, 33, 64, 65))
point33 = st.one_of(sized(33), st.builds(lambda p, b: bytes([p]) + b,
                                         st.sampled_from([2, 3, 8, 9, 10, 11, 4, 0]),
                                         st.binary(min_size=32, max_size=32)))
big_int = st.one_of(st.integers(-2**70, 2**70), st.sampled_from([0, -1, 2**64, 2**256, -2**63]))
json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
              st.text(max_size=8)),
    lambda children: st.one_of(st.lists(children, max_size=3),
                               st.dictionaries(st.text(max_size=12), children, max_size=4)),
    max_leaves=12)


def _offer_mutants() -> st.SearchStrategy[Any]:
    """Real dlcspecs offers with one field replaced by a hostile JSON value."""
    path = FIXTURES / "dlc_rust_offer_contract.json"
    base = json.loads(path.read_text()) if path.exists() else {}

    def replace(doc: Any, pick: int, value: Any) -> Any:
        doc = json.loads(json.dumps(doc))
        nodes: list[tuple[Any, Any]] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                for key, child in node.items():
                    nodes.append((node, key))
                    walk(child)
            elif isinstance(node, list):
                for i, child in enumerate(node):
                    nodes.append((node, i))
                    walk(child)

        walk(doc)
        if nodes:
            parent, key = nodes[pick % len(nodes)]
            parent[key] = value
        return doc

    return st.one_of(json_value, st.builds(replace, st.just(base), st.integers(0, 10**6),
                                           json_value))


def _node_call(method: str) -> Callable[[bytes], Any]:
    def call(data: bytes) -> Any:
        with tempfile.TemporaryDirectory() as tmp, \
                Node.open(Path(tmp) / "n", select_chain(CTREGTEST)) as node:
            return getattr(node, method)(data)
    return call


def _chain_file(data: bytes) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chain.dat"
        path.write_bytes(data)
        return ([len(b) for b in read_chain(path, NETWORK_MAGIC)],
                [r.offset for r in RecordReader(path, NETWORK_MAGIC, strict=True,
                                                skip=lambda head: len(head) % 2 == 0)])


def _lax_records(data: bytes, xor_key: bytes) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "blk00000.dat"
        path.write_bytes(data)
        records = RecordReader(path, NETWORK_MAGIC, strict=False, xor_key=xor_key)
        return [r.offset for r in records], records.skipped_bytes, records.bad_frames


def _record_file(data: bytes, offset: int, trailer: int) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rev00000.dat"
        path.write_bytes(data)
        records = RecordFile(path, NETWORK_MAGIC, trailer=trailer)
        try:
            return records.read(offset)
        finally:
            records.close()


def _txout(asset: Any, value: Any, nonce: Any, script: Any) -> TxOut:
    return TxOut(asset=asset, value=value, nonce=nonce, script_pubkey=script)


def _decode_parsed(data: bytes) -> Any:
    return decode_transaction(parse_transaction(data))


def _plan_hostile(data: bytes, spent: list[tuple[bytes, Any]]) -> Any:
    """plan_amounts of a real transaction against hostile spent outputs (assets, values)."""
    tx = parse_transaction(data)
    outs = [_SpentStub(a, v) for a, v in spent][:len(tx.inputs)]
    outs += [_SpentStub(b"\x01" * 32, 1)] * (len(tx.inputs) - len(outs))
    return plan_amounts(tx, 1, outs, POLICY_ASSET)


class _SpentStub:
    def __init__(self, asset: bytes, value: Any) -> None:
        self.asset = asset
        self.value = value


def _pay_hostile(amount: int, script: bytes, asset: bytes) -> Any:
    wallet = Wallet(REGTEST_SEED)
    wallet.scan_block(select_chain(CTREGTEST).genesis)
    return wallet.build_transaction([Payment(amount, script_pubkey=script, asset=asset)],
                                    fee=1000, height=1)


def _verify_input(script: bytes, items: list[bytes], script_sig: bytes, p2wsh: bool,
                  flags: int) -> Any:
    """One input spending ``script`` (as a P2WSH witness script, or as the scriptPubKey itself)
    with a hostile witness and scriptSig."""
    spk = b"\x00\x20" + hashes.sha256(script) if p2wsh else script
    witness = (*items, script) if p2wsh else tuple(items)
    spent = [TxOut(asset=POLICY_ASSET, value=9, script_pubkey=spk)]
    txin = TxIn(prevout_hash=bytes(32), prevout_index=0, script_sig=script_sig,
                script_witness=witness)
    tx = Transaction(version=2, inputs=(txin,), outputs=spent, locktime=0)
    pre = sighash.PrecomputedTransaction(tx, spent, bytes(32))
    return verify_input(pre, 0, flags, checker_for(pre, 0, flags))


def _eval_script(stack: list[bytes], script: bytes, flags: int, sigversion: SigVersion) -> Any:
    spent = [TxOut(asset=POLICY_ASSET, value=9, script_pubkey=b"\x51")]
    tx = Transaction(version=2, inputs=(TxIn(prevout_hash=bytes(32), prevout_index=0),),
                     outputs=spent, locktime=0)
    pre = sighash.PrecomputedTransaction(tx, spent, bytes(32))
    return eval_script(stack, script, flags, checker_for(pre, 0, flags), sigversion)


def _replay_chain_file(data: bytes) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chain.dat"
        path.write_bytes(data)
        source = ChainFileSource(path)
        return source.last_height(), [b.height for b in source.blocks(0)]


def _replay_blocks_dir(data: bytes, xor_key: bytes) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "blk00000.dat").write_bytes(data)
        (Path(tmp) / "xor.dat").write_bytes(xor_key)
        source = BlocksDirSource(tmp, select_chain(CTREGTEST).genesis_hash)
        return source.last_height(), [b.height for b in source.blocks(0)]


_RECORDS = [NETWORK_MAGIC + len(raw).to_bytes(4, "little") + raw
            for raw in (select_chain(CTREGTEST).genesis.serialize(), *_BLOCKS)]
_SCRIPT = st.lists(st.one_of(st.integers(0, 255).map(lambda b: bytes((b,))),
                             st.binary(max_size=3).map(lambda d: bytes((len(d),)) + d)),
                   max_size=30).map(b"".join)
_HEX = st.one_of(st.sampled_from(["00" * 32, "02" + "11" * 32, "ff" * 33, "0a" + "22" * 32,
                                  "08" + "33" * 32, "zz", ""]), st.binary(max_size=40).map(
                                      bytes.hex), json_value)


def _elements_offers() -> st.SearchStrategy[Any]:
    """The rust-dlc offer with an ``elements`` part of hostile fields (our chain's offers)."""
    path = FIXTURES / "dlc_rust_offer_contract.json"
    base = json.loads(path.read_text()) if path.exists() else {}
    change = st.fixed_dictionaries({k: _HEX for k in (
        "assetCommitment", "valueCommitment", "nonce", "rangeProof", "surjectionProof")})
    ext = st.fixed_dictionaries({"asset": _HEX, "confidentialFunding": st.booleans(),
                                 "blindingSeed": _HEX, "payoutBlindingPubkey": _HEX,
                                 "change": st.one_of(change, json_value)})
    return st.builds(lambda doc, e: {**doc, "elements": e}, st.just(base),
                     st.one_of(ext, json_value))


# Valid addresses and keys of every kind (base58, blinded base58, bech32/bech32m, blech32/blech32m,
# WIF) with one character replaced, cut short or extended, beside arbitrary text.
_ADDRESSES = [
    "2doncj41FX6LahE2aspuLuQcnmgrLtfvvma", "XRi7BgK9vECPqsiixhcMKM4v4ydR627gJf",
    "cQ1PxVTn5J3qCzUqXzpNeHiPVxZcwwaJkFmZcokescXwmHWAdBoe",
    "CTEwfNgibJrvbS6JsqznQ3SHhpyLdkXEeb3TsdnnBDYmVHH2EyEtEtsyvZ6TbWX78iNRuyBsnVbEx71T",
    "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
    "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
    eaddress.blech32_encode("el", 0, bytes([2]) + bytes(range(32)) + bytes(20)),
    eaddress.blech32_encode("el", 1, bytes([3]) + bytes(range(32)) + bytes(range(32))),
]
_address_text = st.one_of(
    st.text(max_size=120),
    st.builds(lambda a, i, c: a[:i] + c + a[i + 1:], st.sampled_from(_ADDRESSES),
              st.integers(0, 120), st.sampled_from(list("1qpzQPZ0Il O\x00é"))),
    st.builds(lambda a, n: a[:n], st.sampled_from(_ADDRESSES), st.integers(0, 120)),
    st.builds(lambda a, t: a + t, st.sampled_from(_ADDRESSES), st.text(max_size=4)))
_address_params = st.sampled_from([eaddress.BITCOIN_MAIN, eaddress.BITCOIN_REGTEST,
                                   ELEMENTS_REGTEST_ADDRESSES])


def _check_block(data: bytes) -> Any:
    block = parse_block(data)
    return block.compute_merkle_root(), block.check_witness_commitment(), block.weight


ENTRY_POINTS: list[tuple[str, Callable[..., Any], tuple[st.SearchStrategy[Any], ...]]] = [
    # --- parser and model ----------------------------------------------------------------------
    ("parse_transaction", parse_transaction, (st.one_of(hostile, mutated(_TXS)),)),
    ("parse_block", parse_block, (st.one_of(hostile, mutated(_BLOCKS)),)),
    ("parse_block_header", parse_block_header, (st.one_of(hostile, mutated(_BLOCKS)),)),
    ("merkleblock.parse_proof", parse_proof, (st.one_of(hostile, mutated(_MERKLE_BLOCKS)),)),
    ("Transaction.from_hex", Transaction.from_hex, (st.text(max_size=40),)),
    ("TxOut.parse", TxOut.parse, (hostile,)),
    ("TxOut()", _txout, (st.one_of(sized(32, 33), hostile), st.one_of(big_int, point33),
                         st.one_of(point33, st.binary(max_size=2)), hostile)),
    ("TxIn()", lambda h, i, s: TxIn(prevout_hash=h, prevout_index=i, script_sig=s),
     (hostile, big_int, hostile)),
    ("decode_transaction", _decode_parsed, (mutated(_TXS),)),
    ("block checks", _check_block, (mutated(_BLOCKS),)),
    ("issuance_entropy", issuance_entropy, (hostile, big_int, hostile)),
    ("issuance_asset_id", issuance_asset_id, (hostile,)),
    ("reissuance_token_id", reissuance_token_id, (hostile, st.booleans())),
    ("script_to_asm", escript.script_to_asm, (hostile, st.booleans())),
    ("script_type", escript.script_type, (hostile,)),
    ("script_num_decode", escript.script_num_decode, (hostile, st.booleans(),
                                                      st.integers(0, 10))),
    ("script_num_encode", escript.script_num_encode, (big_int,)),
    ("compact_size", serialize.compact_size, (big_int,)),
    ("bigsize", serialize.bigsize, (big_int,)),
    ("sha256_midstate", hashes.sha256_midstate, (hostile,)),
    ("fast_merkle_root", hashes.fast_merkle_root, (st.lists(hostile, max_size=5),)),
    # --- secp256k1 and Pedersen ----------------------------------------------------------------
    ("Point.from_bytes", Point.from_bytes, (st.one_of(hostile, point33, sized(65)),)),
    ("Point.from_xonly", Point.from_xonly, (hostile,)),
    ("Point.from_packed", Point.from_packed, (hostile,)),
    ("decode_points", decode_points, (st.one_of(hostile, point33),
                                      st.sampled_from([KIND_COMPRESSED, KIND_PEDERSEN,
                                                       KIND_GENERATOR, KIND_XONLY, KIND_XQR]))),
    ("Scalar.from_bytes", Scalar.from_bytes, (hostile,)),
    ("ct.base_mul", ct.base_mul, (st.one_of(big_int, hostile),)),
    ("ct.mul", lambda s: ct.mul(s, G), (st.one_of(big_int, hostile),)),
    ("kernel.msm_var", _k.msm_var, (hostile, hostile)),
    ("kernel.scalar_batch_inverse", _k.scalar_batch_inverse, (hostile,)),
    ("kernel.scalar_vec_mul", _k.scalar_vec_mul, (hostile, hostile)),
    ("kernel.point_add_var", _k.point_add_var, (hostile, hostile)),
    ("kernel.subset_sums_var", _k.subset_sums_var,
     (hostile, st.lists(st.lists(st.integers(-3, 5), max_size=3), max_size=3))),
    ("Generator.parse", Generator.parse, (st.one_of(hostile, point33),)),
    ("Commitment.parse", Commitment.parse, (st.one_of(hostile, point33),)),
    ("commit", lambda v, b: commit(v, b, H_GENERATOR), (big_int, st.one_of(big_int, hostile))),
    ("generator_generate", generator_generate, (hostile,)),
    ("generator_generate_blinded", generator_generate_blinded, (hostile, hostile)),
    # --- proofs ----------------------------------------------------------------------------------
    ("bulletproofs.verify", lambda p, c, g, e: verify(p, [c], g, e, 64, GENS),
     (st.one_of(hostile, mutated([_PROOF])), st.one_of(point33, st.just(_COMMIT)),
      st.one_of(point33, st.just(_HG)), st.one_of(st.none(), hostile))),
    ("bulletproofs.range_proof_claim",
     lambda p, n: range_proof_claim(p, [_COMMIT], _HG, None, n, GENS),
     (mutated([_PROOF]), st.sampled_from([1, 2, 8, 32, 64, 65, 0, -1]))),
    ("bulletproofs.prove", lambda v, b, n, nb: prove([v], [b], H_GENERATOR, n, nbits=nb,
                                                     gens=GENS),
     (big_int, st.one_of(big_int, hostile), hostile, st.sampled_from([8, 64, 3, 0, 128]))),
    ("bulletproofs.rewind_output", lambda p, c, g, n: rewind_output(p, c, g, n, b""),
     (mutated([_PROOF]), point33, point33, hostile)),
    ("SurjectionProof.parse", SurjectionProof.parse, (hostile,)),
    ("surjection.verify_bytes", lambda p: verify_bytes(p, [H_GENERATOR], H_GENERATOR),
     (hostile,)),
    ("borromean.info", borromean.info, (st.one_of(hostile, mutated(_BORROMEAN)),)),
    ("borromean.parse", borromean.parse, (st.one_of(hostile, mutated(_BORROMEAN)),)),
    ("borromean.verify", lambda p, c, g, e: borromean.verify(p, c, g, e),
     (st.one_of(hostile, mutated(_BORROMEAN)), point33, point33, hostile)),
    ("borromean.verify_many", lambda p, c, g: borromean.verify_many(
        [borromean.RangeProofClaim(p, c, g, b"")], threads=1),
     (st.one_of(hostile, mutated(_BORROMEAN)), point33, point33)),
    ("borromean.rewind", lambda p, c, g, n: borromean.rewind(p, c, g, b"", n),
     (st.one_of(hostile, mutated(_BORROMEAN)), point33, point33, hostile)),
    ("borromean.sign", lambda v, b, n, m, e, mb: borromean.sign(
        v, b, n, H_GENERATOR, min_value=m, exp=e, min_bits=mb),
     (big_int, hostile, hostile, big_int, st.integers(-2, 20), st.integers(-2, 70))),
    ("surjection.generate", lambda a, b, o, ob, seed: surjection.generate(
        input_assets=a, input_blinds=b, input_generators=[H_GENERATOR] * len(a), output_asset=o,
        output_blind=ob, seed=seed),
     (st.lists(hostile, max_size=3), st.lists(hostile, max_size=3), hostile, hostile, hostile)),
    ("surjection.serialized_size", surjection.serialized_size, (big_int, big_int)),
    # --- script, DLC -----------------------------------------------------------------------------
    ("script_ops", escript.script_ops, (hostile,)),
    ("witness_program", escript.witness_program, (hostile,)),
    ("segwit_v0_sighash", lambda t, i, a, h: sighash.segwit_v0_sighash(
        sighash.PrecomputedTransaction(parse_transaction(t)), i, b"", a, h),
     (st.sampled_from(_TXS), big_int, st.one_of(big_int, point33), big_int)),
    ("taproot_sighash", lambda t, i, h, g: sighash.taproot_sighash(
        sighash.PrecomputedTransaction(parse_transaction(t), None, g), i, h),
     (st.sampled_from(_TXS), big_int, big_int, st.one_of(st.none(), hostile))),
    ("legacy_sighash", lambda t, i, h: sighash.legacy_sighash(parse_transaction(t), i, b"", h),
     (st.sampled_from(_TXS), big_int, big_int)),
    ("ecdsa_adaptor.encrypt", lambda k, m: ecdsa_adaptor.encrypt(k, G, m, deterministic=True),
     (st.one_of(hostile, sized(32)), hostile)),
    ("ecdsa_adaptor.decrypt", lambda sig, k: ecdsa_adaptor.decrypt(
        ecdsa_adaptor.AdaptorSignature.from_bytes(sig), k), (sized(162), st.one_of(hostile,
                                                                                  big_int))),
    ("OracleAttestation.verify", lambda e, k, sigs, outs: OracleAttestation(
        e, k, tuple(sigs), tuple(outs)).verify(),
     (st.text(max_size=8), hostile, st.lists(hostile, max_size=3),
      st.lists(st.text(max_size=3), max_size=3))),
    ("ControlBlock.parse", taproot.ControlBlock.parse, (hostile,)),
    ("taproot.output_key", taproot.output_key, (hostile, st.one_of(st.none(), hostile))),
    ("taproot.check_tweak", taproot.check_tweak, (hostile, st.integers(-1, 3), hostile,
                                                  st.one_of(st.none(), hostile))),
    ("AdaptorSignature.from_bytes", ecdsa_adaptor.AdaptorSignature.from_bytes,
     (st.one_of(hostile, sized(162)),)),
    ("der_decode", ecdsa_adaptor.der_decode, (hostile,)),
    ("bip340.verify", bip340.verify, (hostile, hostile, hostile)),
    ("dlc.parse_offer", messages.parse_offer, (_offer_mutants(),)),
    ("dlc.validate_offer", lambda doc: validate_offer(messages.parse_offer(doc)),
     (_offer_mutants(),)),
    ("dlc.parse_announcement", messages.parse_announcement, (json_value,)),
    ("dlc.parse_contract_info", messages.parse_contract_info, (json_value,)),
    ("dlc.parse_offer (elements)", messages.parse_offer, (_elements_offers(),)),
    ("dlc.parse_accept", messages.parse_accept, (json_value,)),
    ("dlc.parse_sign", messages.parse_sign, (json_value,)),
    ("dlc.parse_attestation", messages.parse_attestation, (json_value,)),
    ("dlc.parse_offered_contract", messages.parse_offered_contract, (json_value,)),
    ("verify_input", _verify_input, (_SCRIPT, st.lists(hostile, max_size=4), hostile,
                                     st.booleans(), st.sampled_from([0, BLOCK, STANDARD]))),
    ("eval_script", _eval_script, (st.lists(hostile, max_size=4), _SCRIPT,
                                   st.sampled_from([0, BLOCK, STANDARD]),
                                   st.sampled_from(list(SigVersion)))),
    ("batch.Claim", lambda fs, fp: Claim(label=0, base=None, free_scalars=fs, free_points=fp),
     (hostile, hostile)),
    # --- validator, regtest ----------------------------------------------------------------------
    ("Node.submit_block", _node_call("submit_block"), (st.one_of(hostile, mutated(_BLOCKS)),)),
    ("Node.accept_transaction", _node_call("accept_transaction"),
     (st.one_of(hostile, mutated(_TXS)),)),
    ("blech32_decode", eaddress.blech32_decode, (st.text(max_size=6), _address_text)),
    ("decode_destination", eaddress.decode_destination, (_address_text, _address_params)),
    ("decode_secret", eaddress.decode_secret, (_address_text, _address_params)),
    ("base58check_decode", eaddress.base58check_decode, (_address_text, st.integers(0, 80))),
    ("encode_destination", eaddress.encode_destination,
     (st.one_of(hostile, sized(22, 23, 25, 34)), _address_params,
      st.one_of(st.none(), hostile, point33))),
    ("encode_secret", lambda k, p, c: eaddress.encode_secret(k, p, compressed=c),
     (st.one_of(hostile, sized(32)), _address_params, st.booleans())),
    ("p2wpkh_script", p2wpkh_script, (hostile,)),
    ("read_chain", _chain_file, (st.one_of(hostile, mutated(_BLOCKS)),)),
    ("RecordReader (lax)", _lax_records,
     (st.one_of(hostile, mutated(_RECORDS)), st.one_of(sized(8), st.just(bytes(8)), hostile))),
    ("RecordFile.read", _record_file,
     (st.one_of(hostile, mutated(_RECORDS)), st.integers(-10, 10**6), st.integers(0, 40))),
    ("Outpoint()", Outpoint, (hostile, big_int)),
    ("Outpoint.from_key", Outpoint.from_key, (hostile,)),
    ("UtxoEntry()", UtxoEntry, (big_int, st.booleans(), hostile)),
    ("UtxoEntry.decode", UtxoEntry.decode, (hostile,)),
    ("decode_txout", decode_txout, (st.one_of(hostile, mutated(_TXS)),)),
    ("replay ChainFileSource", _replay_chain_file, (st.one_of(hostile, mutated(_RECORDS)),)),
    ("replay BlocksDirSource", _replay_blocks_dir,
     (st.one_of(hostile, mutated(_RECORDS)), st.one_of(sized(8), st.just(bytes(8)), hostile))),
    ("check_transaction", lambda t: check_transaction(parse_transaction(t)), (mutated(_TXS),)),
    ("plan_amounts", _plan_hostile, (st.sampled_from(_TXS), st.lists(
        st.tuples(st.one_of(sized(32, 33), point33), st.one_of(big_int, point33)), max_size=4))),
    ("audit_transactions", lambda t: audit_transactions([parse_transaction(t)], {},
                                                        POLICY_ASSET, threads=1),
     (mutated(_TXS),)),
    ("Wallet.build_transaction", _pay_hostile, (big_int, hostile, st.one_of(sized(32), hostile))),
]


@pytest.mark.parametrize(("name", "function", "strategies"), ENTRY_POINTS,
                         ids=[e[0] for e in ENTRY_POINTS])
def test_only_typed_errors_escape(name: str, function: Callable[..., Any],
                                  strategies: tuple[st.SearchStrategy[Any], ...]) -> None:
    examples = 10 if name.startswith(("Node.", "bulletproofs.prove")) else 40

    @settings(max_examples=max(5, int(examples * SLOW_SCALE)), deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.tuples(*strategies))
    def run(args: tuple[Any, ...]) -> None:
        try:
            function(*args)
        except CtpluginError as exc:
            # machine-readable: a reason string (parse, encoding, proof, validation, DLC
            # errors) or an error code (ScriptError); wallet and store errors are typed only
            if isinstance(exc, ParseError | EncodingError | ProofError | ValidationError
                          | DlcError):
                assert isinstance(exc.reason, str) and exc.reason, type(exc).__name__

    run()


def test_every_layer_is_driven() -> None:
    """The table covers the library's parser, engine, proofs, script and DLC packages, the
    validator's node and store, the regtest wallet and chain files and replay's sources."""
    modules = {f.__module__.split(".")[0] for _, f, _ in ENTRY_POINTS if hasattr(f, "__module__")}
    assert {"ctplugin", "regtest", "validator"} <= modules
    assert any(name.startswith("Node.") for name, _, _ in ENTRY_POINTS)
    assert isinstance(Block, type)
