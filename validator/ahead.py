"""Verifying Borromean output proofs ahead of their transaction's mempool acceptance.

A wallet send proves its outputs, signs, writes the transaction to the wallet and submits it
(``Mempool.accept``), whose ring kernel over the range proofs is most of the acceptance. The
range proofs are final as soon as they are made, so ``AheadChecks.start`` hands them to the
shared pool's worker at once (``ctplugin.parallel.pool``): the ring kernel releases the GIL and
runs on every core while the caller's Python goes on (the signatures, the wallet write, the
acceptance's own planning, policy and script checks). The acceptance then
takes each proof found valid here as a cache hit would be taken, and verifies everything else
itself. When the wallet also hands over its signer's ring points (``borromean.SignedRangeProof``),
the check here is one multi-scalar multiplication instead of the ring kernel
(``docs/borromean.md`` §5), and the ring kernel runs only if the points do not show the proofs
valid.

Nothing here judges: an item is "valid" only if the validator's own check of it
(``BorromeanItem.prepare`` and ``check``, the mempool's code) passed; a proof that failed, or a
check that raised or never started, is simply verified again by the acceptance, which names the
culprit and the reason as it always does. Items are matched by their proof-cache keys (salted
hashes of proof, commitment, value generator and extra commit), so a transaction that changed in
between (other bytes) cannot borrow a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future

from ctplugin.elements import TxOut
from ctplugin.elements.chainparams import ChainParams, RangeProofKind, range_proof_kind
from ctplugin.errors import ValidationError
from ctplugin.parallel import pool
from ctplugin.secp256k1 import kernel
from validator.items import KIND_OUTPUT, BorromeanItem, ItemLabel, VerifyContext
from validator.store import ProofCache


def _verdicts(items: list[BorromeanItem],
              ring_points: Mapping[bytes, bytes]) -> list[bool]:
    """Whether each item passes the validator's check (one ring-kernel call for all, or one
    multi-scalar multiplication for those with their signer's ring points)."""
    ctx = VerifyContext(ring_points=ring_points)
    BorromeanItem.prepare(items, ctx)
    passed = []
    for item in items:
        try:
            item.check(ctx)
        except ValidationError:
            passed.append(False)
        else:
            passed.append(True)
    return passed


class AheadChecks:
    """Borromean output proofs being verified on the shared pool."""

    __slots__ = ("_future", "keys")

    def __init__(self, keys: list[bytes], future: Future[list[bool]]) -> None:
        self.keys = keys
        self._future = future

    @classmethod
    def start(cls, outputs: Sequence[TxOut], params: ChainParams, cache: ProofCache,
              ring_points: Mapping[bytes, bytes] | None = None) -> AheadChecks | None:
        """Start verifying the Borromean range proofs of the blinded ``outputs`` (those with
        an asset commitment, as wallets make them); None if there are none, or when the kernel
        is kept to one thread (``kernel.set_threads``: no helper thread then). ``ring_points``:
        the signer's ring points by proof (``VerifyContext.ring_points``). The items' labels
        are placeholders: a verdict is only ever used as a pass."""
        if RangeProofKind.BORROMEAN not in params.range_proofs or kernel.threads() <= 1:
            return None
        items = [BorromeanItem(ItemLabel(0, KIND_OUTPUT, j), out.range_proof, out.value,
                               out.asset, out.script_pubkey)
                 for j, out in enumerate(outputs)
                 if isinstance(out.value, bytes) and len(out.asset) == 33 and out.range_proof
                 and range_proof_kind(out.range_proof, params.range_proofs)
                 == RangeProofKind.BORROMEAN]
        if not items:
            return None
        keys = [item.cache_key(cache) for item in items]
        return cls(keys, pool().submit(_verdicts, items, dict(ring_points or {})))

    def valid_keys(self) -> set[bytes]:
        """The keys of the items that passed, waiting for the check if it runs. A check that
        has not started is called off (the pool's worker is busy elsewhere: the caller is
        better off verifying itself), and a check that raised counts as none passed."""
        if self._future.cancel():
            return set()
        if self._future.exception() is not None:
            return set()
        return {key for key, ok in zip(self.keys, self._future.result()) if ok}
