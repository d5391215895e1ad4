"""Scripts and signatures of transactions (docs/design.md §3): the stage of block connection and
mempool acceptance that runs every input script.

Every script Elements accepts is accepted: the full interpreter (``ctplugin.script``: legacy,
P2SH, segwit v0, taproot key and script path, Elements' tapscript opcodes) judges each input,
and every output script is valid in a block, as in Elements (which outputs the mempool relays
is the policy's: ``validator.policy``). For each transaction the stage

1. runs every input's script (``ctplugin.script.verify_input``) with a *deferring* checker: each
   BIP340 signature and each taproot script-path commitment becomes a batch item
   (``SchnorrItem``, ``TweakItem``: one claim each in the block's one multi-scalar
   multiplication), each ECDSA signature whose failure would fail its script an ``EcdsaItem``
   (P2PKH, P2SH, bare and P2SH-wrapped multisig, P2WPKH, P2WSH alike; verified with
   libsecp256k1, the signatures of a block spread over threads);
2. on a script failure, re-runs that input with an immediate checker to report Elements' exact
   error and — under the mempool's policy flags — re-runs it with the consensus flags only to
   tell ``non-mandatory-script-verify-flag (<error>)`` (policy) from
   ``mandatory-script-verify-flag-failed (<error>)`` (consensus), as Elements'
   CheckInputScripts does. The failure becomes a ``FailedInput`` item, so the verifier names
   culprits in Elements' order (a transaction's balance and range proofs before its scripts,
   earlier transactions first). A deferred item that turns out false reports its own consensus error
   (SCHNORR_SIG, WITNESS_PROGRAM_MISMATCH, EVAL_FALSE, CHECKSIGVERIFY...): signature validity
   never depends on policy flags.

Reject reasons: ``mandatory-script-verify-flag-failed (...)`` and ``non-mandatory-script-verify-flag
(...)`` with the transaction and input index; ``bad-txns-script-unsupported`` (ours) only where
the interpreter reports ``UNSUPPORTED`` (a Simplicity leaf, which we do not evaluate). Flags:
``ctplugin.script.flags.BLOCK`` in blocks, ``STANDARD`` in the mempool.

The script-execution cache (docs/design.md "Proof caches"): a salted key over the wtxid and
the flags (``validator.cachekeys.script_cache_key``), written when the mempool accepts a
transaction (under the block flags, as Elements' ConsensusScriptChecks caches with the block's
flags), consumed when a block connects it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

from ctplugin.batch import Claim, ClaimGroup
from ctplugin.bulletproofs import consensus_generators
from ctplugin.elements import Transaction
from ctplugin.errors import ValidationError
from ctplugin.script.batch import (
    KIND_COMPRESSED,
    SchnorrClaims,
    lift_many,
    output_key_encoding,
    tweak_claim,
)
from ctplugin.script.checker import DeferredChecks, SignatureChecker
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.script.flags import BLOCK, POLICY_ONLY, STANDARD
from ctplugin.script.interpreter import verify_input
from ctplugin.script.sighash import PrecomputedTransaction, SpentOutput
from ctplugin.secp256k1 import libsecp
from validator import reasons
from validator.items import (
    KIND_SCRIPT,
    Family,
    ItemLabel,
    Malformed,
    VerifyContext,
    claims_each,
)

UNSUPPORTED = reasons.BAD_TXNS_SCRIPT_UNSUPPORTED
BLOCK_FLAGS = int(BLOCK)
MIN_PARALLEL = 16  # ECDSA items below which a thread pool costs more than it saves
MEMPOOL_FLAGS = int(STANDARD)
# the items' ``family`` values (module globals: read per item, faster than Family.X)
_SCHNORR = Family.SCHNORR
_TWEAK = Family.TWEAK
_ECDSA = Family.ECDSA
_SCRIPT_FAILURE = Family.SCRIPT_FAILURE


# --- reject reasons ----------------------------------------------------------------------------

def script_reason(code: ScriptErrorCode, mandatory: bool = True) -> str:
    """Elements' reject reason for a script error (ours for what the interpreter does not
    evaluate: ``UNSUPPORTED``)."""
    if code is ScriptErrorCode.UNSUPPORTED:
        return UNSUPPORTED
    prefix = (reasons.MANDATORY_SCRIPT_VERIFY_FLAG_FAILED if mandatory
              else reasons.NON_MANDATORY_SCRIPT_VERIFY_FLAG)
    return f"{prefix} ({code.message})"


def _failure(code: ScriptErrorCode, label: ItemLabel, mandatory: bool = True,
             detail: str = "") -> ValidationError:
    return ValidationError(script_reason(code, mandatory), tx_index=label.tx_index,
                           input_index=label.index, detail=detail)


# --- items -------------------------------------------------------------------------------------

class SchnorrItem(NamedTuple):
    """A BIP340 signature of input ``label.index``: lifted R and P, key, message, signature."""

    label: ItemLabel
    r_point: bytes
    p_point: bytes
    pubkey: bytes
    msg: bytes
    sig: bytes

    @property
    def family(self) -> Family:
        return _SCHNORR

    def at_tx(self, tx_index: int) -> SchnorrItem:
        return self._replace(label=self.label._replace(tx_index=tx_index))


    def claim(self, ctx: VerifyContext) -> Claim | ClaimGroup:
        return SchnorrItem.claims([self], ctx)[0][0]

    @classmethod
    def claims(cls, items: Sequence[SchnorrItem], ctx: VerifyContext
               ) -> tuple[list[Claim | ClaimGroup], Malformed]:
        """Every signature of the batch as ONE group (``SchnorrClaims``: the kernel weighs
        them together; nothing is malformed here, the deterministic checks were made when the
        items were)."""
        if not items:
            return [], []
        group = SchnorrClaims(consensus_generators().fixed, [i.label for i in items],
                              b"".join(i.r_point + i.p_point for i in items),
                              [i.pubkey for i in items], [i.msg for i in items],
                              [i.sig for i in items])
        return [group], []

    def failure(self) -> ValidationError:
        return _failure(ScriptErrorCode.SCHNORR_SIG, self.label)


class TweakItem(NamedTuple):
    """A script-path spend's commitment Q = P + t·G (Q and P lifted, t < n)."""

    label: ItemLabel
    q_point: bytes
    p_point: bytes
    tweak: bytes

    @property
    def family(self) -> Family:
        return _TWEAK

    def at_tx(self, tx_index: int) -> TweakItem:
        return self._replace(label=self.label._replace(tx_index=tx_index))


    def claim(self, ctx: VerifyContext) -> Claim:
        return tweak_claim(self.label, consensus_generators().fixed, self.q_point, self.p_point,
                           int.from_bytes(self.tweak, "big"))

    @classmethod
    def claims(cls, items: Sequence[TweakItem], ctx: VerifyContext
               ) -> tuple[list[Claim | ClaimGroup], Malformed]:
        return claims_each(items, ctx)

    def failure(self) -> ValidationError:
        return _failure(ScriptErrorCode.WITNESS_PROGRAM_MISMATCH, self.label)


