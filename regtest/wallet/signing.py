"""The wallet's signatures: P2WPKH with ECDSA, P2TR key path with BIP340, P2WSH
multisig partial signatures, tapscript leaves.

Digests are ``ctplugin.script.sighash``'s (Elements' segwit v0 and taproot algorithms, the
taproot one committing to the chain's genesis hash); secrets only meet libsecp256k1 through
``ctplugin.secp256k1.ct`` (RFC6979 ECDSA with low S, BIP340 with auxiliary randomness, the
BIP341 key tweak). A transaction is signed after it is complete — outputs blinded and proven,
issuance proofs attached — since taproot digests commit to the output witnesses and issuance
proofs; the signatures go in the inputs' script witnesses, so the txid does not change.

- ``sign_transaction(tx, spent, keys, genesis_hash, aux, only=None)``: every input (or the
  ``only`` ones) the key chain owns
  (P2WPKH: witness ``[sig‖01, pubkey]``; P2SH-P2WPKH: the same witness and a scriptSig pushing
  the P2WPKH redeem script; P2PKH: scriptSig ``<sig‖01> <pubkey>`` with Elements' legacy
  digest; P2TR: ``[sig]`` with SIGHASH_DEFAULT); bare ``OP_TRUE`` inputs need nothing; any
  other input is a ``SigningError``.
- ``witness_template(script_pubkey)`` / ``script_sig_template(script_pubkey)``: a witness and a
  scriptSig of the sizes signing will give (fee estimates).
- ``sign_multisig_input`` / ``finalize_multisig``: one party's signature of a P2WSH m-of-n
  input, and the witness once enough parties signed (the dummy, then signatures in key order).
- ``sign_tapscript_input``: a BIP342 signature of a tapscript leaf.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace

from ctplugin.elements import Transaction
from ctplugin.elements.script import push_data
from ctplugin.errors import CtpluginError
from ctplugin.hashes import hash160
from ctplugin.script.interpreter import p2wpkh_script_code
from ctplugin.script.sighash import (
    SIGHASH_ALL,
    SIGHASH_DEFAULT,
    PrecomputedTransaction,
    SpentOutput,
    legacy_sighash,
    segwit_v0_sighash,
    taproot_sighash,
)
from ctplugin.script.taproot import leaf_hash, tweak_hash
from ctplugin.secp256k1 import ct, libsecp
from regtest.wallet.keys import (
    P2PKH,
    P2SH_P2WPKH,
    P2TR,
    P2WPKH,
    KeyChain,
    MultisigScript,
    multisig_parts,
    p2wpkh_script,
)

AuxRandom = Callable[[], bytes]
"""32 fresh bytes per BIP340 signature (the wallet's deterministic stream in tests)."""

_DER_PLACEHOLDER = b"\x30" + b"\x00" * 70 + b"\x01"  # 72 bytes: the largest low-S signature
_OP_TRUE = b"\x51"


class SigningError(CtpluginError):
    """An input the wallet cannot sign (not its key, an unsupported script, a bad request)."""


def sign_transaction(tx: Transaction, spent: Sequence[SpentOutput], keys: KeyChain,
                     genesis_hash: bytes, aux: AuxRandom,
                     only: Collection[int] | None = None) -> Transaction:
    """``tx`` with every input signed (see the module docstring); ``spent[i]`` is the output
    input i spends. ``only``: sign just these input indices (a transaction with another
    party's inputs, such as a DLC funding transaction)."""
    if len(spent) != len(tx.inputs):
        raise SigningError("one spent output per input is needed")
    pre = PrecomputedTransaction(tx, spent, genesis_hash)
    inputs = list(tx.inputs)
    for n, prev in enumerate(spent):
        if only is not None and n not in only:
            continue
        script = prev.script_pubkey
        if script == _OP_TRUE:
            continue
        pair = keys.owner_of(script)
        if pair is None:
            owned = keys.multisig_of(script)
            if owned is None:
                raise SigningError(f"input {n} spends a script this wallet does not own")
            multisig_sig, multisig_witness = _sign_multisig(pre, n, owned)
            inputs[n] = replace(inputs[n], script_sig=multisig_sig,
                                script_witness=multisig_witness)
            continue
        script_sig = b""
        if pair.kind in (P2WPKH, P2SH_P2WPKH):
            code = p2wpkh_script_code(hash160(pair.pubkey))
            digest = segwit_v0_sighash(pre, n, code, prev.value, SIGHASH_ALL, rangeproof=True)
            witness: tuple[bytes, ...] = (ct.ecdsa_sign(pair.secret, digest) + b"\x01",
                                          pair.pubkey)
            if pair.kind == P2SH_P2WPKH:
                script_sig = _push(p2wpkh_script(pair.pubkey))
        elif pair.kind == P2PKH:
            digest = legacy_sighash(tx, n, script, SIGHASH_ALL)
            script_sig = (_push(ct.ecdsa_sign(pair.secret, digest) + b"\x01")
                          + _push(pair.pubkey))
            witness = ()
        elif pair.kind == P2TR:
            xonly = pair.pubkey[1:]
            secret = ct.taproot_tweak_secret(pair.secret, tweak_hash(xonly, None))
            digest = taproot_sighash(pre, n, SIGHASH_DEFAULT)
            witness = (ct.schnorr_sign(secret, digest, aux()),)
        else:  # pragma: no cover - KeyPair kinds are the two above
            raise SigningError(f"unknown key kind {pair.kind}")
        inputs[n] = replace(inputs[n], script_sig=script_sig, script_witness=witness)
    return replace(tx, inputs=tuple(inputs))


def _push(data: bytes) -> bytes:
    return push_data(data)


def _sign_multisig(pre: PrecomputedTransaction, n: int, owned: MultisigScript
                   ) -> tuple[bytes, tuple[bytes, ...]]:
    """(scriptSig, witness) of an m-of-n input the wallet holds every key of: the first m
    keys sign (CHECKMULTISIG's order), after the dummy element."""
    if owned.witness:
        parts = multisig_parts(owned.multisig)
        assert parts is not None  # add_multisig checked it
        signatures = {pubkey: sign_multisig_input(pre, n, owned.multisig, secret)
                      for pubkey, secret in zip(parts[1], owned.secrets)}
        witness = finalize_multisig(owned.multisig, signatures)
        assert witness is not None  # every key signed
        script_sig = _push(owned.redeem_script) if owned.redeem_script is not None else b""
        return script_sig, witness
    digest = legacy_sighash(pre.tx, n, owned.multisig, SIGHASH_ALL)
    legacy = [ct.ecdsa_sign(secret, digest) + b"\x01" for secret in owned.secrets[:owned.required]]
    return b"\x00" + b"".join(_push(sig) for sig in legacy) + _push(owned.multisig), ()


def multisig_templates(owned: MultisigScript) -> tuple[bytes, tuple[bytes, ...]]:
    """(scriptSig, witness) of the sizes ``_sign_multisig`` gives (fee estimation)."""
    signatures = [_DER_PLACEHOLDER] * owned.required
    if owned.witness:
        script_sig = _push(owned.redeem_script) if owned.redeem_script is not None else b""
        return script_sig, (b"", *signatures, owned.multisig)
    return b"\x00" + b"".join(_push(s) for s in signatures) + _push(owned.multisig), ()


def witness_template(script_pubkey: bytes) -> tuple[bytes, ...]:
    """A witness of the size ``sign_transaction`` puts on an input spending this script (the
    largest DER signature for P2WPKH), for fee estimation."""
    if script_pubkey == _OP_TRUE or _is_p2pkh(script_pubkey):
        return ()
    if (len(script_pubkey) == 22 and script_pubkey[:2] == b"\x00\x14") or _is_p2sh(script_pubkey):
        return (_DER_PLACEHOLDER, bytes(33))
    if len(script_pubkey) == 34 and script_pubkey[:2] == b"\x51\x20":
        return (bytes(64),)
    raise SigningError("the wallet signs only P2WPKH, P2SH-P2WPKH, P2PKH, P2TR and OP_TRUE "
                       "inputs")


def script_sig_template(script_pubkey: bytes) -> bytes:
    """A scriptSig of the size ``sign_transaction`` gives an input spending this script."""
    if _is_p2pkh(script_pubkey):
        return _push(_DER_PLACEHOLDER) + _push(bytes(33))
    if _is_p2sh(script_pubkey):  # the wallet's P2SH outputs are P2SH-P2WPKH
        return _push(bytes(22))
    return b""


def _is_p2pkh(script: bytes) -> bool:
    return len(script) == 25 and script[:3] == b"\x76\xa9\x14" and script[23:] == b"\x88\xac"


def _is_p2sh(script: bytes) -> bool:
    return len(script) == 23 and script[:2] == b"\xa9\x14" and script[22] == 0x87


# --- P2WSH multisig ----------------------------------------------------------------------------

def multisig_keys(witness_script: bytes) -> tuple[int, list[bytes]]:
    """(m, keys) of a bare ``OP_m <key>… OP_n OP_CHECKMULTISIG`` witness script of compressed
    keys (``keys.multisig_parts``); ``SigningError`` for any other script."""
    parts = multisig_parts(witness_script)
    if parts is None:
        raise SigningError("not an m-of-n CHECKMULTISIG script of compressed keys")
    return parts


def sign_multisig_input(pre: PrecomputedTransaction, index: int, witness_script: bytes,
                        secret: int, hash_type: int = SIGHASH_ALL) -> bytes:
    """One party's signature (DER ‖ hash type) of input ``index`` spending a P2WSH multisig
    output; ``pre.spent`` must hold the spent outputs (their amounts are signed)."""
    _, keys = multisig_keys(witness_script)
    if ct.base_mul(secret).to_bytes() not in keys:
        raise SigningError("this key is not one of the script's keys")
    if pre.spent is None:
        raise SigningError("the spent outputs are needed to sign")
    digest = segwit_v0_sighash(pre, index, witness_script, pre.spent[index].value, hash_type,
                               rangeproof=True)
    return ct.ecdsa_sign(secret, digest) + bytes((hash_type,))


def combine_multisig_witness(pre: PrecomputedTransaction, index: int, witness_script: bytes,
                             witness: Sequence[bytes], secrets: Mapping[bytes, int]
                             ) -> tuple[tuple[bytes, ...], bool]:
    """Input ``index``'s P2WSH multisig witness with this party's signatures added to those it
    already carries (another party's, from an earlier signrawtransactionwithwallet), and
    whether it is complete. As Core's SignStep / DataFromTransaction (src/script/sign.cpp): a
    carried signature counts when it verifies under one of the script's keys; an incomplete
    witness is ``[<empty>, sig…, <empty>…, witness_script]`` with empty placeholders up to
    m signatures. ``secrets``: public key → secret of the keys this party holds."""
    m, keys = multisig_keys(witness_script)
    if pre.spent is None:
        raise SigningError("the spent outputs are needed to sign")
    digest = segwit_v0_sighash(pre, index, witness_script, pre.spent[index].value,
                               SIGHASH_ALL, rangeproof=True)
    signatures: dict[bytes, bytes] = {}
    carried = [w for w in witness[1:-1] if w] if witness and witness[-1] == witness_script \
        else []
    for sig in carried:
        for key in keys:
            if key not in signatures and libsecp.ecdsa_verify(key, sig[:-1], digest):
                signatures[key] = sig
                break
    for key in keys:
        secret = secrets.get(key)
        if secret is not None and key not in signatures:
            signatures[key] = sign_multisig_input(pre, index, witness_script, secret)
    complete = finalize_multisig(witness_script, signatures)
    if complete is not None:
        return complete, True
    chosen = [signatures[k] for k in keys if k in signatures]
    return (b"", *chosen, *([b""] * (m - len(chosen))), witness_script), False


def finalize_multisig(witness_script: bytes, signatures: Mapping[bytes, bytes]
                      ) -> tuple[bytes, ...] | None:
    """The P2WSH witness ``[<empty>, sig…, witness_script]`` from partial signatures (public
    key → signature), taking the first m in the script's key order; None until m parties
    signed."""
    m, keys = multisig_keys(witness_script)
    chosen = [signatures[k] for k in keys if k in signatures][:m]
    if len(chosen) < m:
        return None
    return (b"", *chosen, witness_script)


# --- tapscript ---------------------------------------------------------------------------------

def sign_tapscript_input(pre: PrecomputedTransaction, index: int, leaf_script: bytes,
                         secret: int, aux: bytes, hash_type: int = SIGHASH_DEFAULT,
                         leaf_version: int = 0xC4) -> bytes:
    """A BIP342 signature by ``secret`` (untweaked: leaf keys are plain x-only keys) of input
    ``index`` spending ``leaf_script``; 64 bytes, or 65 with a non-default hash type."""
    digest = taproot_sighash(pre, index, hash_type,
                             leaf_hash=leaf_hash(leaf_script, leaf_version))
    sig = ct.schnorr_sign(secret, digest, aux)
    return sig + (bytes((hash_type,)) if hash_type != SIGHASH_DEFAULT else b"")
