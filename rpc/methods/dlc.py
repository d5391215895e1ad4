"""The ``dlc`` RPC family: Discreet Log Contracts between the node's wallets (or a peer), on our
chain (``ctplugin.dlc`` Elements contracts, ``regtest.wallet.dlc`` parties; docs/dlc.md).

Life of a contract, as rust-dlc runs it (messages are rust-dlc's JSON with an ``elements`` part;
``ctplugin.dlc.messages``):

1. ``dlcoffer`` (offerer's wallet): contract descriptor, oracle announcements, threshold,
   collateral, refund locktime → the offer_dlc;
2. ``dlcaccept`` (accepter's wallet): the offer → the accept_dlc (every CET adaptor-signed);
3. ``dlcsign`` (offerer): the accept → the sign_dlc (its funding inputs signed);
4. ``dlcfund`` (accepter): the sign → the funding transaction, broadcast;
5. ``dlcexecute`` (either): the oracles' attestations → the winning CET, completed and
   broadcast; ``dlcrefund`` (either): the refund once its locktime is reached;
6. ``listdlcs`` / ``getdlc``: each contract's state — offered, accepted, signed,
   funding-broadcast, funded, funding-conflicted, closing, closed, refunded, cancelled — read
   from the wallet's ledger, so it follows reorganisations and restarts;
7. ``dlccancel``: withdraw an offer not signed yet or an accept not funded yet.

The coins of a contract whose funding is not out yet are locked in the wallet (other spends
leave them alone) until it is funded or cancelled.

Contracts are kept in the wallet's database (``regtest.wallet.dlc_store``). Amounts are BTC as
in every wallet call; inside the rust-dlc messages they are satoshis. Errors: a bad message or
contract is -8 with the DLC reason ("bad-adaptor-signature: ..."), an unknown contract -5,
missing funds -6, a transaction the node refuses -26 with the validator's reject reason.
"""

from __future__ import annotations

import contextlib
import itertools
import time
import weakref
from collections.abc import Iterator
from typing import Any

from ctplugin.dlc import messages
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import (
    ContractInfo,
    ContractInfoItem,
    NumericDescriptor,
    OracleSet,
    parse_attestation,
)
from ctplugin.dlc.multi_oracle import DifferenceParams
from ctplugin.dlc.oracle import OracleAttestation
from ctplugin.dlc.payout import (
    PayoutFunction,
    PayoutPoint,
    PolynomialPiece,
    RoundingInterval,
    RoundingIntervals,
)
from ctplugin.elements import Transaction
from regtest.wallet.dlc import ACCEPT, OFFER
from regtest.wallet.dlc_store import (
    ACCEPTED,
    CANCELLED,
    CLOSING_BROADCAST,
    FUNDING_BROADCAST,
    FUNDING_CONFLICTED,
    OFFERED,
    PENDING,
    SIGNED,
    ChainStatus,
    DlcBook,
    DlcRecord,
)
from regtest.wallet.node_wallet import NodeWallet
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.methods.mempool import submit_transaction
from rpc.params import amount_from_value, amount_json, parse_hex
from rpc.registry import Kind, Locking, optional, required, rpc

_STDIN = (" Messages are large (a 2-of-3 x 10-digit accept is ~460 kB, over the 128 kB limit "
          "of one command-line argument): pass them on stdin, one per line, e.g. jq -c "
          ".accept accept.json | ctplugin cli --rpcwallet=alice --stdin dlcsign")

_BOOKS: weakref.WeakKeyDictionary[NodeWallet, DlcBook] = weakref.WeakKeyDictionary()


def _book(wallet: NodeWallet) -> DlcBook:
    """The wallet's contracts (loaded on first use; callers hold the wallet's lock)."""
    book = _BOOKS.get(wallet)
    if book is None:
        try:
            book = _BOOKS[wallet] = DlcBook(wallet)
        except DlcError as exc:
            raise RpcError(RpcCode.DATABASE_ERROR, str(exc)) from None
    return book