class EcdsaItem(NamedTuple):
    """The deferred ECDSA signatures of one input, in script order, each with the consensus
    error its failure means (``(pubkey, DER signature, digest, error name)``)."""

    label: ItemLabel
    checks: tuple[tuple[bytes, bytes, bytes, str], ...]

    @property
    def family(self) -> Family:
        return _ECDSA

    def at_tx(self, tx_index: int) -> EcdsaItem:
        return self._replace(label=self.label._replace(tx_index=tx_index))


    def first_failing(self) -> str | None:
        """The error name of the first signature that does not verify, or None."""
        for pubkey, der, msg, code in self.checks:
            if not libsecp.ecdsa_verify(pubkey, der, msg):
                return code
        return None

    @classmethod
    def prepare(cls, items: list[EcdsaItem], ctx: VerifyContext) -> None:
        """Every item's verdict at once, the signatures spread over ``ctx.threads`` threads
        (libsecp256k1 runs with the GIL released), for their checks."""
        ctx.signature_verdicts.update(zip(items, verify_ecdsa_parallel(items, ctx.threads)))

    def check(self, ctx: VerifyContext | None = None) -> None:
        """The verdict ``prepare`` put in ``ctx`` (verified now if absent); the consensus error
        of the first signature that does not verify."""
        verdicts = {} if ctx is None else ctx.signature_verdicts
        code = verdicts[self] if self in verdicts else self.first_failing()
        if code is not None:
            raise _failure(ScriptErrorCode[code], self.label)


def verify_ecdsa_parallel(items: Sequence[EcdsaItem], threads: int | None = None
                          ) -> list[str | None]:
    """``first_failing`` of every item, spread over threads (libsecp256k1 runs with the GIL
    released); the result does not depend on the thread count. Few items: no threads."""
    threads = threads or os.cpu_count() or 1
    if threads <= 1 or len(items) < MIN_PARALLEL:
        return [item.first_failing() for item in items]
    chunk = (len(items) + threads - 1) // threads
    parts = [items[i:i + chunk] for i in range(0, len(items), chunk)]
    with ThreadPoolExecutor(len(parts)) as pool:
        results = pool.map(lambda part: [item.first_failing() for item in part], parts)
    return [code for part in results for code in part]


# --- the stage ---------------------------------------------------------------------------------

@dataclass(slots=True)
class ScriptWork:
    """What running the scripts of some transactions left to verify."""

    batch: list[SchnorrItem | TweakItem | FailedInput] = field(default_factory=list)
    checks: list[EcdsaItem] = field(default_factory=list)
    n_inputs: int = 0

    def extend(self, other: ScriptWork) -> None:
        self.batch += other.batch
        self.checks += other.checks
        self.n_inputs += other.n_inputs


