"""The items of block validation: each piece of cryptographic work a block needs, as a value.

Planning (``validator.rules.plan_amounts`` for amounts, ``validator.scripts`` for signatures)
turns a transaction into items; nothing is verified while planning. The cache pass drops items
the proof cache already vouches for; ``validator.verify`` verifies the rest (stage 5 of
``validator.block``). Two families, by how they are verified:

- a *batch item* (``BatchItem``) turns into one claim that joins the block's ONE multi-scalar
  multiplication: Bulletproof range proofs (``RangeItem``) and BIP340 Schnorr signatures and
taproot tweaks (``validator.scripts.SchnorrItem``, ``TweakItem``). A kind
  with a native batch setup also has the classmethod ``claims(items, ctx)``, which the verifier
  then calls once for all its items (range proofs: one kernel call for the whole block, one
  ``ctplugin.batch.ClaimGroup``), so no per-item Python work is left;
- a *check item* (``CheckItem``) is verified on its own: surjection proofs (``SurjectionItem``),
  Borromean range proofs (``BorromeanItem``: they cannot join the MSM; all of a block's go to
  the ring kernel in ONE call before the checks run, ``verify_borromean``) and ECDSA
  signatures (``validator.scripts.EcdsaItem``, verified over threads).

Every item is an immutable value of bytes (plus its ``ItemLabel``), so items pickle and can be
verified in another process; derived state (decoded points, prepared targets) is rebuilt there
on first use, never shipped. To add a kind: a NamedTuple with ``label``, a ``family`` (report
counts and check timings are keyed by it), ``at_tx``, ``claim``, ``claims`` and ``failure``
(``BatchItem``) or ``check`` and ``prepare`` (``CheckItem``), and — for proofs the proof cache
vouches for one by one (``CachedItem``) — ``cache_key`` (the proof cache's salted key over
EVERY verification input, docs/design.md "Proof caches"). Signature items
(``validator.scripts``) have none: the script-execution cache covers whole transactions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, TypeVar, cast

from ctplugin import borromean
from ctplugin.batch import Claim, ClaimGroup
from ctplugin.bulletproofs import CONSENSUS_N_GENS, CONSENSUS_NBITS, output_range_proof_claims
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import EncodingError, ProofError, ValidationError
from ctplugin.pedersen import Generator, generator_generate
from ctplugin.secp256k1 import KIND_GENERATOR, Point, kernel
from ctplugin.surjection import (
    PreparedTargets,
    SurjectionProof,
    rings_of_many_prepared,
    verify_prepared,
)
from validator import reasons

if TYPE_CHECKING:
    from validator.store import ProofCache

_k = kernel.backend

# ------------------------------------------------------------------------------------------------
# Labels (what the culprit search names on failure)
# ------------------------------------------------------------------------------------------------

ItemKind = Literal["balance", "output", "issuance", "inflation", "script"]
"""What an ``ItemLabel`` points at. A ``Literal`` of plain strings, not an enum: labels are made
by the thousand per block and pickled to workers, where a str costs nothing extra."""

KIND_BALANCE: ItemKind = "balance"
KIND_OUTPUT: ItemKind = "output"
KIND_ISSUANCE: ItemKind = "issuance"
KIND_INFLATION: ItemKind = "inflation"
KIND_SCRIPT: ItemKind = "script"  # an input's script and signatures (validator.scripts)


class Family(StrEnum):
    """The report's and the timer's name for a kind of work: ``ConnectReport.items`` /
    ``cached`` are keyed by it, and stage 5 times each check family under it."""

    BALANCE = "balance"
    RANGE = "range"  # Bulletproofs
    BORROMEAN = "borromean"
    SURJECTION = "surjection"
    SCRIPT = "script"  # whole transactions' scripts (the script-execution cache's unit)
    SCHNORR = "schnorr"
    TWEAK = "tweak"
    ECDSA = "ecdsa"
    SCRIPT_FAILURE = "script-failure"


# what the ``family`` properties return: a module global is read faster than an enum
# class attribute (Python 3.11), and stage 5 reads a family per item
_RANGE = Family.RANGE
_BORROMEAN = Family.BORROMEAN
_SURJECTION = Family.SURJECTION


class ItemLabel(NamedTuple):
    """Where an item comes from: transaction index, kind, output or input index.

    Ordered by transaction then position, so the first failing label is the culprit to name.
    (A named tuple: thousands are made per block, and tuples are the cheapest immutable value.)
    """

    tx_index: int
    kind: ItemKind
    index: int = -1  # type: ignore[assignment]  # shadows tuple.index: output/input index

    def error(self, reason_if_range: str = reasons.BAD_TXNS_RANGEPROOF_INVALID,
              detail: str = "") -> ValidationError:
        if self.kind == KIND_BALANCE:
            return ValidationError(reasons.BAD_TXNS_IN_NE_OUT, tx_index=self.tx_index,
                                   detail=detail or "value in != value out")
        if self.kind == KIND_OUTPUT:
            return ValidationError(reason_if_range, tx_index=self.tx_index,
                                   output_index=self.index, detail=detail)
        what = "issuance amount" if self.kind == KIND_ISSUANCE else "inflation keys"
        return ValidationError(reason_if_range, tx_index=self.tx_index, input_index=self.index,
                               detail=detail or what)


# ------------------------------------------------------------------------------------------------
# What every item provides
# ------------------------------------------------------------------------------------------------


class VerifyContext:
    """Scratch state shared by the items of one ``verify`` call (never shipped with items).

    ``decoded``: asset encodings (33 B) → packed kernel points, filled by the range claims (a
    range claim's value generator is the output's asset commitment) and read by the surjection
    checks, so a blinded output's asset commitment is decoded once. ``ring_verdicts``: the
    verdicts of the Borromean items (``verify_borromean``), read by their checks;
    ``signature_verdicts``: those of the ECDSA items (``validator.scripts.EcdsaItem.prepare``);
    ``surjection_verdicts``: those of the well-formed surjection items
    (``SurjectionItem.prepare``); ``threads``: cores the ring kernel and the signature checks
    may use (default: the kernel setting, ``kernel.set_threads``: all cores unless set);
    ``ring_points``: the signer's ring points of Borromean proofs, by proof, where a wallet
    handed them over (``validator.ahead``): ``verify_borromean`` checks those proofs with them
    in one multi-scalar multiplication, the same verdicts.
    """

    __slots__ = ("decoded", "ring_points", "ring_verdicts", "signature_verdicts",
                 "surjection_verdicts", "threads")

    def __init__(self, threads: int | None = None,
                 ring_points: Mapping[bytes, bytes] | None = None) -> None:
        self.decoded: dict[bytes, bytes] = {}
        self.ring_points: Mapping[bytes, bytes] = ring_points or {}
        self.ring_verdicts: dict[BorromeanItem, borromean.RangeProofVerdict] = {}
        self.signature_verdicts: dict[object, str | None] = {}
        self.surjection_verdicts: dict[SurjectionItem, bool] = {}
        self.threads = threads if threads is not None else borromean.default_threads()


_ItemT = TypeVar("_ItemT", bound="Item")


class Item(Protocol):
    """What the verifier needs of any item."""

    @property
    def label(self) -> ItemLabel: ...

    @property
    def family(self) -> Family:
        """The report's name for this kind of work (``Family``)."""
        ...

    def at_tx(self: _ItemT, tx_index: int) -> _ItemT:
        """The same item labelled with its transaction's block position."""
        ...


