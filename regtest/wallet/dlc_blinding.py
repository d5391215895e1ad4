"""The blinding of a DLC on our chain, derived from the offer's blinding seed (both parties
compute the same commitments; ``ctplugin.dlc.elements_contract.OutputBlinder``).

Every closing transaction (CET or refund) and the funding output are blinded *deterministically*
from the 32-byte ``blinding_seed`` of the offer (``ElementsOffer``), so both parties build the
same transactions and sighashes without a round trip, and third parties see ordinary
confidential outputs. Scalars are ``scalar_from_hash("ctplugin/dlc/<label>", seed)``:

- **Payout outputs** of the party with role r ∈ {offer, accept}: ephemeral key
  e_r = scalar("ephemeral-r"), nonce field E_r = e_r·G; rewind nonce
  n_r = SHA256(ECDH(e_r, B_r)) with B_r the blinding key of the party's payout address; asset
  blinding factor abf_r derived from n_r as the wallet does (``blinding.asset_blinding_factor``),
  so the receiving wallet unblinds its payout like any payment (Bulletproof rewind with n_r gives
  value and value blind; message = asset id prefix). Every closing transaction reuses E_r and
  abf_r: they are alternatives spending one outpoint, at most one is ever published.
- **Value blinds**: in each closing transaction every payout output but the last uses
  vbf_r = scalar("vbf-r"); the last one's is solved so that Σ (v·abf + vbf) over the payouts
  equals the funding output's k_f (0 for an explicit funding output): the transaction balances.
  Then Σ commitments = (Σ v)·H + k_f·G, so the last commitment costs no scalar multiplication.
- **Funding output** (confidential funding): abf_f = scalar("funding-abf"), and its value blind
  is chosen so that V·abf_f + vbf_f = k_f = scalar("funding-blind") whatever the funding value V
  (the offerer fixes its change before V is known); null nonce; its Bulletproof uses the rewind
  nonce tagged_hash("ctplugin/dlc/funding-nonce", seed).
- **Sides**: each party's change output balances its own inputs (``side_offset``): the offer
  side's inputs carry k_f + δ beyond its change, the accept side's −δ, δ = scalar("side"), so
  neither side's contribution shows as a plain multiple of H on chain, and each party checks the
  other's (``ElementsContract.check_side``).

Cost: per closing transaction one constant-time multiplication (the first payout's v·A'_r) and
a few point additions; all commitments are encoded in one kernel call. Proofs: ``prove`` (range
proofs in the wallet's kind, surjection proofs over the funding output's asset) when a closing
transaction is broadcast; ``funding_output_proofs`` for a confidential funding output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ctplugin.dlc.elements_contract import Payout
from ctplugin.dlc.errors import DlcError
from ctplugin.elements import Transaction, TxOut
from ctplugin.hashes import tagged_hash
from ctplugin.pedersen import (
    Generator,
    commit,
    generator_generate,
    generator_generate_blinded,
)
from ctplugin.secp256k1 import INFINITY, KIND_PEDERSEN, Point, ct, encode_points
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.scalar import scalar_from_hash
from regtest.wallet.blinding import asset_blinding_factor, ephemeral_pubkey, rewind_nonce
from regtest.wallet.wallet import Wallet

_ROLES = ("offer", "accept")


def _scalar(seed: bytes, label: str) -> int:
    return scalar_from_hash(f"ctplugin/dlc/{label}", seed)


def side_offset(seed: bytes, confidential_funding: bool, *, offerer: bool) -> int:
    """The blinding a side's inputs carry beyond its change (module docstring, "Sides")."""
    delta = _scalar(seed, "side")
    if not offerer:
        return (-delta) % N
    funding = _scalar(seed, "funding-blind") if confidential_funding else 0
    return (funding + delta) % N


@dataclass(frozen=True)
class PayoutKey:
    """A party's payout address as the closing transactions use it."""

    script_pubkey: bytes
    blinding_pubkey: bytes


@dataclass(frozen=True)
class _Role:
    script: bytes
    ephemeral: bytes
    nonce: bytes
    abf: int
    generator: Generator
    asset: bytes
    """The generator's 33-byte encoding (the outputs' asset commitment)."""
    vbf: int
    vbf_point: Point