@contextlib.contextmanager
def _contracts(wallet: NodeWallet) -> Iterator[DlcBook]:
    """The wallet's contracts under its lock; a ``DlcError`` inside becomes the RPC error (-6
    for missing funds, else -8 with the DLC reason)."""
    try:
        with wallet.lock:
            yield _book(wallet)
    except DlcError as exc:
        if exc.reason == "insufficient-funds":
            raise RpcError(RpcCode.WALLET_INSUFFICIENT_FUNDS,
                           f"Insufficient funds: {exc.detail}") from None
        raise RpcError(RpcCode.INVALID_PARAMETER, str(exc)) from None


def _id(text: Any, name: str = "contract_id") -> bytes:
    raw = parse_hex(text, name)
    if len(raw) != 32:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"{name} must be 32 bytes")
    return raw


def _record(book: DlcBook, contract_id: Any) -> DlcRecord:
    record = book.find(_id(contract_id))
    if record is None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Unknown contract id")
    return record


def _broadcast(call: Call, tx: Transaction) -> None:
    with call.node.chain_lock:
        submit_transaction(call, tx)


# --- the contract descriptor ----------------------------------------------------------------

def _descriptor(obj: dict[str, Any]) -> NumericDescriptor:
    """rust-dlc's ``numericOutcomeContractDescriptor`` (as in an offer), or the short form
    ``{"numDigits": n, "payoutPoints": [[outcome, offer payout in sat], ...], "roundingMod":
    sat}`` for a piecewise-linear payout."""
    if "numericOutcomeContractDescriptor" in obj:
        parsed = messages.parse_contract_descriptor(obj, "contract")
        if not isinstance(parsed, NumericDescriptor):
            raise DlcError("unsupported", "only numeric contracts")
        return parsed
    digits = obj.get("numDigits")
    points = obj.get("payoutPoints")
    rounding = obj.get("roundingMod", 1)
    if (not isinstance(digits, int) or isinstance(digits, bool) or not 1 <= digits <= 32
            or not isinstance(points, list) or len(points) < 2
            or not isinstance(rounding, int) or isinstance(rounding, bool) or rounding < 1):
        raise DlcError("bad-contract", "expected numDigits (1..32), payoutPoints (at least two "
                                       "[outcome, payout] pairs) and roundingMod >= 1")
    pairs = []
    for point in points:
        if (not isinstance(point, list) or len(point) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                           for v in point)):
            raise DlcError("bad-contract", "payoutPoints are [outcome, payout] integer pairs")
        pairs.append(PayoutPoint(point[0], point[1]))
    pieces = tuple(PolynomialPiece((a, b)) for a, b in itertools.pairwise(pairs))
    return NumericDescriptor(digits, PayoutFunction(pieces),
                             RoundingIntervals((RoundingInterval(0, rounding),)))


def _oracle_params(obj: Any) -> DifferenceParams | None:
    """rust-dlc's ``oracleParams`` (oracles may attest values a bounded distance apart)."""
    if obj is None:
        return None
    usage = ("expected {\"maxErrorExp\": n, \"minSupportExp\": n, \"maximizeCoverage\": "
             "bool}")
    if not isinstance(obj, dict) or set(obj) - {"maxErrorExp", "minSupportExp",
                                                "maximizeCoverage"}:
        raise DlcError("bad-oracle-params", usage)
    exps = [obj.get("maxErrorExp"), obj.get("minSupportExp")]
    coverage = obj.get("maximizeCoverage", False)
    ints = [v for v in exps if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 32]
    if len(ints) != 2 or not isinstance(coverage, bool):
        raise DlcError("bad-oracle-params", usage)
    return DifferenceParams(ints[0], ints[1], coverage)


def _options(options: dict[str, Any] | None, known: set[str]) -> dict[str, Any]:
    options = options or {}
    unknown = set(options) - known
    if unknown:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"Unknown option {sorted(unknown)[0]}")
    return options


