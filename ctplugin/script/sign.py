"""Signing inputs with given keys and scripts, as Bitcoin Core's ``ProduceSignature`` does
(``script/sign.cpp``; Elements' digests: docs/sighash.md): what ``signrawtransactionwithkey``
needs.

- ``KeyStore``: secret keys (found by the hash160 of their public key) and scripts (found by
  hash160 for P2SH, by SHA256 for P2WSH), as Core's FlatSigningProvider;
- ``sign_input(pre, index, store, hash_type, aux)``: the input's (scriptSig, witness) after
  signing what the store can: P2PK, P2PKH, bare and nested multisig, P2SH, P2WPKH,
  P2SH-P2WPKH, P2WSH, P2SH-P2WSH, and taproot key-path spends (the untweaked key in the store,
  no script tree). Signatures already in the input are kept (a multisig input signed by one
  party is completed by the next, each signature checked against the keys: Core's
  ``DataFromTransaction``); an input that already verifies is left as it is.
- ``input_error(pre, index, flags)``: None when the input verifies, else Core's message
  (``SignTransaction``'s wording for a missing key or a missing multisig signature).

ECDSA signatures are RFC6979 with low S (``ctplugin.secp256k1.ct``); ``SIGHASH_DEFAULT`` is
``SIGHASH_ALL`` for them, as Core's signature creator makes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import coincurve

from ctplugin.elements import TxIn
from ctplugin.elements.script import push_data, script_ops
from ctplugin.hashes import hash160, sha256
from ctplugin.script.checker import checker_for
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.script.interpreter import p2wpkh_script_code, verify_input
from ctplugin.script.sighash import (
    SIGHASH_ALL,
    SIGHASH_DEFAULT,
    PrecomputedTransaction,
    legacy_sighash,
    segwit_v0_sighash,
    taproot_sighash,
)
from ctplugin.script.taproot import tweak_hash
from ctplugin.secp256k1 import ct

OP_0 = 0x00
OP_CHECKSIG = 0xAC
OP_CHECKMULTISIG = 0xAE
MISSING_KEY = "Unable to sign input, invalid stack size (possibly missing key)"
MORE_SIGNATURES = ("CHECK(MULTI)SIG failing with non-zero signature (possibly need more "
                   "signatures)")


@dataclass
class KeyStore:
    """Keys and scripts to sign with (module docstring)."""

    keys: dict[bytes, tuple[bytes, bytes]] = field(default_factory=dict)
    """hash160(pubkey) → (secret, serialized pubkey)."""
    scripts_h160: dict[bytes, bytes] = field(default_factory=dict)
    scripts_sha256: dict[bytes, bytes] = field(default_factory=dict)

    def add_key(self, secret: bytes, compressed: bool = True) -> bytes:
        """Add a secret key; returns its serialized public key."""
        pubkey = coincurve.PrivateKey(secret).public_key.format(compressed=compressed)
        self.keys[hash160(pubkey)] = (secret, pubkey)
        return pubkey

    def add_script(self, script: bytes) -> None:
        """A redeem or witness script, and its P2WSH program (for P2SH-P2WSH)."""
        self.scripts_h160[hash160(script)] = script
        self.scripts_sha256[sha256(script)] = script
        wrapped = b"\x00\x20" + sha256(script)
        self.scripts_h160[hash160(wrapped)] = wrapped

    def secret_for(self, pubkey: bytes) -> bytes | None:
        found = self.keys.get(hash160(pubkey))
        return found[0] if found is not None and found[1] == pubkey else None


class _Signer:
    """One input's signing, in Core's SignStep recursion."""

    def __init__(self, pre: PrecomputedTransaction, index: int, store: KeyStore,
                 hash_type: int, aux: Callable[[], bytes]) -> None:
        self.pre = pre
        self.index = index
        self.store = store
        self.hash_type = hash_type
        self.ecdsa_type = SIGHASH_ALL if hash_type == SIGHASH_DEFAULT else hash_type
        self.aux = aux
        assert pre.spent is not None
        self.amount = pre.spent[index].value

    def digest(self, script_code: bytes, witness_v0: bool, hash_type: int) -> bytes:
        if witness_v0:
            return segwit_v0_sighash(self.pre, self.index, script_code, self.amount, hash_type,
                                     rangeproof=True)
        return legacy_sighash(self.pre.tx, self.index, script_code, hash_type, rangeproof=True)

    def ecdsa(self, pubkey: bytes, script_code: bytes, witness_v0: bool) -> bytes | None:
        secret = self.store.secret_for(pubkey)
        if secret is None:
            return None
        digest = self.digest(script_code, witness_v0, self.ecdsa_type)
        return ct.ecdsa_sign(secret, digest) + bytes((self.ecdsa_type & 0xFF,))

    def signs(self, sig: bytes, pubkey: bytes, script_code: bytes, witness_v0: bool) -> bool:
        """An existing signature is ``pubkey``'s over this input (its own hash type)."""
        if len(sig) < 9:
            return False
        digest = self.digest(script_code, witness_v0, sig[-1])
        try:
            return bool(coincurve.PublicKey(pubkey).verify(sig[:-1], digest, hasher=None))
        except (ValueError, TypeError):
            return False

    def step(self, script: bytes, witness_v0: bool, existing: list[bytes]
             ) -> tuple[list[bytes], bool]:
        """(stack satisfying ``script``, complete?) — SignStep for the non-wrapping types."""
        ops = script_ops(script) or []
        if len(ops) == 2 and ops[1] == (OP_CHECKSIG, None) and ops[0][1] is not None:
            sig = self.ecdsa(ops[0][1], script, witness_v0)  # P2PK
            return ([sig], True) if sig is not None else ([], False)
        if (len(script) == 25 and script[:3] == b"\x76\xa9\x14"
                and script[23:] == b"\x88\xac"):
            found = self.store.keys.get(script[3:23])  # P2PKH
            if found is None:
                return [], False
            sig = self.ecdsa(found[1], script, witness_v0)
            assert sig is not None
            return [sig, found[1]], True
        if len(ops) >= 4 and ops[-1] == (OP_CHECKMULTISIG, None) \
                and 0x51 <= ops[0][0] <= 0x60:
            required = ops[0][0] - 0x50
            keys = [data for _, data in ops[1:-2] if data is not None]
            sigs: dict[bytes, bytes] = {}
            for item in existing:
                for key in keys:
                    if key not in sigs and self.signs(item, key, script, witness_v0):
                        sigs[key] = item
                        break
            for key in keys:
                if len(sigs) >= required:
                    break
                if key not in sigs:
                    sig = self.ecdsa(key, script, witness_v0)
                    if sig is not None:
                        sigs[key] = sig
            chosen = [sigs[k] for k in keys if k in sigs][:required]
            return [b"", *chosen], len(chosen) >= required
        return [], False

    def witness_step(self, program: bytes, existing: list[bytes]
                     ) -> tuple[tuple[bytes, ...], bool]:
        """(witness, complete?) of a v0 witness program."""
        if len(program) == 20:
            found = self.store.keys.get(program)
            if found is None:
                return (), False
            sig = self.ecdsa(found[1], p2wpkh_script_code(program), True)
            assert sig is not None
            return (sig, found[1]), True
        witness_script = self.store.scripts_sha256.get(program)
        if witness_script is None:
            return (), False
        stack, complete = self.step(witness_script, True, existing[1:-1])
        return (*stack, witness_script), complete

    def taproot(self, output_key: bytes) -> tuple[tuple[bytes, ...], bool]:
        """A key-path signature when a stored key tweaks (no script tree) to the output key
        and every spent output is known (taproot digests commit to them all)."""
        for secret, pubkey in self.store.keys.values():
            xonly = pubkey[1:] if len(pubkey) == 33 else b""
            if not xonly:
                continue
            tweaked = ct.taproot_tweak_secret(secret, tweak_hash(xonly, None))
            if ct.xonly_public_key(tweaked) != output_key:
                continue
            try:
                digest = taproot_sighash(self.pre, self.index, self.hash_type)
            except ScriptError:  # a hash type taproot does not define: left unsigned
                return (), False
            sig = ct.schnorr_sign(tweaked, digest, self.aux())
            if self.hash_type != SIGHASH_DEFAULT:
                sig += bytes((self.hash_type,))
            return (sig,), True
        return (), False


