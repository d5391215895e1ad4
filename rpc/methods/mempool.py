"""Mempool calls: getrawmempool, getmempoolinfo, getmempoolentry, testmempoolaccept,
sendrawtransaction (docs/node-rpc.md §1.4)."""

from __future__ import annotations

from typing import Any

from ctplugin.elements import Transaction
from ctplugin.elements.script import is_unspendable
from ctplugin.errors import ValidationError
from rpc.chainlog import log_rejected
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.params import amount_from_value, amount_json, decode_transaction_hex, parse_hash
from rpc.registry import Kind, optional, required, rpc
from validator import MempoolEntry, reasons

MAX_TEST_ACCEPT = 25
INCREMENTAL_RELAY_FEE = 100  # sat/kvB: Elements' DEFAULT_INCREMENTAL_RELAY_FEE (policy/policy.h)
DEFAULT_MAX_RAW_TX_FEE_RATE = 10_000_000  # sat/kvB: 0.10 BTC/kvB, Core's maxfeerate default
MAX_FEE_EXCEEDED = "Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)"
MAX_BURN_EXCEEDED = "Unspendable output exceeds maximum configured by user (maxburnamount)"


def max_fee_rate(value: Any) -> int:
    """sendrawtransaction's / testmempoolaccept's ``maxfeerate`` (BTC/kvB) in sat/kvB; 0 means
    no limit; 1 BTC/kvB or more is refused as Core does."""
    if value is None:
        return DEFAULT_MAX_RAW_TX_FEE_RATE
    rate = amount_from_value(value)
    if rate >= 100_000_000:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Fee rates larger than or equal to 1BTC/kvB are not accepted")
    return rate


def fee_exceeds(call: Call, tx: Transaction, rate: int) -> bool:
    """The transaction's fee (its explicit fee outputs in the policy asset) is above ``rate``
    (sat/kvB) applied to its virtual size (Core's ``CFeeRate::GetFee``)."""
    fee = tx.fees().get(call.node.params.policy_asset, 0)
    return rate > 0 and fee > rate * tx.vsize // 1000


def _check_burn(tx: Transaction, max_burn: int) -> None:
    """Explicit value sent to a provably unspendable script (not a fee output) above
    ``maxburnamount``: -25, before anything is validated."""
    for out in tx.outputs:
        if (not out.is_fee and isinstance(out.value, int) and is_unspendable(out.script_pubkey)
                and out.value > max_burn):
            raise RpcError(RpcCode.VERIFY_ERROR, MAX_BURN_EXCEEDED)


def _fee(entry: MempoolEntry, call: Call) -> int:
    return entry.fees.get(call.node.params.policy_asset, 0)


def entry_json(call: Call, entry: MempoolEntry) -> dict[str, Any]:
    """Core's MempoolEntryToJSON, with the ancestor/descendant sets of the pool."""
    pool = call.node.mempool.entries
    tx = entry.tx
    parents = {txin.prevout_hash for txin in tx.inputs if txin.prevout_hash in pool}
    ancestors = _closure(tx.txid, pool, _parents_of)
    descendants = _closure(tx.txid, pool, _children_index(pool))
    fee = _fee(entry, call)

    def total(txids: set[bytes], attr: str) -> int:
        if attr == "fee":
            return sum(_fee(pool[t], call) for t in txids)
        return sum(pool[t].tx.vsize for t in txids)

    spent_by = sorted(t.txid_hex for t in (pool[d].tx for d in descendants - {tx.txid})
                      if any(i.prevout_hash == tx.txid for i in t.inputs))
    return {
        "vsize": tx.vsize,
        "weight": tx.weight,
        "time": int(entry.time),
        "height": call.node.tip.height,
        "descendantcount": len(descendants),
        "descendantsize": total(descendants, "vsize"),
        "ancestorcount": len(ancestors),
        "ancestorsize": total(ancestors, "vsize"),
        "wtxid": tx.wtxid_hex,
        "fees": {"base": amount_json(fee), "modified": amount_json(fee),
                 "ancestor": amount_json(total(ancestors, "fee")),
                 "descendant": amount_json(total(descendants, "fee"))},
        "depends": sorted(p[::-1].hex() for p in parents),
        "spentby": spent_by,
        "bip125-replaceable": signals_replaceability(call, tx.txid),
        "unbroadcast": False,
    }


MAX_BIP125_RBF_SEQUENCE = 0xFFFFFFFD