def _int_option(options: dict[str, Any], name: str, default: int) -> int:
    value = options.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, f"{name} must be a non-negative integer")
    return value


# --- summaries ------------------------------------------------------------------------------

def _tx_json(status: ChainStatus | None) -> dict[str, Any] | None:
    if status is None:
        return None
    return {"txid": status.txid[::-1].hex(), "state": status.state,
            "confirmations": status.confirmations}


def _summary(book: DlcBook, record: DlcRecord) -> dict[str, Any]:
    offer = record.offer
    total = offer.contract_info.total_collateral
    own = offer.offer_collateral if record.role == OFFER else total - offer.offer_collateral
    status = book.status(record)
    announcements = offer.contract_info.items[0].oracles.announcements
    out: dict[str, Any] = {
        "temporaryContractId": record.temporary_id.hex(),
        "contractId": record.contract_id.hex() if record.contract_id else None,
        "role": record.role, "state": status["state"],
        "totalCollateral": amount_json(total), "collateral": amount_json(own),
        "feeRatePerVb": offer.fee_rate_per_vb, "cetLocktime": offer.cet_locktime,
        "refundLocktime": offer.refund_locktime,
        "oracles": [a.public_key.hex() for a in announcements],
        "eventId": announcements[0].event.event_id,
        "threshold": offer.contract_info.items[0].oracles.threshold,
        "confidentialFunding": bool(offer.elements and offer.elements.confidential_funding),
        "funding": _tx_json(status["funding"]), "closing": _tx_json(status["closing"]),
        "closingType": status["closing_type"]}
    if record.outcome:
        out["outcome"] = record.outcome
    if record.payouts:
        offer_payout, accept_payout = record.payouts
        out["payout"] = amount_json(offer_payout if record.role == OFFER else accept_payout)
    return out


# --- the calls ------------------------------------------------------------------------------

@rpc("dlc", wallet=True, locking=Locking.SELF,
     args=[required("contract", Kind.OBJ, "A numeric contract descriptor: rust-dlc's "
                    "{\"numericOutcomeContractDescriptor\": {...}} or {\"numDigits\": n, "
                    "\"payoutPoints\": [[outcome, offer payout in sat], ...], \"roundingMod\": "
                    "sat} for a piecewise-linear payout"),
           required("oracles", Kind.ARR, "The oracles' announcements (rust-dlc JSON)"),
           required("threshold", Kind.INT, "How many oracles must attest"),
           required("total_collateral", Kind.AMOUNT, "Both parties' collateral in BTC"),
           required("offer_collateral", Kind.AMOUNT, "This wallet's collateral in BTC"),
           required("refund_locktime", Kind.INT, "Height (or time) from which the refund is "
                    "valid"),
           optional("options", Kind.OBJ, None, "{\"fee_rate\": sat/vB (default 1), "
                    "\"cet_locktime\": height (default the tip's), \"confidential_funding\": "
                    "bool (default true), \"oracle_params\": {\"maxErrorExp\", "
                    "\"minSupportExp\", \"maximizeCoverage\"}}")],
     description="Offer a DLC on our chain funded by this wallet: returns the offer_dlc "
                 "(rust-dlc JSON) to give the counterparty.",
     result='{"temporaryContractId": "hex", "offer": {rust-dlc offer_dlc}}',
     examples=['\'{"numDigits":10,"payoutPoints":[[0,0],[200,0],[800,200000000],'
               '[1023,200000000]],"roundingMod":1000000}\' \'[{announcement}, ...]\' 2 2 1 '
               '500'])