class ContractBlinding:
    """``OutputBlinder`` of one contract, for the local party's ``wallet`` (its proofs)."""

    def __init__(self, wallet: Wallet, seed: bytes, asset: bytes, offer: PayoutKey,
                 accept: PayoutKey, confidential_funding: bool) -> None:
        if len(seed) != 32:
            raise DlcError("bad-blinding", "the blinding seed is 32 bytes")
        self.wallet = wallet
        self.seed = seed
        self.asset = asset
        self.keys = {"offer": offer, "accept": accept}
        self.confidential_funding = confidential_funding
        self.funding_blind = _scalar(seed, "funding-blind") if confidential_funding else 0
        self.funding_abf = _scalar(seed, "funding-abf") if confidential_funding else 0

    @cached_property
    def _roles(self) -> dict[str, _Role]:
        roles = {}
        for role in _ROLES:
            key = self.keys[role]
            e = _scalar(self.seed, f"ephemeral-{role}")
            try:
                nonce = rewind_nonce(e, key.blinding_pubkey)
            except (ValueError, TypeError):
                raise DlcError("bad-key", f"the {role} payout blinding key") from None
            abf = asset_blinding_factor(nonce)
            vbf = _scalar(self.seed, f"vbf-{role}")
            generator = generator_generate_blinded(self.asset, abf.to_bytes(32, "big"))
            roles[role] = _Role(key.script_pubkey, ephemeral_pubkey(e), nonce, abf, generator,
                                generator.serialize(), vbf, ct.base_mul(vbf))
        return roles

    @cached_property
    def _value_generator(self) -> Point:
        return generator_generate(self.asset).point

    @cached_property
    def _funding_point(self) -> Point:
        """k_f·G."""
        return ct.base_mul(self.funding_blind) if self.funding_blind else INFINITY

    # --- OutputBlinder -------------------------------------------------------------------------

    def side_offset(self, offerer: bool) -> int:
        return side_offset(self.seed, self.confidential_funding, offerer=offerer)

    def funding_output(self, value: int, script_pubkey: bytes) -> TxOut:
        if not self.confidential_funding:
            return TxOut(asset=self.asset, value=value, script_pubkey=script_pubkey)
        generator = self.funding_generator
        commitment = commit(value, self.funding_vbf(value), generator)
        return TxOut(asset=generator.serialize(), value=commitment.serialize(),
                     script_pubkey=script_pubkey)

    def closing_outputs(self, closings: Sequence[Sequence[Payout]]) -> list[list[TxOut]]:
        roles = self._roles
        sums: dict[int, Point] = {}
        points: list[Point] = []
        for payouts in closings:
            rest = INFINITY
            for who, amount in payouts[:-1]:
                role = roles["offer" if who else "accept"]
                point = ct.mul(amount, role.generator.point) + role.vbf_point
                points.append(point)
                rest = rest + point
            if payouts:
                total = sum(amount for _, amount in payouts)
                whole = sums.get(total)
                if whole is None:
                    whole = sums[total] = ct.mul(total, self._value_generator) + \
                        self._funding_point
                points.append(whole - rest)
        if any(p.is_infinity for p in points):
            raise DlcError("bad-blinding", "a commitment is the point at infinity")
        encoded = encode_points(points, KIND_PEDERSEN) if points else b""
        out: list[list[TxOut]] = []
        k = 0
        for payouts in closings:
            outputs = []
            for who, _ in payouts:
                role = roles["offer" if who else "accept"]
                outputs.append(TxOut(asset=role.asset,
                                     value=encoded[33 * k: 33 * k + 33], nonce=role.ephemeral,
                                     script_pubkey=role.script))
                k += 1
            out.append(outputs)
        return out

    # --- openings and proofs ----------------------------------------------------------------

    @cached_property
    def funding_generator(self) -> Generator:
        if not self.confidential_funding:
            return generator_generate(self.asset)
        return generator_generate_blinded(self.asset, self.funding_abf.to_bytes(32, "big"))

    def funding_vbf(self, value: int) -> int:
        """The funding output's value blind: V·abf_f + vbf_f = k_f."""
        vbf = (self.funding_blind - value * self.funding_abf) % N
        if self.confidential_funding and vbf == 0:
            raise DlcError("bad-blinding", "zero funding value blind")
        return vbf

    def value_blinds(self, payouts: Sequence[Payout]) -> list[int]:
        """The value blind of each payout output of a closing transaction."""
        roles = self._roles
        blinds = []
        total = 0
        for who, amount in payouts[:-1]:
            role = roles["offer" if who else "accept"]
            blinds.append(role.vbf)
            total += amount * role.abf + role.vbf
        if payouts:
            who, amount = payouts[-1]
            last = roles["offer" if who else "accept"]
            blinds.append((self.funding_blind - total - amount * last.abf) % N)
        return blinds

    def prove(self, tx: Transaction, payouts: Sequence[Payout]) -> Transaction:
        """``tx`` with a range proof and a surjection proof on each payout output."""
        roles = self._roles
        proven = list(tx.outputs)
        asset = self.asset
        input_blind = self.funding_abf.to_bytes(32, "big")
        for n, ((who, amount), vbf) in enumerate(zip(payouts, self.value_blinds(payouts))):
            role = roles["offer" if who else "accept"]
            abf = role.abf.to_bytes(32, "big")
            out = proven[n]
            range_proof = self.wallet._output_proof(amount, vbf, asset, abf, role.generator,
                                                    role.nonce, role.script)
            surjection = self.wallet._surjection([asset], [input_blind],
                                                 [self.funding_generator], asset, abf,
                                                 role.generator)
            proven[n] = TxOut(asset=out.asset, value=out.value, nonce=out.nonce,
                              script_pubkey=out.script_pubkey, surjection_proof=surjection,
                              range_proof=range_proof)
        return Transaction(version=tx.version, inputs=tx.inputs, outputs=tuple(proven),
                           locktime=tx.locktime)

    def funding_output_proofs(self, output: TxOut, value: int,
                              inputs: Sequence[tuple[bytes, int, Generator]]) -> TxOut:
        """A confidential funding output with its range proof and surjection proof;
        ``inputs``: the funding transaction's inputs in order as (asset or b"" when unknown,
        abf, generator) — the proof's real input is one this party knows."""
        if not self.confidential_funding:
            return output
        abf = self.funding_abf.to_bytes(32, "big")
        nonce = tagged_hash("ctplugin/dlc/funding-nonce", self.seed)
        range_proof = self.wallet._output_proof(value, self.funding_vbf(value), self.asset, abf,
                                                self.funding_generator, nonce,
                                                output.script_pubkey)
        surjection = self.wallet._surjection(
            [a or bytes(32) for a, _, _ in inputs], [b.to_bytes(32, "big") for _, b, _ in inputs],
            [g for _, _, g in inputs], self.asset, abf, self.funding_generator)
        return TxOut(asset=output.asset, value=output.value, nonce=output.nonce,
                     script_pubkey=output.script_pubkey, surjection_proof=surjection,
                     range_proof=range_proof)