def signals_replaceability(call: Call, txid: bytes) -> bool:
    """Core's IsRBFOptIn for a mempool transaction: it or one of its in-pool ancestors has an
    input sequence <= 0xfffffffd. (The signal is reported; replacement itself is not done
    here: a conflicting transaction is refused, txn-mempool-conflict.)"""
    pool = call.node.mempool.entries
    return any(txin.sequence <= MAX_BIP125_RBF_SEQUENCE
               for ancestor in _closure(txid, pool, _parents_of)
               for txin in pool[ancestor].tx.inputs)


def _parents_of(txid: bytes, pool: dict[bytes, MempoolEntry]) -> set[bytes]:
    return {txin.prevout_hash for txin in pool[txid].tx.inputs if txin.prevout_hash in pool}


def _children_index(pool: dict[bytes, MempoolEntry]) -> Any:
    children: dict[bytes, set[bytes]] = {}
    for txid, entry in pool.items():
        for txin in entry.tx.inputs:
            if txin.prevout_hash in pool:
                children.setdefault(txin.prevout_hash, set()).add(txid)
    return lambda txid, _pool: children.get(txid, set())


def _closure(start: bytes, pool: dict[bytes, MempoolEntry], step: Any) -> set[bytes]:
    seen = {start}
    pending = [start]
    while pending:
        for other in step(pending.pop(), pool):
            if other not in seen:
                seen.add(other)
                pending.append(other)
    return seen


@rpc("blockchain", args=[optional("verbose", Kind.BOOL, False, "True for a json object, false "
                                                              "for array of transaction ids"),
                         optional("mempool_sequence", Kind.BOOL, False,
                                  "If verbose=false, returns a json object with transaction "
                                  "list and mempool sequence number attached.")],
     description="Returns all transaction ids in memory pool as a json array of string "
                 "transaction ids.",
     result='for verbose = false: [ "hex", ... ]   (json array) The transaction ids\n'
            'for verbose = true: { "txid" : { getmempoolentry object }, ... }\n'
            'for verbose = false and mempool_sequence = true:\n'
            '{\n'
            '  "txids" : [ "hex", ... ],   (json array)\n'
            '  "mempool_sequence" : n     (numeric) The mempool sequence value.\n'
            '}',
     examples=('true',))
def getrawmempool(call: Call, verbose: bool, mempool_sequence: bool) -> Any:
    entries = list(call.node.mempool.entries.values())
    if verbose:
        if mempool_sequence:
            raise RpcError(RpcCode.INVALID_PARAMETER,
                           "Verbose results cannot contain mempool sequence values.")
        return {e.tx.txid_hex: entry_json(call, e) for e in entries}
    txids = [e.tx.txid_hex for e in entries]
    if mempool_sequence:
        return {"txids": txids, "mempool_sequence": call.context.mempool_sequence}
    return txids


@rpc("blockchain", args=[required("txid", Kind.STR, "The transaction id (must be in mempool)")],
     description="Returns mempool data for given transaction",
     result='{\n'
            '  "vsize" : n,              (numeric) virtual transaction size as defined in '
            'BIP 141\n'
            '  "weight" : n,             (numeric) transaction weight as defined in BIP 141\n'
            '  "time" : xxx,             (numeric) local time transaction entered pool in '
            'seconds since 1 Jan 1970 GMT\n'
            '  "height" : n,             (numeric) block height when transaction entered pool\n'
            '  "descendantcount" : n,    (numeric) number of in-mempool descendant '
            'transactions (including this one)\n'
            '  "descendantsize" : n,     (numeric) virtual transaction size of in-mempool '
            'descendants (including this one)\n'
            '  "ancestorcount" : n,      (numeric) number of in-mempool ancestor transactions '
            '(including this one)\n'
            '  "ancestorsize" : n,       (numeric) virtual transaction size of in-mempool '
            'ancestors (including this one)\n'
            '  "wtxid" : "hex",          (string) hash of serialized transaction, including '
            'witness data\n'
            '  "fees" : { "base", "modified", "ancestor", "descendant" },  (json object) fees '
            'in BTC\n'
            '  "depends" : [ "hex" ],    (json array) unconfirmed transactions used as inputs '
            'for this transaction\n'
            '  "spentby" : [ "hex" ],    (json array) unconfirmed transactions spending '
            'outputs from this transaction\n'
            '  "bip125-replaceable" : true|false,  (boolean) Whether this transaction signals '
            'BIP125 replaceability\n'
            '  "unbroadcast" : true|false  (boolean) Whether this transaction is currently '
            'unbroadcast\n'
            '}',
     examples=('"mytxid"',))