def dlcoffer(call: Call, contract: dict[str, Any], oracles: list[Any], threshold: int,
             total_collateral: Any, offer_collateral: Any, refund_locktime: int,
             options: dict[str, Any] | None) -> dict[str, Any]:
    opts = _options(options, {"fee_rate", "cet_locktime", "confidential_funding",
                              "oracle_params"})
    total = amount_from_value(total_collateral)
    own = amount_from_value(offer_collateral)
    tip = call.chain.tip.height
    fee_rate = _int_option(opts, "fee_rate", 1)
    cet_locktime = _int_option(opts, "cet_locktime", tip)
    confidential = opts.get("confidential_funding", True)
    if not isinstance(confidential, bool):
        raise RpcError(RpcCode.INVALID_PARAMETER, "confidential_funding must be a boolean")
    with _contracts(call.wallet) as book:
        announcements = tuple(messages.parse_announcement(a, f"oracles[{n}]")
                              for n, a in enumerate(oracles))
        info = ContractInfo(total, (ContractInfoItem(
            _descriptor(contract),
            OracleSet(threshold, announcements, _oracle_params(opts.get("oracle_params")))),),
            False)
        offer, secrets = book.party.offer(
            info, own, fee_rate=fee_rate, cet_locktime=cet_locktime,
            refund_locktime=refund_locktime, height=tip + 1,
            confidential_funding=confidential)
        book.save(DlcRecord(offer.temporary_contract_id, OFFER, secrets, offer, OFFERED,
                            int(time.time())))
    return {"temporaryContractId": offer.temporary_contract_id.hex(),
            "offer": messages.offer_json(offer)}


@rpc("dlc", wallet=True, locking=Locking.SELF,
     args=[required("offer", Kind.OBJ, "The offer_dlc (rust-dlc JSON)")],
     description="Accept a DLC offer with this wallet's funds: checks the offer, adaptor-signs "
                 "every CET and signs the refund; returns the accept_dlc for the offerer."
                 + _STDIN,
     result='{"temporaryContractId": "hex", "contractId": "hex", "accept": {rust-dlc '
            'accept_dlc}}')
def dlcaccept(call: Call, offer: dict[str, Any]) -> dict[str, Any]:
    tip = call.chain.tip.height
    with _contracts(call.wallet) as book:
        parsed = messages.parse_offer(offer)
        if parsed.temporary_contract_id in book.records:
            raise RpcError(RpcCode.INVALID_PARAMETER, "This wallet already has the contract")
        contract, accept, secrets = book.party.accept(parsed, height=tip + 1)
        record = DlcRecord(parsed.temporary_contract_id, ACCEPT, secrets, parsed, ACCEPTED,
                           int(time.time()), accept=accept, contract_id=contract.contract_id())
        book.save(record)
        book.remember(record, contract)
    return {"temporaryContractId": parsed.temporary_contract_id.hex(),
            "contractId": contract.contract_id().hex(), "accept": messages.accept_json(accept)}


@rpc("dlc", wallet=True, locking=Locking.SELF,
     args=[required("accept", Kind.OBJ, "The accept_dlc (rust-dlc JSON)")],
     description="The offerer's answer to an accept: checks every adaptor signature and the "
                 "accepter's funding side, signs this wallet's funding inputs, adaptor-signs "
                 "every CET; returns the sign_dlc for the accepter." + _STDIN,
     result='{"contractId": "hex", "sign": {rust-dlc sign_dlc}}')
def dlcsign(call: Call, accept: dict[str, Any]) -> dict[str, Any]:
    with _contracts(call.wallet) as book:
        parsed = messages.parse_accept(accept)
        record = book.records.get(parsed.temporary_contract_id)
        if record is None or record.role != OFFER:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "No offer of this wallet has that temporary contract id")
        if record.state != OFFERED:
            raise RpcError(RpcCode.INVALID_PARAMETER, f"The contract is {record.state}")
        contract, sign, _ = book.party.sign(record.offer, parsed, record.secrets)
        record.accept, record.sign, record.state = parsed, sign, SIGNED
        record.funding_txid, record.contract_id = contract.funding.txid, sign.contract_id
        book.save(record, contract.funding)
        book.remember(record, contract)
    return {"contractId": sign.contract_id.hex(), "sign": messages.sign_json(sign)}