class CachedItem(Item, Protocol):
    """An item the proof cache vouches for on its own (range and surjection proofs)."""

    def cache_key(self, cache: ProofCache) -> bytes:
        """The proof cache's salted key over every input of the verification."""
        ...


Malformed = list[tuple[ItemLabel, ValidationError]]
"""Items that are malformed, each with the ``ValidationError`` naming it."""


class BatchItem(Item, Protocol):
    def claim(self, ctx: VerifyContext) -> Claim | ClaimGroup:
        """The item's equation for the batch (a claim, or a group of one); a
        ``ValidationError`` naming the item if it is malformed (a well-formed false item gives
        a claim that fails)."""
        ...

    def failure(self) -> ValidationError:
        """The error naming this item when its claim is false."""
        ...

    @classmethod
    def claims(cls, items: Sequence[Any], ctx: VerifyContext
               ) -> tuple[list[Claim | ClaimGroup], Malformed]:
        """The claims of all ``items`` of this kind, and the malformed ones: what the verifier
        calls, once per kind. A kind with a native batch setup builds them together
        (``RangeItem.claims``: one kernel call, one ``ClaimGroup``); the others build them one
        by one (``claims_each``)."""
        ...


class CheckItem(Item, Protocol):
    def check(self, ctx: VerifyContext) -> None:
        """Verify the item alone; a ``ValidationError`` naming it otherwise. Reads the verdict
        ``prepare`` left in ``ctx`` when there is one."""
        ...

    @classmethod
    def prepare(cls, items: list[Any], ctx: VerifyContext) -> None:
        """Compute the verdicts of all ``items`` of this kind together into ``ctx`` before
        their checks run (the ring kernel's one call, ECDSA over threads)."""
        ...