def getmempoolentry(call: Call, txid: str) -> dict[str, Any]:
    entry = call.node.mempool.entries.get(parse_hash(txid, "txid"))
    if entry is None:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Transaction not in mempool")
    return entry_json(call, entry)


@rpc("blockchain", description="Returns details on the active state of the TX memory pool.",
     result='{\n'
            '  "loaded" : true|false,          (boolean) True if the initial load attempt of '
            'the persisted mempool finished\n'
            '  "size" : n,                     (numeric) Current tx count\n'
            '  "bytes" : n,                    (numeric) Sum of all virtual transaction sizes '
            'as defined in BIP 141\n'
            '  "usage" : n,                    (numeric) Total memory usage for the mempool\n'
            '  "total_fee" : n,                (numeric) Total fees for the mempool in BTC, '
            'ignoring modified fees through prioritisetransaction\n'
            '  "maxmempool" : n,               (numeric) Maximum memory usage for the mempool\n'
            '  "mempoolminfee" : n,            (numeric) Minimum fee rate in BTC/kvB for tx '
            'to be accepted\n'
            '  "minrelaytxfee" : n,            (numeric) Current minimum relay fee for '
            'transactions\n'
            '  "incrementalrelayfee" : n,      (numeric) minimum fee rate increment for mempool '
            'limiting or replacement in BTC/kvB\n'
            '  "unbroadcastcount" : n,         (numeric) Current number of transactions that '
            "haven't passed initial broadcast yet\n"
            '  "fullrbf" : true|false          (boolean) True if the mempool accepts RBF '
            'without replaceability signaling inspection\n'
            '}',
     examples=("",))
def getmempoolinfo(call: Call) -> dict[str, Any]:
    entries = list(call.node.mempool.entries.values())
    total_fee = sum(_fee(e, call) for e in entries)
    return {
        "loaded": call.context.mempool_loaded,
        "size": len(entries),
        "bytes": sum(e.tx.vsize for e in entries),
        "usage": sum(e.tx.size for e in entries),
        "total_fee": amount_json(total_fee),
        "maxmempool": 300_000_000,
        "mempoolminfee": amount_json(call.node.mempool.settings.minrelaytxfee),
        "minrelaytxfee": amount_json(call.node.mempool.settings.minrelaytxfee),
        "incrementalrelayfee": amount_json(INCREMENTAL_RELAY_FEE),
        "unbroadcastcount": 0,
        "fullrbf": False,
    }


def _reject_details(exc: ValidationError) -> str:
    return str(exc)


def _reject_message(exc: ValidationError) -> str:
    """sendrawtransaction's -26 message: elementsd's reason (``reasons.elementsd_reason``) with
    its debug text, as Core's "reason, debug"; a folded check keeps its own name after it."""
    reason = reasons.elementsd_reason(exc.reason)
    if reason == exc.reason:
        return str(exc)
    return f"{reason}, value in != value out ({exc})"


@rpc("rawtransactions",
     args=[required("rawtxs", Kind.ARR, "An array of hex strings of raw transactions."),
           optional("maxfeerate", Kind.AMOUNT, None, "Reject transactions whose fee rate is "
                    "higher than the specified value, expressed in BTC/kvB", "0.10")],
     description="Returns result of mempool acceptance tests indicating if raw transaction(s) "
                 "would be accepted by mempool. No transaction is added.",
     result='[\n'
            '  {\n'
            '    "txid" : "hex",           (string) The transaction hash in hex\n'
            '    "wtxid" : "hex",          (string) The transaction witness hash in hex\n'
            '    "allowed" : true|false,   (boolean, optional) Whether this tx would be '
            'accepted to the mempool and pass client-specified maxfeerate\n'
            '    "vsize" : n,              (numeric, optional) Virtual transaction size as '
            "defined in BIP 141 (only present when 'allowed' is true)\n"
            '    "fees" : { "base", "effective-feerate", "effective-includes" },  (json '
            "object, optional) Transaction fees (only present if 'allowed' is true)\n"
            '    "reject-reason" : "str",  (string, optional) Rejection reason (only present '
            "when 'allowed' is false)\n"
            '    "reject-details" : "str"  (string, optional) Rejection details (only '
            "present when 'allowed' is false and rejection details exist)\n"
            '  },\n'
            '  ...\n'
            ']',
     examples=('\'["signedhex"]\'',))
