"""``ctplugin audit SOURCE [--prevouts FILE | --rpc URL]``: audit real Elements / Liquid data.

Every range proof (outputs and issuances) is verified, and every surjection proof and balance
whose spent outputs are known: from a prevouts file (JSON records of the spent outputs, read
by ``load_prevouts``), from an elementsd-compatible node
(``getrawtransaction``), or from the audited transactions themselves. Nothing is cached or
trusted (``validator.audit``).

SOURCE is one of:
  - raw transaction hex (or - to read it from stdin);
  - a vectors file (``transactions`` or ``blocks`` JSON, as ``ctplugin.elements.vectors``);
  - a file of raw blocks: blk*.dat framing (4-byte magic ‖ LE32 size ‖ block, one magic for the
    whole file: Liquid's, Elements regtest's, ours), or one block or transaction hex per line.
Transactions from blocks may spend each other's outputs (those count as known).

With ``--chain NAME`` SOURCE is a chain file of one of our chains from its genesis (as
``ctplugin chain --chain NAME`` writes it): the policy asset is that chain's, and the UTXO set
the blocks leave is recomputed independently of any node (``validator.audit_utxo_set``) and
printed as ``utxo_set_hash`` (display byte order, as ``ctplugin replay`` and
``gettxoutsetinfo``'s ``hash_serialized_3`` print it).

Prints one table row per transaction (range proofs ok / failed, surjection and balance ok /
failed / unknown) and the failures by output or input. Exit status: 0 all checks passed, 1 some
check failed, 2 the source or the node could not be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ctplugin.elements import Transaction, TxOut, parse_block, parse_transaction
from ctplugin.elements.consensus import COIN
from ctplugin.elements.vectors import vector_entries
from ctplugin.errors import CtpluginError, ParseError, ValidationError
from regtest.elements import CHAIN_OPTION_HELP, chain_from_words
from regtest.params import CHAIN_NAMES
from rpc.helpformat import UserHelpFormatter
from rpcclient import RPCAuthError, RPCClient, RPCClientError, read_cookie
from validator import (
    RECORD_HEADER_SIZE,
    ChainParams,
    TransactionAudit,
    UtxoAudit,
    audit_transactions,
    audit_utxo_set,
    read_chain,
)

LIQUID_POLICY_ASSET = "6f0279e9ed041c3d710a9f57d0c02928416460c4b722ae3457a11eec381c526d"
"""L-BTC, display byte order (the default policy asset: issuance and fee limits)."""

Outpoint = tuple[bytes, int]

_SOURCES: dict[bytes, list[dict[str, Any]]] = {}
"""txid → the ``sources`` of its vectors-file entry (for prevouts given as ``prevout_of``)."""


class AuditInputError(CtpluginError):
    """The source, the prevouts file or the node cannot be read."""


# --- sources -----------------------------------------------------------------------------------

def _hex_items(text: str) -> tuple[list[Transaction], bool]:
    """Whitespace-separated hex items, each a transaction or else a block; (transactions,
    whether any came from a block)."""
    txs: list[Transaction] = []
    from_blocks = False
    for n, item in enumerate(text.split()):
        raw = _hex(item, f"item {n}")
        try:
            txs.append(parse_transaction(raw))
        except ParseError:
            block = _parsed(parse_block, raw, f"item {n} (neither a transaction nor a block)")
            txs.extend(block.transactions)
            from_blocks = True
    return txs, from_blocks


def _hex(value: object, where: str) -> bytes:
    if not isinstance(value, str):
        raise AuditInputError(f"{where} must be a hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise AuditInputError(f"{where} is not hex") from None


def _field(record: dict[str, Any], key: str, where: str) -> Any:
    if key not in record:
        raise AuditInputError(f"{where}: missing key {key!r}")
    return record[key]


def _entries(document: dict[str, Any], key: str, what: str) -> list[dict[str, Any]]:
    """The list ``document[key]`` of JSON objects (each called ``what`` in errors)."""
    entries = document[key]
    if not isinstance(entries, list):
        raise AuditInputError(f"{key} must be a list")
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise AuditInputError(f"{what} {n} is not an object")
    return entries


def _parsed(parse: Any, raw: bytes, where: str) -> Any:
    try:
        return parse(raw)
    except ParseError as exc:
        raise AuditInputError(f"{where}: {exc}") from None


def _vectors(data: object) -> list[Transaction]:
    try:
        key, entries = vector_entries(data)
    except ValueError as exc:
        raise AuditInputError(str(exc)) from None
    txs: list[Transaction] = []
    for n, entry in enumerate(entries):
        raw = bytes.fromhex(entry["hex"])
        if key == "transactions":
            tx = _parsed(parse_transaction, raw, f"transaction {n}")
            sources = entry.get("sources", [])
            _SOURCES[tx.txid] = [s for s in sources if isinstance(s, dict)] \
                if isinstance(sources, list) else []
            txs.append(tx)
        elif entry.get("kind", "block") == "block":
            txs.extend(_parsed(parse_block, raw, f"block {n}").transactions)
    return txs


def _json(data: bytes | str) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise AuditInputError(f"invalid JSON at line {exc.lineno} column {exc.colno}: "
                              f"{exc.msg}") from None
    except (UnicodeDecodeError, RecursionError):
        raise AuditInputError("invalid JSON") from None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # e.g. a transaction's hex is too long to be a file name
        return False


def load_source(source: str) -> tuple[list[Transaction], bool]:
    """The transactions of SOURCE (module docstring), and whether they came from blocks (then
    they may spend each other's outputs)."""
    try:
        if source == "-":
            return _hex_items(sys.stdin.read())
        path = Path(source)
        if not _is_file(path):
            if not _HEX_TEXT.issuperset(source.encode(errors="replace")):
                raise AuditInputError("no such file, and not transaction or block hex")
            return _hex_items(source)
        data = path.read_bytes()
        if data.lstrip()[:1] in (b"{", b"["):
            document = _json(data)
            return _vectors(document), "blocks" in document
        if _HEX_TEXT.issuperset(data[:4096]):
            return _hex_items(data.decode())
        if len(data) < RECORD_HEADER_SIZE:
            raise ParseError(0, "bad block-file magic or truncated frame header")
        # one magic for the whole file, the first frame's: Liquid's, Elements regtest's, ours
        blocks = read_chain(path, data[:4])
        return [tx for raw in blocks for tx in parse_block(raw).transactions], True
    except AuditInputError as exc:
        raise AuditInputError(f"cannot read {source!r}: {exc}") from None
    except (OSError, ParseError) as exc:
        raise AuditInputError(f"cannot read {source!r}: {exc}") from None


_HEX_TEXT = frozenset(b"0123456789abcdefABCDEF \t\r\n")


# --- spent outputs -----------------------------------------------------------------------------

def _outpoint_of(record: dict[str, Any], txs: list[Transaction]) -> Outpoint | None:
    """The outpoint of a record that names it by the spending transaction instead
    (``prevout_of``: "<what> transaction, input N", ``source``: that transaction's repository,
    path and locator): input N of the audited transaction from the same source, if any."""
    index = str(record["prevout_of"]).rpartition(", input ")[2]
    where = record.get("source")
    if not isinstance(where, dict):
        where = {}
    for tx in txs:
        for src in _SOURCES.get(tx.txid, []):
            if (src.get("source_repo"), src.get("source_path")) == (
                    where.get("source_repo"), where.get("source_path")) and \
                    str(src.get("locator", "")).startswith(str(where.get("locator", "?"))) and \
                    index.isdigit() and int(index) < len(tx.inputs):
                txin = tx.inputs[int(index)]
                return txin.prevout_hash, txin.prevout_index
    return None


def _prevout_record(record: dict[str, Any], txs: list[Transaction], where: str
                    ) -> tuple[Outpoint | None, TxOut]:
    """One known_prevouts.json record (txid and asset ids in display byte order)."""
    def hex_of(key: str) -> bytes:
        return _hex(_field(record, key, where), f"{where}: {key}")

    asset = (hex_of("assetcommitment") if record.get("assetcommitment")
             else hex_of("asset")[::-1])
    if record.get("amountcommitment"):
        value: int | bytes = hex_of("amountcommitment")
    else:
        amount = _field(record, "amount_btc", where)
        if isinstance(amount, bool) or not isinstance(amount, int | float | str):
            raise AuditInputError(f"{where}: amount_btc is not a number")
        try:
            value = round(float(amount) * COIN)
        except (ValueError, OverflowError):
            raise AuditInputError(f"{where}: amount_btc is not a number") from None
    try:
        out = TxOut(asset=asset, value=value, script_pubkey=hex_of("scriptPubKey"))
    except CtpluginError as exc:
        raise AuditInputError(f"{where}: {exc}") from None
    if "prevout_txid" not in record:
        if "prevout_of" not in record:
            raise AuditInputError(f"{where}: missing key 'prevout_txid' (or 'prevout_of')")
        return _outpoint_of(record, txs), out
    vout = _field(record, "vout", where)
    if isinstance(vout, bool) or not isinstance(vout, int) or not 0 <= vout <= 0xFFFF_FFFF:
        raise AuditInputError(f"{where}: vout is not an output index")
    txid = hex_of("prevout_txid")
    if len(txid) != 32:
        raise AuditInputError(f"{where}: prevout_txid is not 32 bytes")
    return (txid[::-1], vout), out


def load_prevouts(path: str, txs: list[Transaction]) -> dict[Outpoint, TxOut]:
    """Spent outputs from a known_prevouts.json-style file; records naming their outpoint by
    the spending transaction are matched against ``txs``."""
    try:
        document = _json(Path(path).read_bytes())
        if not isinstance(document, dict) or "prevouts" not in document:
            raise AuditInputError("a prevouts file is a JSON object with 'prevouts'")
        pairs = [_prevout_record(r, txs, f"record {n}")
                 for n, r in enumerate(_entries(document, "prevouts", "record"))]
        return {outpoint: out for outpoint, out in pairs if outpoint is not None}
    except AuditInputError as exc:
        raise AuditInputError(f"cannot read the prevouts file {path!r}: {exc}") from None
    except OSError as exc:
        raise AuditInputError(f"cannot read the prevouts file {path!r}: {exc.strerror}") from None


def fetch_prevouts(client: RPCClient, txs: list[Transaction],
                   known: dict[Outpoint, TxOut]) -> dict[Outpoint, TxOut]:
    """The spent outputs not yet known, from the node's ``getrawtransaction`` (one batch)."""
    own = {tx.txid for tx in txs}
    wanted = sorted({txin.prevout_hash for tx in txs if not tx.is_coinbase for txin in tx.inputs
                     if not txin.is_pegin and txin.prevout_hash not in own
                     and (txin.prevout_hash, txin.prevout_index) not in known})
    if not wanted:
        return {}
    found: dict[Outpoint, TxOut] = {}
    try:
        answers = client.batch([("getrawtransaction", [txid[::-1].hex()]) for txid in wanted])
        for txid, answer in zip(wanted, answers):
            parent = parse_transaction(bytes.fromhex(str(answer)))
            if parent.txid != txid:
                raise AuditInputError("the node returned another transaction for "
                                      f"{txid[::-1].hex()}")
            found.update(((txid, n), out) for n, out in enumerate(parent.outputs))
    except RPCAuthError:
        raise AuditInputError(f"the node {client.url} refused the credentials") from None
    except RPCClientError as exc:
        raise AuditInputError(f"the node {client.url}: {exc}") from None
    except ValueError as exc:
        raise AuditInputError(str(exc)) from None
    return found


# --- report ------------------------------------------------------------------------------------

def _cell(status: str, ok: int, failed: int) -> str:
    if status in ("ok", "failed") and ok + failed:
        return f"{status} ({ok}/{ok + failed})"
    return status


def render(results: list[TransactionAudit]) -> str:
    rows = [("transaction", "range proofs", "surjection", "balance")]
    for r in results:
        if r.range_ok + r.range_failed == 0:  # explicit amounts only (a coinbase...): "0 ok"
            ranges = "none"                    # would read as a verdict on nothing
        else:
            ranges = f"{r.range_ok} ok" + (f", {r.range_failed} failed" if r.range_failed
                                           else "")
        rows.append((r.txid, ranges, _cell(r.surjection, r.surjection_ok, r.surjection_failed),
                     r.balance))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if k:
            lines += [f"    FAIL {p}" for p in results[k - 1].problems]
            lines += [f"    note {n}" for n in results[k - 1].notes]
    failed = sum(r.failed for r in results)
    proofs = sum(r.range_ok + r.range_failed for r in results)
    surjections = sum(r.surjection_ok + r.surjection_failed for r in results)
    balances = sum(r.balance_checked for r in results)
    unknown = sum(r.spent_unknown for r in results)
    lines.append(f"{len(results)} transactions, {proofs} range proofs, {surjections} "
                 f"surjection proofs, {balances} balances checked, {unknown} transactions lacking "
                 f"spent outputs, {failed} transactions with failures")
    return "\n".join(lines)


DESCRIPTION = """\
Audit real Elements / Liquid data, trusting nothing and caching nothing: every range proof
(of outputs and issuances) is verified, and every surjection proof and balance whose spent
outputs are known (from --prevouts, from a node with --rpc, or from the audited
transactions themselves).

SOURCE is one of:
  - a raw transaction in hex (or - to read it from stdin);
  - a vectors file (transactions or blocks JSON);
  - a file of raw blocks in blk*.dat framing (Liquid's, Elements regtest's or our magic),
    or one block or transaction in hex per line;
  - with --chain NAME: a chain file of one of our chains from its genesis ("ctplugin chain
    --out"); the UTXO set hash the blocks leave is printed too, as "ctplugin replay" and
    gettxoutsetinfo's hash_serialized_3 show it.

Prints one row per transaction and the failures by output or input. Exit status: 0 all
checks passed, 1 some check failed, 2 the source or the node could not be read.
"""


def _par(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of threads") from None
    if not 0 <= value <= 64:
        raise argparse.ArgumentTypeError("must be in 0..64 (0 = all cores)")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ctplugin audit", description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter)
    parser.add_argument("source", help="transaction hex, - (stdin), a vectors file or a file "
                                       "of raw blocks")
    known = parser.add_mutually_exclusive_group()
    known.add_argument("--prevouts", metavar="FILE",
                       help='the spent outputs: a JSON object {"prevouts": [...]} of records '
                            "with prevout_txid, vout, asset or assetcommitment, amount_btc or "
                            "amountcommitment, scriptPubKey")
    known.add_argument("--rpc", metavar="URL", help="an elementsd-compatible node: "
                                                    "http://[USER:PASS@]HOST:PORT")
    parser.add_argument("--rpccookiefile", metavar="FILE",
                        help="the node's .cookie (instead of USER:PASS)")
    parser.add_argument("--policy-asset", default=None, metavar="ASSET",
                        help="the policy asset id, display byte order (default: the --chain's, "
                             "else L-BTC)")
    parser.add_argument("--chain", choices=CHAIN_NAMES, default=None,
                        help="SOURCE is this chain's chain file from its genesis: also print "
                             "the UTXO set hash it leaves")
    parser.add_argument("--chain-option", action="append", default=[], metavar="NAME=VALUE",
                        help=CHAIN_OPTION_HELP + "; the same as the chain was built with")
    parser.add_argument("--par", "--threads", dest="threads", type=_par, default=0,
                        metavar="N",
                        help="verification threads, 1..64, 0 = all cores (default; as Core's "
                             "-par)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    try:
        txs, from_blocks = load_source(args.source)
        prevouts = load_prevouts(args.prevouts, txs) if args.prevouts else {}
        if args.rpc:
            auth = read_cookie(args.rpccookiefile) if args.rpccookiefile else None
            with RPCClient.from_url(args.rpc, auth=auth) as client:
                prevouts.update(fetch_prevouts(client, txs, prevouts))
        if args.chain_option and not args.chain:
            raise AuditInputError("--chain-option goes with --chain")
        params = chain_from_words(args.chain, args.chain_option) if args.chain else None
        if args.policy_asset is not None:
            policy_asset = _hex(args.policy_asset, "--policy-asset")[::-1]
        elif params is not None:
            policy_asset = params.policy_asset
        else:
            policy_asset = _hex(LIQUID_POLICY_ASSET, "--policy-asset")[::-1]
        if len(policy_asset) != 32:
            raise AuditInputError("--policy-asset is not a 32-byte asset id")
        utxo = _chain_utxo_set(args.source, params) if params is not None else None
    except (AuditInputError, RPCClientError, ValueError, CtpluginError) as exc:
        print(f"ctplugin audit: {exc}", file=sys.stderr)
        return 2
    results = audit_transactions(txs, prevouts, policy_asset, args.threads or None,
                                 chain_outputs=from_blocks)
    if args.json:
        print(json.dumps([{"txid": r.txid, "range_ok": r.range_ok,
                           "range_failed": r.range_failed, "surjection": r.surjection,
                           "balance": r.balance, "problems": r.problems, "notes": r.notes}
                          for r in results], indent=1))
    else:
        print(render(results))
    if utxo is not None:
        print(f"height {utxo.height}, {utxo.txouts} unspent outputs, "
              f"utxo_set_hash {utxo.utxo_set_hash[::-1].hex()}",
              file=sys.stderr if args.json else sys.stdout)
    return 1 if any(r.failed for r in results) else 0


def _chain_utxo_set(source: str, params: ChainParams) -> UtxoAudit:
    """The UTXO set of the chain file ``source`` of the chain ``params``."""
    try:
        blocks = [parse_block(raw) for raw in read_chain(source, params.network_magic)]
    except (OSError, CtpluginError) as exc:
        raise AuditInputError(f"cannot read {source!r} as a {params.name} chain file: "
                              f"{exc}") from None
    if not blocks or blocks[0].hash != params.genesis_hash:
        raise AuditInputError(f"{source!r} does not start with {params.name}'s genesis")
    try:
        return audit_utxo_set(blocks, params.connect_genesis_outputs)
    except ValidationError as exc:
        raise AuditInputError(f"{source!r}: the blocks do not connect: {exc}") from None


if __name__ == "__main__":
    sys.exit(main())