def exact_failure(pre: PrecomputedTransaction, index: int, flags: int, tx_index: int,
                  first: ScriptError | None = None) -> ValidationError:
    """The reject reason Elements gives for input ``index`` (see the module docstring): the
    input re-run with an immediate checker under ``flags``, and, if that fails only because of
    policy flags, reported as non-mandatory. ``first``: the error of an immediate run already
    made under ``flags``."""
    label = ItemLabel(tx_index, KIND_SCRIPT, index)
    assert pre.spent is not None
    value = pre.spent[index].value
    if first is None:
        try:
            verify_input(pre, index, flags, SignatureChecker(pre, index, value, flags))
        except ScriptError as exc:
            first = exc
        else:  # an optimistic check failed but the input is valid: cannot happen
            return _failure(ScriptErrorCode.UNKNOWN_ERROR, label,
                            detail="deferred check failed, immediate run passed")
    if first.unsupported or not flags & POLICY_ONLY:
        return _failure(first.code, label, detail=first.detail)
    consensus = flags & ~POLICY_ONLY
    try:
        verify_input(pre, index, consensus, SignatureChecker(pre, index, value, consensus))
    except ScriptError as exc:
        return _failure(exc.code, label, detail=exc.detail)
    return _failure(first.code, label, mandatory=False, detail=first.detail)


def run_scripts(tx: Transaction, tx_index: int, spent: Sequence[SpentOutput],
                genesis_hash: bytes, flags: int
                ) -> tuple[PrecomputedTransaction, list[DeferredChecks | ValidationError]]:
    """Every input of ``tx`` run optimistically: per input its deferred checks, or the exact
    reject reason of its failure (``exact_failure``)."""
    pre = PrecomputedTransaction(tx, spent, genesis_hash)
    results: list[DeferredChecks | ValidationError] = []
    for n, prev in enumerate(spent):
        record = DeferredChecks()
        try:
            verify_input(pre, n, flags, SignatureChecker(pre, n, prev.value, flags, record, n))
        except ScriptError:
            results.append(exact_failure(pre, n, flags, tx_index))
        else:
            results.append(record)
    return pre, results


class FailedInput(NamedTuple):
    """An input whose script failed when it was run: a batch item whose claim is malformed, so
    the verifier reports it in culprit order (a transaction's balance and range proofs come
    before its scripts, as Elements checks amounts before scripts; earlier transactions
    first)."""

    label: ItemLabel
    error: ValidationError

    @property
    def family(self) -> Family:
        return _SCRIPT_FAILURE

    def at_tx(self, tx_index: int) -> FailedInput:
        return self._replace(label=self.label._replace(tx_index=tx_index))


    def claim(self, ctx: VerifyContext) -> Claim:
        raise self.error

    @classmethod
    def claims(cls, items: Sequence[FailedInput], ctx: VerifyContext
               ) -> tuple[list[Claim | ClaimGroup], Malformed]:
        return claims_each(items, ctx)

    def failure(self) -> ValidationError:
        return self.error


def items_of(runs: Sequence[tuple[int, PrecomputedTransaction,
                                  Sequence[DeferredChecks | ValidationError]]],
             flags: int) -> ScriptWork:
    """The batch and check items of several transactions' script runs. Every R, P and Q is
    lifted in one kernel call for all of them; a key or nonce that does not lift fails its
    input (re-run for the exact error)."""
    work = ScriptWork()
    xonly: list[bytes] = []
    compressed: list[bytes] = []
    for _, _, results in runs:
        for record in results:
            if isinstance(record, ValidationError):
                continue
            for tweak in record.tweaks:  # the same order as the loop below reads them
                xonly.append(tweak.internal_key)
                compressed.append(output_key_encoding(tweak.output_key, tweak.parity))
            for check in record.schnorr:
                xonly += (check.sig[:32], check.pubkey)
    points = lift_many(xonly)
    q_points = lift_many(compressed, KIND_COMPRESSED)
    k = q = 0
    for tx_index, pre, results in runs:
        for n, record in enumerate(results):
            label = ItemLabel(tx_index, KIND_SCRIPT, n)
            work.n_inputs += 1
            if isinstance(record, ValidationError):
                work.batch.append(FailedInput(label, record))
                continue
            items: list[SchnorrItem | TweakItem | FailedInput] = []
            lifted = True
            for tweak in record.tweaks:  # Elements checks the commitment before the script
                p_point, q_point = points[k], q_points[q]
                k += 1
                q += 1
                if p_point is None or q_point is None:
                    lifted = False
                else:
                    items.append(TweakItem(label, q_point, p_point, tweak.tweak))
            for check in record.schnorr:
                r_point, p_point = points[k], points[k + 1]
                k += 2
                if r_point is None or p_point is None:
                    lifted = False
                else:
                    items.append(SchnorrItem(label, r_point, p_point, check.pubkey,
                                             check.msg, check.sig))
            if not lifted:
                work.batch.append(FailedInput(label, exact_failure(pre, n, flags, tx_index)))
                continue
            work.batch += items
            if record.ecdsa:
                work.checks.append(EcdsaItem(label, tuple(
                    (c.pubkey, c.der, c.msg, c.failure.name) for c in record.ecdsa)))
    return work


__all__ = ["BLOCK_FLAGS", "MEMPOOL_FLAGS", "UNSUPPORTED", "EcdsaItem", "FailedInput",
           "SchnorrItem",
           "ScriptWork", "TweakItem", "exact_failure", "items_of", "run_scripts",
           "script_reason", "verify_ecdsa_parallel"]
