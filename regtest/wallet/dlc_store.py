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

import enum
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
from regtest.wallet.dlc import DlcParty, DlcRole, PartySecrets
from regtest.wallet.ledger import TxState
from regtest.wallet.node_wallet import NodeWallet

PREFIX = b"d"
RECORD_VERSION = 1

class DlcState(enum.StrEnum):
    """Where a contract stands (``listdlcs``' ``state``). The values are the strings stored in a
    record and printed by the RPC calls."""

    # The protocol states this wallet reached: the only ones a record stores.
    OFFERED = "offered"
    """The offerer made the offer; it waits for an accept."""
    ACCEPTED = "accepted"
    """The accepter accepted; it waits for the sign message."""
    SIGNED = "signed"
    """The offerer signed; the accepter broadcasts the funding transaction."""
    FUNDING_BROADCAST = "funding-broadcast"
    """The funding transaction went out (stored by the accepter that broadcast it; read from
    the ledger, for either party, while it is in the mempool)."""
    CLOSING_BROADCAST = "closing-broadcast"
    """This wallet broadcast a CET or the refund."""
    CANCELLED = "cancelled"
    """Withdrawn before its funding went out (``dlccancel``): its coins are free again."""
    # Positions on the chain, read from the wallet's ledger (``DlcBook.status``), never stored.
    FUNDED = "funded"
    CLOSING = "closing"
    CLOSED = "closed"
    REFUNDED = "refunded"
    FUNDING_CONFLICTED = "funding-conflicted"
    """The funding transaction, or one of the contract's coins, was spent otherwise."""


PROTOCOL_STATES = frozenset({DlcState.OFFERED, DlcState.ACCEPTED, DlcState.SIGNED,
                             DlcState.FUNDING_BROADCAST, DlcState.CLOSING_BROADCAST,
                             DlcState.CANCELLED})
"""The states a record stores."""
PENDING = frozenset({DlcState.OFFERED, DlcState.ACCEPTED, DlcState.SIGNED})
"""States whose coins are locked: committed to a funding transaction not broadcast yet."""


class ClosingType(enum.StrEnum):
    """Which transaction spent the funding output (``closingType``)."""

    CET = "cet"
    REFUND = "refund"


@dataclass
class DlcRecord:
    temporary_id: bytes
    role: DlcRole
    secrets: PartySecrets
    offer: OfferDlc
    state: DlcState
    created: int
    accept: AcceptDlc | None = None
    sign: SignDlc | None = None
    funding_txid: bytes | None = None
    closing_txid: bytes | None = None
    contract_id: bytes | None = None
    """Known once the funding transaction is (the accepter's accept, the offerer's sign)."""
    closing_type: ClosingType | None = None
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
            role, state = DlcRole(record["role"]), DlcState(record["state"])
            if state not in PROTOCOL_STATES:
                raise DlcError("bad-record", f"record {key.hex()} stores the state {state}")
            return cls(
                key[len(PREFIX):], role,
                PartySecrets(role, int(secrets["fundingKey"]),
                             tuple((bytes.fromhex(t), int(n)) for t, n in secrets["coins"])),
                messages.parse_offer(record["offer"]), state, int(record["created"]),
                messages.parse_accept(record["accept"]) if record["accept"] else None,
                messages.parse_sign(record["sign"]) if record["sign"] else None,
                bytes.fromhex(record["funding"]) if record["funding"] else None,
                bytes.fromhex(record["closing"]) if record["closing"] else None,
                bytes.fromhex(record["contractId"]) if record.get("contractId") else None,
                ClosingType(record["closingType"]) if record["closingType"] else None,
                [str(o) for o in record["outcome"]],
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

_GONE = (TxState.CONFLICTED, TxState.ABANDONED)
"""Ledger states of a transaction that spends nothing any more."""


@dataclass(frozen=True)
class ChainStatus:
    """A transaction of a contract as the wallet's ledger sees it."""

    txid: bytes
    state: TxState | None
    """None: not in the wallet's ledger."""
    confirmations: int


@dataclass(frozen=True)
class ContractStatus:
    """Where a contract stands: its state and its funding and closing transactions."""

    state: DlcState
    funding: ChainStatus | None
    closing: ChainStatus | None
    closing_type: ClosingType | None


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
            return ChainStatus(txid, None, 0)
        return ChainStatus(txid, wtx.state, wtx.depth(self.wallet.tip_height))

    def inputs_spent(self, record: DlcRecord) -> bool:
        """A coin of the contract is spent by a wallet transaction other than its funding: the
        contract can no longer be funded as signed."""
        ledger = self.wallet.ledger
        return any(txid != record.funding_txid
                   and ledger.txs[txid].state not in _GONE
                   for coin in record.secrets.coins for txid in ledger.spenders.get(coin, ()))

    def closing(self, record: DlcRecord) -> tuple[bytes, ClosingType] | None:
        """(txid, CET or refund) of a wallet transaction spending the funding output."""
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
            if spender.state in _GONE:
                continue
            # A CET's nLockTime is the offer's cet_locktime, below the refund's (validate_offer).
            refund = spender.tx.locktime == record.offer.refund_locktime
            return txid, ClosingType.REFUND if refund else ClosingType.CET
        return None

    def status(self, record: DlcRecord) -> ContractStatus:
        """Where the contract stands (the state machine of ``listdlcs``)."""
        funding = self._status(record.funding_txid)
        closing_found = self.closing(record)
        closing = self._status(closing_found[0]) if closing_found else None
        state = record.state
        if closing is not None and closing.state is TxState.CONFIRMED:
            refunded = closing_found is not None and closing_found[1] is ClosingType.REFUND
            state = DlcState.REFUNDED if refunded else DlcState.CLOSED
        elif closing is not None and closing.state is TxState.MEMPOOL:
            state = DlcState.CLOSING
        elif funding is not None and funding.state is TxState.CONFIRMED:
            state = DlcState.FUNDED
        elif funding is not None and funding.state is TxState.MEMPOOL:
            state = DlcState.FUNDING_BROADCAST
        elif (funding is not None and funding.state is TxState.CONFLICTED) or (
                record.state in PENDING and self.inputs_spent(record)):
            state = DlcState.FUNDING_CONFLICTED
        return ContractStatus(state, funding, closing,
                              closing_found[1] if closing_found else None)