def testmempoolaccept(call: Call, rawtxs: list[Any], maxfeerate: Any) -> list[dict[str, Any]]:
    if not 1 <= len(rawtxs) <= MAX_TEST_ACCEPT:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"Array must contain between 1 and {MAX_TEST_ACCEPT} transactions.")
    rate = max_fee_rate(maxfeerate)
    txs: list[Transaction] = []
    for raw in rawtxs:
        try:
            txs.append(decode_transaction_hex(raw))
        except RpcError:
            raise RpcError(RpcCode.DESERIALIZATION_ERROR,
                           f"TX decode failed: {raw if isinstance(raw, str) else ''} Make sure "
                           "the tx has at least one input.") from None
    results = []
    for tx in txs:
        result: dict[str, Any] = {"txid": tx.txid_hex, "wtxid": tx.wtxid_hex}
        try:
            entry = call.node.test_accept_transaction(tx)
        except ValidationError as exc:
            result.update({"allowed": False,
                           "reject-reason": reasons.elementsd_reason(exc.reason)})
            if exc.detail or exc.output_index is not None or exc.input_index is not None:
                result["reject-details"] = _reject_details(exc)
        else:
            fee = _fee(entry, call)
            if fee_exceeds(call, tx, rate):
                result.update({"allowed": False, "reject-reason": "max-fee-exceeded"})
                results.append(result)
                continue
            result.update({"allowed": True, "vsize": tx.vsize,
                           "fees": {"base": amount_json(fee),
                                    "effective-feerate": amount_json(fee * 1000 // tx.vsize),
                                    "effective-includes": [tx.wtxid_hex]}})
        results.append(result)
    return results


def submit_transaction(call: Call, tx: Transaction) -> MempoolEntry:
    """Mempool acceptance with sendrawtransaction's error mapping (-25/-26/-27)."""
    try:
        return call.node.accept_transaction(tx)
    except ValidationError as exc:
        log_rejected(tx, str(exc))
        # elementsd reports these as RPC_VERIFY_ERROR / already-in-chain, not as a reject (-26)
        if exc.reason == reasons.BAD_TXNS_INPUTS_MISSINGORSPENT:
            raise RpcError(RpcCode.VERIFY_ERROR, reasons.BAD_TXNS_INPUTS_MISSINGORSPENT) from None
        if exc.reason == reasons.TXN_ALREADY_KNOWN:
            raise RpcError(RpcCode.VERIFY_ALREADY_IN_CHAIN,
                           "Transaction outputs already in utxo set") from None
        if exc.reason == reasons.TXN_ALREADY_IN_MEMPOOL:
            raise RpcError(RpcCode.VERIFY_ALREADY_IN_CHAIN,
                           reasons.TXN_ALREADY_IN_MEMPOOL) from None
        raise RpcError(RpcCode.VERIFY_REJECTED, _reject_message(exc)) from None


@rpc("rawtransactions",
     args=[required("hexstring", Kind.HEX, "The hex string of the raw transaction"),
           optional("maxfeerate", Kind.AMOUNT, None, "Reject transactions whose fee rate is "
                    "higher than the specified value, expressed in BTC/kvB", "0.10"),
           optional("maxburnamount", Kind.AMOUNT, None, "Reject transactions with provably "
                    "unspendable outputs above this value", "0")],
     description="Submit a raw transaction (serialized, hex-encoded) to the node's mempool.",
     result='"hex"    (string) The transaction hash in hex',
     examples=('"signedhex"',))
def sendrawtransaction(call: Call, hexstring: str, maxfeerate: Any, maxburnamount: Any) -> str:
    tx = decode_transaction_hex(hexstring)
    rate = max_fee_rate(maxfeerate)
    _check_burn(tx, 0 if maxburnamount is None else amount_from_value(maxburnamount))
    _check_unblinded_nonces(tx)
    if tx.txid in call.node.mempool.entries:
        return tx.txid_hex  # already in the mempool: Core answers the txid again
    if fee_exceeds(call, tx, rate):
        raise RpcError(RpcCode.VERIFY_ERROR, MAX_FEE_EXCEEDED)
    submit_transaction(call, tx)
    return tx.txid_hex


def _check_unblinded_nonces(tx: Transaction) -> None:
    """Elements' CT guard: a 33-byte nonce (a smuggled blinding key) on an explicit output."""
    for out in tx.outputs:
        if out.value_is_explicit and len(out.nonce) == 33 and out.script_pubkey:
            raise RpcError(RpcCode.VERIFY_ERROR,
                           "Transaction output has nonce, but is not blinded. Did you forget to "
                           "call blindrawtransaction, or rawblindrawtransaction?")