@rpc("dlc", wallet=True, locking=Locking.SELF,
     args=[required("sign", Kind.OBJ, "The sign_dlc (rust-dlc JSON)")],
     description="The accepter's last step: checks the sign message, signs this wallet's "
                 "funding inputs and broadcasts the funding transaction." + _STDIN,
     result='{"contractId": "hex", "fundingTxid": "hex"}')
def dlcfund(call: Call, sign: dict[str, Any]) -> dict[str, Any]:
    with _contracts(call.wallet) as book:
        parsed = messages.parse_sign(sign)
        record = next((r for r in book.records.values() if r.role == ACCEPT
                       and r.state == ACCEPTED and r.contract_id == parsed.contract_id), None)
        if record is None:
            raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                           "No accepted contract of this wallet has that contract id")
        contract = book.contract(record)
        funding = book.party.finalize(contract, parsed, record.secrets)
        record.sign, record.funding_txid = parsed, funding.txid
        book.save(record, contract.funding)
    _broadcast(call, funding)
    with _contracts(call.wallet) as book:
        record.state = FUNDING_BROADCAST
        book.save(record, sync=False)
    return {"contractId": parsed.contract_id.hex(), "fundingTxid": funding.txid_hex}


def _attestations(book: DlcBook, record: DlcRecord,
                  given: list[Any]) -> dict[int, OracleAttestation]:
    """Each attestation matched to its oracle (by public key) and checked against the
    announcement's nonces."""
    oracles = record.offer.contract_info.items[0].oracles
    announcements = oracles.announcements
    by_key = {a.public_key: n for n, a in enumerate(announcements)}
    out = {}
    for n, obj in enumerate(given):
        attestation = parse_attestation(obj, f"attestations[{n}]")
        index = by_key.get(attestation.public_key)
        if index is None:
            raise DlcError("unknown-oracle", f"attestation {n} is by an oracle of no contract")
        if index in out:
            raise DlcError("duplicate-attestation",
                           f"attestation {n}: oracle {attestation.public_key.hex()} twice")
        event = announcements[index].event
        if attestation.event_id and attestation.event_id != event.event_id:
            raise DlcError("bad-attestation", f"attestation {n} is for another event")
        if not attestation.verify(event.nonces, book.party.scheme):
            raise DlcError("bad-attestation", f"attestation {n} does not verify")
        out[index] = attestation
    if len(out) < oracles.threshold:
        raise DlcError("threshold", f"{len(out)} attestation(s), the contract needs "
                                    f"{oracles.threshold}")
    return out


@rpc("dlc", wallet=True, locking=Locking.SELF,
     args=[required("contract_id", Kind.HEX, "The contract (or temporary contract) id"),
           required("attestations", Kind.ARR, "The oracles' attestations (rust-dlc JSON), at "
                    "least the threshold's")],
     description="Close a funded contract with the oracles' attestations: the CET they unlock "
                 "is found, the counterparty's adaptor signature decrypted, co-signed, proven "
                 "and broadcast.",
     result='{"txid": "hex", "outcome": [digits], "payout": n (this wallet\'s, BTC)}')
def dlcexecute(call: Call, contract_id: str, attestations: list[Any]) -> dict[str, Any]:
    with _contracts(call.wallet) as book:
        record = _record(book, contract_id)
        if record.sign is None or record.accept is None:
            raise RpcError(RpcCode.INVALID_PARAMETER, "The contract is not signed yet")
        contract = book.contract(record)
        given = _attestations(book, record, attestations)
        theirs = (record.accept.cet_adaptor_signatures if record.role == OFFER
                  else record.sign.cet_adaptor_signatures)
        cet = book.party.execute(contract, record.secrets, theirs, given)
        entry = contract.entries[contract.find_adaptor_index(given)]
        offer_payout, accept_payout, _ = contract.cet_terms[entry.cet_index]
    _broadcast(call, cet)
    with _contracts(call.wallet) as book:
        record.state, record.closing_txid, record.closing_type = CLOSING_BROADCAST, cet.txid, "cet"
        record.outcome = list(given[entry.paths[0][0]].outcomes)
        record.payouts = [offer_payout, accept_payout]
        book.save(record, sync=False)
    own = offer_payout if record.role == OFFER else accept_payout
    return {"txid": cet.txid_hex, "outcome": record.outcome, "payout": amount_json(own)}