def _pushes(script_sig: bytes) -> list[bytes]:
    ops = script_ops(script_sig) or []
    return [data if data is not None else b"" for _, data in ops]


def sign_input(pre: PrecomputedTransaction, index: int, store: KeyStore, hash_type: int,
               aux: Callable[[], bytes], *, all_spent_known: bool = True
               ) -> tuple[bytes, tuple[bytes, ...]]:
    """The input's (scriptSig, witness) after signing (module docstring); ``pre.spent`` must
    be given: placeholders are fine for the other inputs of a v0 or legacy spend, but a
    taproot digest commits to every spent output, so with ``all_spent_known`` false a
    taproot input is left unsigned (Core signs taproot only with all spent outputs)."""
    assert pre.spent is not None
    txin = pre.tx.inputs[index]
    spk = pre.spent[index].script_pubkey
    signer = _Signer(pre, index, store, hash_type, aux)
    existing_sig = _pushes(txin.script_sig)
    existing_witness = list(txin.script_witness)
    if len(spk) == 23 and spk[:2] == b"\xa9\x14" and spk[22] == 0x87:
        redeem = store.scripts_h160.get(spk[2:22])
        if redeem is None:
            return txin.script_sig, txin.script_witness
        if len(redeem) in (22, 34) and redeem[0] == OP_0 and redeem[1] == len(redeem) - 2:
            witness, _ = signer.witness_step(redeem[2:], existing_witness)
            return push_data(redeem), witness
        stack, _ = signer.step(redeem, False, existing_sig[:-1])
        return b"".join(map(push_data, [*stack, redeem])), ()
    if len(spk) in (22, 34) and spk[0] == OP_0 and spk[1] == len(spk) - 2:
        witness, _ = signer.witness_step(spk[2:], existing_witness)
        return b"", witness
    if len(spk) == 34 and spk[:2] == b"\x51\x20":
        if not all_spent_known:
            return txin.script_sig, txin.script_witness
        witness, done = signer.taproot(spk[2:])
        return (b"", witness) if done else (txin.script_sig, txin.script_witness)
    stack, _ = signer.step(spk, False, existing_sig)
    return b"".join(map(push_data, stack)), ()


def input_error(pre: PrecomputedTransaction, index: int, flags: int) -> str | None:
    """None when input ``index`` verifies under ``flags``, else SignTransaction's message."""
    try:
        verify_input(pre, index, flags, checker_for(pre, index, flags))
    except ScriptError as exc:
        if exc.code is ScriptErrorCode.INVALID_STACK_OPERATION:
            return MISSING_KEY
        if exc.code is ScriptErrorCode.SIG_NULLFAIL:
            return MORE_SIGNATURES
        return str(exc.code.value)
    return None


def with_input(txin: TxIn, script_sig: bytes, witness: tuple[bytes, ...]) -> TxIn:
    return replace(txin, script_sig=script_sig, script_witness=witness)