def claims_each(items: Sequence[BatchItem], ctx: VerifyContext
                ) -> tuple[list[Claim | ClaimGroup], Malformed]:
    """``BatchItem.claims`` for a kind without a native setup: each item's ``claim``, a
    malformed item kept aside (an earlier item may fail the batch first)."""
    claims: list[Claim | ClaimGroup] = []
    malformed: Malformed = []
    for item in items:
        try:
            claims.append(item.claim(ctx))
        except ValidationError as exc:
            malformed.append((item.label, exc))
    return claims, malformed


def _at_tx(item: Any, tx_index: int) -> Any:  # Any: a NamedTuple with a ``label`` field
    """``item`` (a NamedTuple with ``label``) labelled with the block position of its
    transaction (plans reused from the mempool are labelled with tx_index 0)."""
    if item.label.tx_index == tx_index:
        return item
    return item._replace(label=item.label._replace(tx_index=tx_index))


def decode_one(data: bytes, kind: int) -> bytes | None:
    """One 33-byte point encoding as a packed kernel point, or None if it does not decode."""
    try:
        return _k.decode_points_var(data, kind)
    except ValueError:
        return None


# ------------------------------------------------------------------------------------------------
# Bulletproof range proofs (batch items)
# ------------------------------------------------------------------------------------------------


class RangeItem(NamedTuple):
    """One consensus range proof (a Bulletproof, docs/design.md): proof, commitment (33 B), value
    generator (33 B), extra commit, and the commitment as the kernel decoded it for the balance
    (saves the verifier a square root; not part of any cache key: it is a function of
    ``commitment``)."""

    label: ItemLabel
    proof: bytes
    commitment: bytes
    value_gen: bytes
    extra_commit: bytes
    commitment_point: bytes | None = None

    @property
    def family(self) -> Family:
        return _RANGE

    def at_tx(self, tx_index: int) -> RangeItem:
        return _at_tx(self, tx_index)

    def cache_key(self, cache: ProofCache) -> bytes:
        return cache.rangeproof_key(self.proof, self.commitment, self.value_gen,
                                    self.extra_commit, CONSENSUS_NBITS, CONSENSUS_N_GENS)

    def failure(self) -> ValidationError:
        return self.label.error(reasons.BAD_TXNS_RANGEPROOF_INVALID)

    def claim(self, ctx: VerifyContext) -> Claim | ClaimGroup:
        """The consensus range-proof equation of this one item (see ``claims``)."""
        built, malformed = RangeItem.claims([self], ctx)
        if malformed:
            raise malformed[0][1]
        return built[0]

    @classmethod
    def claims(cls, items: Sequence[RangeItem], ctx: VerifyContext,
               ) -> tuple[list[Claim | ClaimGroup], Malformed]:
        """The consensus range-proof equations of ``items`` as ONE group (one kernel call
        parses, decodes and runs the transcripts of them all); a malformed proof is named
        ``bad-txns-rangeproof-invalid``. Records each value generator's decoded point in
        ``ctx`` (a range claim's one shared term is value_gen·w(δ − t))."""
        if not items:
            return [], []
        labels, proofs, commitments, value_gens, extras, points = zip(*items, strict=True)
        group = output_range_proof_claims(proofs, commitments, value_gens, extras, labels,
                                          None if points.count(None) == len(points) else points,
                                          threads=ctx.threads)
        ctx.decoded.update(group.generator_points)
        malformed: Malformed = []
        for label, exc in group.failures:
            item_label = cast(ItemLabel, label)
            malformed.append((item_label, item_label.error(reasons.BAD_TXNS_RANGEPROOF_INVALID,
                                                           f"malformed: {exc}")))
        return [group], malformed


# ------------------------------------------------------------------------------------------------
# Borromean range proofs (check items, verified together on the ring kernel)
# ------------------------------------------------------------------------------------------------


