"""Rangeproofs the way Elements and Liquid use them (``docs/borromean.md`` §2-3).

- Outputs: gen = the output's asset commitment (or ``generator_generate(asset id)`` for an
  explicit asset), extra commit = the raw scriptPubKey, message = asset tag (32 bytes, as
  serialized) ‖ asset blinding factor; the wallet signs with min_value 1 (0 for unspendable
  scripts), exp 0 and 52 bits (``-ct_exponent``, ``-ct_bits``).
- Rewind nonce of an output: SHA256(SHA256(ser33(blinding_key·ephemeral_pubkey))), the inner
  hash being libsecp256k1's default ECDH hash and ``ephemeral_pubkey`` the output's nNonce.
- Issuances: gen = ``generator_generate(asset or token id)``, empty extra commit, min 0 (an
  empty script is unspendable in Elements mode), message = asset id ‖ 32 zero bytes (issuances
  are not asset-blinded; Elements ``blind.cpp`` GenerateRangeproof); the issuance blinding key
  itself is the rewind nonce.
- "Blind value proofs" (PSET): exact proofs of an output's value, no message, no extra commit.

The consensus rules around the proofs (which outputs carry one, min_value > 0 unless
unspendable) are the validator's; these are the proof-level operations.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import coincurve

from ctplugin.borromean.format import U64_MAX
from ctplugin.borromean.rewind import rewind, rewind_known_valid
from ctplugin.borromean.sign import SignedRangeProof, sign, sign_with_ring_points
from ctplugin.borromean.verify import RangeProofClaim, verify
from ctplugin.elements.issuance import input_issuance_ids
from ctplugin.elements.model import Transaction
from ctplugin.errors import EncodingError
from ctplugin.pedersen import Commitment, Generator, generator_generate, generator_generate_blinded

DEFAULT_MIN_VALUE = 1
DEFAULT_EXP = 0
DEFAULT_MIN_BITS = 52
"""Elements' wallet defaults (``-ct_exponent`` 0, ``-ct_bits`` 52 since 2020)."""


def ecdh_nonce(blinding_key: bytes, ephemeral_pubkey: bytes) -> bytes:
    """The rewind nonce of an output: SHA256(SHA256(compressed(blinding_key·ephemeral))).

    (wally's ``ecdh_nonce_hash``; constant time in the key through coincurve.)
    """
    try:
        shared = coincurve.PublicKey(bytes(ephemeral_pubkey)).multiply(bytes(blinding_key))
    except (ValueError, TypeError) as exc:
        raise EncodingError(f"ECDH nonce: {exc}", reason="ecdh") from None
    return hashlib.sha256(hashlib.sha256(shared.format(compressed=True)).digest()).digest()


@dataclass(frozen=True, slots=True)
class UnblindedOutput:
    """An output's secrets: value, asset tag (serialized byte order), and both blinding factors."""

    value: int
    asset: bytes
    asset_blind: bytes
    value_blind: bytes


def unblind_with_nonce(nonce: bytes, proof: bytes, value_commitment: bytes,
                       asset_commitment: bytes, script_pubkey: bytes, *,
                       known_valid: bool = False) -> UnblindedOutput | None:
    """Rewind an output's proof with its nonce and check the asset commitment it reveals
    (wally's ``asset_unblind_with_nonce``): None unless the proof verifies, the nonce opens
    it, it carries a 64-byte message and generator_generate_blinded(asset, abf) matches.

    ``known_valid``: the caller knows the proof verifies (a transaction the node accepted), so
    it is not verified again (``rewind_known_valid``; the openings are still checked)."""
    if known_valid:
        result = rewind_known_valid(proof, value_commitment, asset_commitment, script_pubkey,
                                    nonce, message_len=64)
    else:
        result = rewind(proof, value_commitment, asset_commitment, script_pubkey, nonce)
    if result is None or len(result.message) < 64:
        return None
    asset, abf = result.message[:32], result.message[32:64]
    try:
        if generator_generate_blinded(asset, abf).serialize() != bytes(asset_commitment):
            return None
    except EncodingError:
        return None
    return UnblindedOutput(result.value, asset, abf, result.blind)


def unblind_output(blinding_key: bytes, ephemeral_pubkey: bytes, proof: bytes,
                   value_commitment: bytes, asset_commitment: bytes,
                   script_pubkey: bytes) -> UnblindedOutput | None:
    """``unblind_with_nonce`` with the ECDH nonce of the receiver's blinding key and the
    output's nNonce (wally's ``asset_unblind``)."""
    return unblind_with_nonce(ecdh_nonce(blinding_key, ephemeral_pubkey), proof,
                              value_commitment, asset_commitment, script_pubkey)


def output_rangeproof(value: int, nonce: bytes, asset: bytes, asset_blind: bytes,
                      value_blind: bytes, value_commitment: Commitment,
                      asset_commitment: Generator, script_pubkey: bytes, *,
                      min_value: int = DEFAULT_MIN_VALUE, exp: int = DEFAULT_EXP,
                      min_bits: int = DEFAULT_MIN_BITS) -> bytes:
    """An output's proof as Elements' wallet makes it (wally's ``asset_rangeproof_with_nonce``):
    message asset ‖ abf, extra commit = scriptPubKey, gen = the asset commitment."""
    return output_rangeproof_with_ring_points(
        value, nonce, asset, asset_blind, value_blind, value_commitment, asset_commitment,
        script_pubkey, min_value=min_value, exp=exp, min_bits=min_bits).proof