@rpc("dlc", wallet=True, locking=Locking.SELF,
     args=[required("contract_id", Kind.HEX, "The contract (or temporary contract) id")],
     description="Broadcast the contract's refund transaction (valid from its refund "
                 "locktime): both collaterals return.",
     result='{"txid": "hex"}')
def dlcrefund(call: Call, contract_id: str) -> dict[str, Any]:
    with _contracts(call.wallet) as book:
        record = _record(book, contract_id)
        if record.sign is None or record.accept is None:
            raise RpcError(RpcCode.INVALID_PARAMETER, "The contract is not signed yet")
        theirs = (record.accept.refund_signature if record.role == OFFER
                  else record.sign.refund_signature)
        refund = book.party.refund(book.contract(record), record.secrets, theirs)
    _broadcast(call, refund)
    with _contracts(call.wallet) as book:
        record.state, record.closing_txid, record.closing_type = (CLOSING_BROADCAST,
                                                                  refund.txid, "refund")
        total = record.offer.contract_info.total_collateral
        record.payouts = [record.offer.offer_collateral, total - record.offer.offer_collateral]
        book.save(record, sync=False)
    return {"txid": refund.txid_hex}


@rpc("dlc", wallet=True, locking=Locking.SELF,
     args=[required("contract_id", Kind.HEX, "The contract (or temporary contract) id")],
     description="Withdraw a contract whose funding is not out (offered, accepted, signed, or "
                 "funding-conflicted): its coins are free for other spends again. A signed "
                 "contract stays valid until one of those coins is spent: the accepter holds "
                 "what it needs to broadcast the funding (listdlcs would then show it funded, "
                 "and dlcexecute/dlcrefund still work).",
     result='{"temporaryContractId": "hex", "state": "cancelled"}')
def dlccancel(call: Call, contract_id: str) -> dict[str, Any]:
    with _contracts(call.wallet) as book:
        record = _record(book, contract_id)
        state = book.status(record)["state"]
        if record.state not in PENDING or state not in (*PENDING, FUNDING_CONFLICTED):
            raise RpcError(RpcCode.INVALID_PARAMETER, f"The contract is {state}: only one "
                                                      "whose funding is not out can be "
                                                      "withdrawn")
        record.state = CANCELLED
        book.save(record)
    return {"temporaryContractId": record.temporary_id.hex(), "state": CANCELLED}


@rpc("dlc", wallet=True,
     description="The wallet's DLCs with their state: offered, accepted, signed, "
                 "funding-broadcast, funded, funding-conflicted (the funding transaction, or "
                 "one of the contract's coins, was spent otherwise), closing, closed, refunded "
                 "or cancelled (from the wallet's view of the chain: it follows "
                 "reorganisations).",
     result="[{contract summary}, ...]")
def listdlcs(call: Call) -> list[dict[str, Any]]:
    book = _book(call.wallet)
    records = sorted(book.records.values(), key=lambda r: (r.created, r.temporary_id))
    return [_summary(book, r) for r in records]


@rpc("dlc", wallet=True,
     args=[required("contract_id", Kind.HEX, "The contract (or temporary contract) id"),
           optional("verbose", Kind.BOOL, False, "Include the offer, accept and sign messages")],
     description="One DLC's summary (as listdlcs), with its messages when verbose.",
     result="{contract summary}")
def getdlc(call: Call, contract_id: str, verbose: bool) -> dict[str, Any]:
    book = _book(call.wallet)
    record = _record(book, contract_id)
    out = _summary(book, record)
    if verbose:
        out["offer"] = messages.offer_json(record.offer)
        out["accept"] = messages.accept_json(record.accept) if record.accept else None
        out["sign"] = messages.sign_json(record.sign) if record.sign else None
    return out