class BorromeanItem(NamedTuple):
    """One Borromean range proof (Elements' ``rangeproof``): proof, commitment (33 B), value
    generator (33 B: the asset commitment, or generator_generate(asset or token id)), extra
    commit (the output's scriptPubKey; empty for issuances).

    Elements' rules beyond the proof: it must prove min_value > 0 unless the extra commit (the
    script) is unspendable (an empty one is, as for issuances): no spendable zero-value
    outputs. Both are functions of the cache key's inputs."""

    label: ItemLabel
    proof: bytes
    commitment: bytes
    value_gen: bytes
    extra_commit: bytes

    @property
    def family(self) -> Family:
        return _BORROMEAN

    def at_tx(self, tx_index: int) -> BorromeanItem:
        return _at_tx(self, tx_index)

    def cache_key(self, cache: ProofCache) -> bytes:
        return cache.borromean_key(self.proof, self.commitment, self.value_gen,
                                   self.extra_commit)

    def claim_of(self) -> borromean.RangeProofClaim:
        return borromean.RangeProofClaim(self.proof, self.commitment, self.value_gen,
                                         self.extra_commit)

    @classmethod
    def prepare(cls, items: list[BorromeanItem], ctx: VerifyContext) -> None:
        """Every item's verdict at once (``verify_borromean``), for their checks."""
        verify_borromean(items, ctx)

    def check(self, ctx: VerifyContext | None = None) -> None:
        """The verdict ``verify_borromean`` put in ``ctx`` (verified alone if absent); a
        ValidationError naming the output or issuance otherwise."""
        verdict = None if ctx is None else ctx.ring_verdicts.get(self)
        if verdict is None:
            verdict = borromean.verify_many([self.claim_of()], threads=1)[0]
        if isinstance(verdict, EncodingError):
            raise self.label.error(reasons.BAD_TXNS_ASSET_INVALID, f"value generator: {verdict}")
        if isinstance(verdict, Exception):
            raise self.label.error(reasons.BAD_TXNS_RANGEPROOF_INVALID, f"malformed: {verdict}")
        if verdict is False:
            raise self.label.error(reasons.BAD_TXNS_RANGEPROOF_INVALID)
        min_value = verdict[0] if isinstance(verdict, tuple) else 0
        if min_value == 0 and not is_unspendable(self.extra_commit):
            raise self.label.error(reasons.BAD_TXNS_RANGEPROOF_INVALID,
                                   "min_value 0 on a spendable output")


def verify_borromean(items: list[BorromeanItem], ctx: VerifyContext) -> None:
    """Every Borromean item's verdict into ``ctx.ring_verdicts``: ONE ring-kernel call (every
    ring of every proof in waves, on ``ctx.threads`` cores); the items whose signer's ring
    points ``ctx.ring_points`` has are shown valid first by one multi-scalar multiplication
    (``borromean.verify_many``), if they are."""
    points = ([ctx.ring_points.get(item.proof) for item in items] if ctx.ring_points
              else None)
    verdicts = borromean.verify_many([item.claim_of() for item in items], threads=ctx.threads,
                                     ring_points=points)
    ctx.ring_verdicts.update(zip(items, verdicts))


# ------------------------------------------------------------------------------------------------
# Surjection proofs (check items)
# ------------------------------------------------------------------------------------------------


class SurjectionTargets:
    """A transaction's surjection target list, as serialized asset fields (``0x01 ‖ id`` or the
    0a/0b commitment: 33 bytes each, one-to-one with the generators, used for cache keys), with
    the generators decoded once, on first use (a cached proof never needs them). Pickles as its
    encodings only."""

    __slots__ = ("_prepared", "encodings")

    def __init__(self, encodings: tuple[bytes, ...]) -> None:
        self.encodings = encodings
        self._prepared: PreparedTargets | None = None

    def __getstate__(self) -> tuple[bytes, ...]:
        return self.encodings

    def __setstate__(self, state: tuple[bytes, ...]) -> None:
        self.encodings = state
        self._prepared = None

    def prepared(self) -> PreparedTargets | None:
        """The targets decoded and prepared for verification (once per transaction, whatever
        its number of outputs), or None if one does not decode. Each distinct encoding is
        decoded once (inputs of one asset often share it)."""
        if self._prepared is None:
            points: dict[bytes, bytes] = {}
            for enc in self.encodings:
                if enc in points:
                    continue
                if enc[0] == 1:
                    points[enc] = generator_generate(enc[1:]).point.packed
                    continue
                decoded = decode_one(enc, KIND_GENERATOR)
                if decoded is None:
                    return None
                points[enc] = decoded
            self._prepared = PreparedTargets.from_packed([points[e] for e in self.encodings])
        return self._prepared

    def generators(self) -> tuple[Generator, ...] | None:
        """The target generators, or None if one does not decode."""
        prepared = self.prepared()
        if prepared is None:
            return None
        return tuple(Generator(Point.from_packed(p)) for p in prepared.packed)