def output_rangeproof_with_ring_points(
        value: int, nonce: bytes, asset: bytes, asset_blind: bytes, value_blind: bytes,
        value_commitment: Commitment, asset_commitment: Generator, script_pubkey: bytes, *,
        min_value: int = DEFAULT_MIN_VALUE, exp: int = DEFAULT_EXP,
        min_bits: int = DEFAULT_MIN_BITS) -> SignedRangeProof:
    """``output_rangeproof`` with the signer's ring points (``sign.SignedRangeProof``)."""
    return sign_with_ring_points(value, value_blind, nonce, asset_commitment,
                                 min_value=min_value, exp=exp, min_bits=min_bits,
                                 message=bytes(asset) + bytes(asset_blind),
                                 extra_commit=script_pubkey, commitment=value_commitment)


def issuance_generator(asset_id: bytes) -> Generator:
    """The value generator of an issuance amount or inflation-key amount: generator_generate
    of the asset or token id (32 bytes, internal byte order)."""
    return generator_generate(bytes(asset_id))


def issuance_rangeproof(value: int, blinding_key: bytes, value_blind: bytes,
                        commitment: Commitment, asset_id: bytes, *,
                        exp: int = DEFAULT_EXP, min_bits: int = DEFAULT_MIN_BITS) -> bytes:
    """An issuance's proof as Elements makes it: nonce = the issuance blinding key, no extra
    commit, message = asset id ‖ a zero asset blinder, min 0."""
    return sign(value, value_blind, blinding_key, issuance_generator(asset_id), min_value=0,
                exp=exp, min_bits=min_bits, message=bytes(asset_id) + bytes(32),
                commitment=commitment)


def blind_value_proof(value: int, nonce: bytes, value_blind: bytes, commitment: Commitment,
                      generator: Generator) -> bytes:
    """An exact-value ("explicit") proof that ``commitment`` holds ``value`` (73 bytes, or 65
    for value 0): wally's ``explicit_rangeproof``, Elements' ``CreateBlindValueProof``."""
    if not 0 <= value <= U64_MAX:
        raise EncodingError("value must fit in 64 bits", reason="value-range")
    return sign(value, value_blind, nonce, generator, min_value=value, exp=-1,
                commitment=commitment)


def verify_blind_value_proof(proof: bytes, value: int, commitment: Commitment | bytes,
                             generator: Generator | bytes) -> bool:
    """wally's ``explicit_rangeproof_verify``: an exact proof whose range is [value, value]."""
    result = verify(proof, commitment, generator)
    return result is not False and result == (value, value)


SITE_OUTPUT = "output"
SITE_ISSUANCE = "issuance"
SITE_INFLATION = "inflation"


@dataclass(frozen=True, slots=True)
class ProofSite:
    """Where a range proof sits in a transaction: an output (``index`` = output index) or an
    input's issuance amount / inflation keys (``index`` = input index)."""

    kind: str
    index: int

    def __str__(self) -> str:
        where = "output" if self.kind == SITE_OUTPUT else "input"
        what = "" if self.kind == SITE_OUTPUT else f" {self.kind}"
        return f"{where} {self.index}{what}"


def value_generator(asset: bytes) -> bytes:
    """The 33-byte generator a value commitment is checked against: the asset commitment
    (0a/0b) itself, or generator_generate(asset id) for an explicit asset (0x01 ‖ id)."""
    if len(asset) == 33 and asset[0] == 0x01:
        return generator_generate(asset[1:]).serialize()
    return bytes(asset)


def transaction_claims(tx: Transaction) -> list[tuple[ProofSite, RangeProofClaim]]:
    """Every range proof a transaction must carry, with what Elements verifies it against
    (``VerifyAmounts``): each blinded output value (gen from its asset, extra commit = its
    scriptPubKey) and each blinded issuance amount or inflation-key amount (gen =
    generator_generate(asset or token id), empty extra commit). Proofs that must be absent
    (explicit values) are not listed; the validator checks those."""
    claims = []
    for j, out in enumerate(tx.outputs):
        if isinstance(out.value, bytes):
            claims.append((ProofSite(SITE_OUTPUT, j),
                           RangeProofClaim(out.range_proof, out.value,
                                           value_generator(out.asset), out.script_pubkey)))
    for i, txin in enumerate(tx.inputs):
        ids = input_issuance_ids(txin)
        if txin.issuance is None or ids is None:
            continue
        for kind, amount, proof, key in (
                (SITE_ISSUANCE, txin.issuance.amount, txin.issuance_amount_rangeproof, ids.asset),
                (SITE_INFLATION, txin.issuance.inflation_keys, txin.inflation_keys_rangeproof,
                 ids.token)):
            if isinstance(amount, bytes):
                claims.append((ProofSite(kind, i),
                               RangeProofClaim(proof, amount, issuance_generator(key).serialize())))
    return claims
