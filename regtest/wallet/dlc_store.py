"""The DLC contracts a node wallet takes part in, kept in the wallet's own LevelDB.

Key ``b"d" ‖ temporary contract id`` (32 bytes) → one JSON record (``DlcRecord``): the party's
role and secrets (``PartySecrets``: the funding key's index and the coins it committed), the
protocol messages in rust-dlc JSON (what the contract is rebuilt from after a restart), the
protocol state this wallet reached, and the funding and closing txids. Where a contract stands on
the chain (funding or closing transaction in the mempool, confirmed, conflicted) is not stored:
the wallet's ledger follows the chain through reorgs and restarts, and the node reads it there.

A record is written in the same batch as the wallet's key counters (``NodeWallet.commit(...,
extra=...)``), so a crash never leaves a contract whose keys the wallet could hand out again.
Once the funding transaction is known (sign, fund) its 2-of-2 output is watched by the wallet in
the same batch, so the CET or refund spending it enters the ledger whoever broadcasts it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ctplugin.dlc import messages
from ctplugin.dlc.elements_contract import ElementsContract
from ctplugin.dlc.elements_tx import Funding, funding_script, p2wsh
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import AcceptDlc, OfferDlc, SignDlc
from ctplugin.elements import Transaction
from regtest.wallet.dlc import DlcParty, PartySecrets
from regtest.wallet.node_wallet import NodeWallet

PREFIX = b"d"
RECORD_VERSION = 1

OFFERED = "offered"
"""The offerer made the offer; it waits for an accept."""
ACCEPTED = "accepted"
"""The accepter accepted; it waits for the sign message."""
SIGNED = "signed"
"""The offerer signed; the accepter broadcasts the funding transaction."""
FUNDING_BROADCAST = "funding-broadcast"
"""The accepter broadcast the funding transaction."""
CLOSING_BROADCAST = "closing-broadcast"
"""This wallet broadcast a CET or the refund."""
CANCELLED = "cancelled"
"""Withdrawn before its funding went out (``dlccancel``): its coins are free again."""
PROTOCOL_STATES = (OFFERED, ACCEPTED, SIGNED, FUNDING_BROADCAST, CLOSING_BROADCAST, CANCELLED)
PENDING = (OFFERED, ACCEPTED, SIGNED)
"""States whose coins are locked: committed to a funding transaction not broadcast yet."""


@dataclass
class DlcRecord:
    temporary_id: bytes
    role: str
    secrets: PartySecrets
    offer: OfferDlc
    state: str
    created: int
    accept: AcceptDlc | None = None
    sign: SignDlc | None = None
    funding_txid: bytes | None = None
    closing_txid: bytes | None = None
    contract_id: bytes | None = None
    """Known once the funding transaction is (the accepter's accept, the offerer's sign)."""
    closing_type: str | None = None
    """"cet" or "refund"."""
    outcome: list[str] = field(default_factory=list)
    """The attested outcome strings the CET was chosen by (one oracle's, digit by digit)."""
    payouts: list[int] = field(default_factory=list)
    """(offer, accept) payouts of the closing transaction this wallet broadcast."""

    @property
    def key(self) -> bytes:
        return PREFIX + self.temporary_id

    def encode(self) -> bytes:
        record: dict[str, Any] = {
            "v": RECORD_VERSION, "role": self.role, "state": self.state, "created": self.created,
            "secrets": {"fundingKey": self.secrets.funding_key_index,
                        "coins": [[t.hex(), n] for t, n in self.secrets.coins]},
            "offer": messages.offer_json(self.offer),
            "accept": messages.accept_json(self.accept) if self.accept else None,
            "sign": messages.sign_json(self.sign) if self.sign else None,
            "funding": self.funding_txid.hex() if self.funding_txid else None,
            "closing": self.closing_txid.hex() if self.closing_txid else None,
            "contractId": self.contract_id.hex() if self.contract_id else None,
            "closingType": self.closing_type, "outcome": self.outcome,
            "payouts": self.payouts}
        return json.dumps(record, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, key: bytes, raw: bytes) -> DlcRecord:
        try:
            record = json.loads(raw)
            if record["v"] != RECORD_VERSION:
                raise DlcError("bad-record", f"record version {record['v']}")
            secrets = record["secrets"]
            return cls(
                key[len(PREFIX):], record["role"],
                PartySecrets(record["role"], int(secrets["fundingKey"]),
                             tuple((bytes.fromhex(t), int(n)) for t, n in secrets["coins"])),
                messages.parse_offer(record["offer"]), record["state"], int(record["created"]),
                messages.parse_accept(record["accept"]) if record["accept"] else None,
                messages.parse_sign(record["sign"]) if record["sign"] else None,
                bytes.fromhex(record["funding"]) if record["funding"] else None,
                bytes.fromhex(record["closing"]) if record["closing"] else None,
                bytes.fromhex(record["contractId"]) if record.get("contractId") else None,
                record["closingType"], [str(o) for o in record["outcome"]],
                [int(p) for p in record["payouts"]])
        except DlcError:
            raise
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise DlcError("bad-record", f"corrupt DLC record {key.hex()}: {exc}") from None


def load_records(items: Iterator[tuple[bytes, bytes]]) -> dict[bytes, DlcRecord]:
    """The records of a wallet database's ``b"d"`` entries, by temporary contract id."""
    out = {}
    for key, raw in items:
        record = DlcRecord.decode(key, raw)
        out[record.temporary_id] = record
    return out


# --- a wallet's contracts, and where they stand on the chain ----------------------------------

FUNDED = "funded"
CLOSING = "closing"
CLOSED = "closed"
REFUNDED = "refunded"
FUNDING_CONFLICTED = "funding-conflicted"


@dataclass(frozen=True)
class ChainStatus:
    """A transaction of a contract as the wallet's ledger sees it."""

    txid: bytes
    state: str  # the ledger's TxState value, or "unknown"
    confirmations: int


class DlcBook:
    """One node wallet's contracts: records (loaded from its database, written with its key
    counters), contracts rebuilt from their messages on first use (kept in memory), and their
    position on the chain from the wallet's ledger. Callers hold the wallet's lock."""

    def __init__(self, wallet: NodeWallet) -> None:
        self.wallet = wallet
        self.records = load_records(wallet.db.records(PREFIX))
        self.party = DlcParty(wallet.wallet, self.transaction)
        self._contracts: dict[bytes, ElementsContract] = {}

    def transaction(self, txid: bytes) -> Transaction | None:
        wtx = self.wallet.ledger.get(txid)
        return wtx.tx if wtx is not None else None

    def save(self, record: DlcRecord, funding: Funding | None = None, *,
             sync: bool = True) -> None:
        """The record and the wallet's state (keys and randomness used) in one batch, synced
        unless ``sync`` is False (what is recorded after a broadcast: the chain, which the
        wallet's ledger follows, already holds it); with the contract's ``funding`` (before it
        is broadcast), its output watched: the closing transaction is a wallet transaction
        even when it pays this wallet nothing."""
        self.records[record.temporary_id] = record
        watch = [(funding.txid, funding.index)] if funding is not None else []
        coins = record.secrets.coins
        pending = record.state in PENDING
        self.wallet.commit(state=True, extra={record.key: record.encode()}, sync=sync,
                           watch=watch, lock=coins if pending else (),
                           unlock=() if pending else coins)

    def find(self, contract_id: bytes) -> DlcRecord | None:
        """By temporary contract id or contract id."""
        record = self.records.get(contract_id)
        if record is not None:
            return record
        for record in self.records.values():
            if record.contract_id == contract_id:
                return record
        return None

    def contract(self, record: DlcRecord) -> ElementsContract:
        contract = self._contracts.get(record.temporary_id)
        if contract is None:
            if record.accept is None:
                raise DlcError("not-accepted", "the contract has no accept message yet")
            contract = self.party.contract(record.offer, record.accept)
            self._contracts[record.temporary_id] = contract
        return contract

    def remember(self, record: DlcRecord, contract: ElementsContract) -> None:
        self._contracts[record.temporary_id] = contract

    # --- chain position -----------------------------------------------------------------------

    def _status(self, txid: bytes | None) -> ChainStatus | None:
        if txid is None:
            return None
        wtx = self.wallet.ledger.get(txid)
        if wtx is None:
            return ChainStatus(txid, "unknown", 0)
        return ChainStatus(txid, wtx.state.value, wtx.depth(self.wallet.tip_height))

    def inputs_spent(self, record: DlcRecord) -> bool:
        """A coin of the contract is spent by a wallet transaction other than its funding: the
        contract can no longer be funded as signed."""
        ledger = self.wallet.ledger
        return any(txid != record.funding_txid
                   and ledger.txs[txid].state.value not in ("conflicted", "abandoned")
                   for coin in record.secrets.coins for txid in ledger.spenders.get(coin, ()))

    def closing(self, record: DlcRecord) -> tuple[bytes, str] | None:
        """(txid, "cet" | "refund") of a wallet transaction spending the funding output."""
        funding = record.funding_txid
        if funding is None or record.accept is None:
            return None
        wtx = self.wallet.ledger.get(funding)
        if wtx is None:
            return None
        script = p2wsh(funding_script(record.offer.funding_pubkey, record.accept.funding_pubkey))
        index = next((n for n, o in enumerate(wtx.tx.outputs) if o.script_pubkey == script),
                     None)
        if index is None:
            return None
        for txid in sorted(self.wallet.ledger.spenders.get((funding, index), ())):
            spender = self.wallet.ledger.txs[txid]
            if spender.state.value in ("conflicted", "abandoned"):
                continue
            # A CET's nLockTime is the offer's cet_locktime, below the refund's (validate_offer).
            refund = spender.tx.locktime == record.offer.refund_locktime
            return txid, "refund" if refund else "cet"
        return None

    def status(self, record: DlcRecord) -> dict[str, Any]:
        """Where the contract stands (the state machine of ``listdlcs``)."""
        funding = self._status(record.funding_txid)
        closing_found = self.closing(record)
        closing = self._status(closing_found[0]) if closing_found else None
        state = record.state
        if closing is not None and closing.state == "confirmed":
            state = REFUNDED if closing_found and closing_found[1] == "refund" else CLOSED
        elif closing is not None and closing.state == "mempool":
            state = CLOSING
        elif funding is not None and funding.state == "confirmed":
            state = FUNDED
        elif funding is not None and funding.state == "mempool":
            state = FUNDING_BROADCAST
        elif (funding is not None and funding.state == "conflicted") or (
                record.state in PENDING and self.inputs_spent(record)):
            state = FUNDING_CONFLICTED
        return {"state": state, "funding": funding, "closing": closing,
                "closing_type": closing_found[1] if closing_found else None}