class SurjectionItem(NamedTuple):
    """One surjection proof: the output's asset commitment against the transaction's targets."""

    label: ItemLabel
    proof: bytes
    output_encoding: bytes
    targets: SurjectionTargets

    @property
    def family(self) -> Family:
        return _SURJECTION

    def at_tx(self, tx_index: int) -> SurjectionItem:
        return _at_tx(self, tx_index)

    def cache_key(self, cache: ProofCache) -> bytes:
        return cache.surjection_key(self.proof, self.output_encoding, self.targets.encodings)

    def output_point(self, decoded: Mapping[bytes, bytes] | None = None) -> bytes | None:
        """The output's asset generator as a packed kernel point, or None if it does not
        decode. ``decoded``: encodings already decoded (e.g. by the output's range claim) →
        packed points, reused as is."""
        packed = None if decoded is None else decoded.get(self.output_encoding)
        if packed is None:
            packed = decode_one(self.output_encoding, KIND_GENERATOR)
        return packed

    def output_generator(self, decoded: Mapping[bytes, bytes] | None = None) -> Generator | None:
        """``output_point`` as a Generator."""
        packed = self.output_point(decoded)
        return None if packed is None else Generator(Point.from_packed(packed))

    @classmethod
    def prepare(cls, items: list[SurjectionItem], ctx: VerifyContext) -> None:
        """The verdicts of every well-formed item at once (``verify_many_prepared``: all rings
        in one ring-kernel call), for their checks; a malformed item gets none (its check
        names the problem)."""
        cls.staged(items, ctx)(ctx.threads)

    @classmethod
    def staged(cls, items: list[SurjectionItem], ctx: VerifyContext) -> Callable[[int], None]:
        """``prepare`` in two parts: its Python now (parsing the proofs, the ring keys and
        messages: ``rings_of_many_prepared``), and the returned call, which runs the ring
        kernel on as many threads as it is given and puts the verdicts into ``ctx``: it can run
        on a helper thread beside this thread's Python (``verify.Prefetch``)."""
        cases: list[tuple[SurjectionProof, PreparedTargets, bytes]] = []
        ready: list[SurjectionItem] = []
        decoded = ctx.decoded
        for item in items:
            output = item.output_point(decoded)
            targets = item.targets.prepared()
            if output is None or targets is None:
                continue
            try:
                proof = SurjectionProof.parse(item.proof)
            except ProofError:
                continue
            cases.append((proof, targets, output))
            ready.append(item)
        rings = rings_of_many_prepared(cases)

        def verdicts(threads: int) -> None:
            ctx.surjection_verdicts.update(zip(ready, rings(threads)))

        return verdicts

    def check(self, ctx: VerifyContext | None = None) -> None:
        """Verify the proof (a ValidationError naming the output otherwise): the verdict
        ``prepare`` put in ``ctx``, else verified here, reusing the output generator a range
        claim of ``ctx`` decoded."""
        verdict = None if ctx is None else ctx.surjection_verdicts.get(self)
        if verdict is not None:
            if not verdict:
                raise self.label.error(reasons.BAD_TXNS_SURJECTIONPROOF_INVALID)
            return
        output = self.output_point(None if ctx is None else ctx.decoded)
        if output is None:
            raise self.label.error(reasons.BAD_TXNS_ASSET_INVALID,
                                   "asset commitment does not decode")
        targets = self.targets.prepared()
        if targets is None:
            raise self.label.error(reasons.BAD_TXNS_ASSET_INVALID,
                                   "a target generator does not decode")
        try:
            proof = SurjectionProof.parse(self.proof)
        except ProofError as exc:
            raise self.label.error(reasons.BAD_TXNS_SURJECTIONPROOF_INVALID,
                                   f"malformed: {exc}") from None
        if not verify_prepared(proof, targets, output):
            raise self.label.error(reasons.BAD_TXNS_SURJECTIONPROOF_INVALID)
