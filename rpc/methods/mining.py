"""Mining calls: generatetoaddress, generateblock, getnewblockhex, submitblock
(docs/node-rpc.md §1.4).

On our chain the block challenge is OP_TRUE, so "mining" is assembling a block
(``rpc.mining``) and connecting it; each block is made and connected under the chain lock,
which is released between blocks so other clients are served while a long run mines.
"""

from __future__ import annotations

import time
from typing import Any

from ctplugin.elements import Block, Transaction, TxOut, parse_block_header
from ctplugin.elements.address import decode_destination
from ctplugin.elements.script import push_data
from ctplugin.errors import EncodingError, ParseError, ValidationError
from rpc.chainlog import log_connect_bench
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.mining import assemble_block, select_transactions
from rpc.params import decode_block_hex, decode_transaction_hex, parse_hash, parse_hex
from rpc.registry import REGISTRY, Kind, Locking, json_type, optional, required, rpc

OP_TRUE_SCRIPT = b"\x51"
OP_RETURN = b"\x6a"
MAX_GENERATE = 1_000_000


def _mine_one(call: Call, miner_script: bytes,
              txs: list[Transaction] | None = None) -> Block:
    """Assemble a block on the tip (mempool selection unless ``txs`` is given), connect it."""
    node = call.node
    fees = None
    if txs is None:
        txs, fees = select_transactions(list(node.mempool.entries.values()),
                                        node.params.policy_asset)
    block = assemble_block(node, txs, miner_script, fees=fees, now=call.context.now())
    note_assembled(call, block)
    result = node.submit_block(block.serialize(), block)
    log_connect_bench(result.report)
    if not result.accepted:
        raise RpcError(RpcCode.VERIFY_ERROR, f"TestBlockValidity failed: {result.bip22}")
    return block


def note_assembled(call: Call, block: Block) -> None:
    """BlockAssembler's m_last_block_weight / m_last_block_num_txs, for getmininginfo (the
    block is kept and weighed when asked: a 1000-transaction block's weight is a pass over
    every transaction, which mining need not wait for)."""
    call.context.last_block = block


def _script_of(call: Call, address: str, message: str) -> bytes:
    try:
        return decode_destination(address, call.node.params.addresses).script_pubkey
    except EncodingError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, message) from None


@rpc("generating",
     args=[required("nblocks", Kind.INT, "How many blocks are generated."),
           required("address", Kind.STR, "The address to send the newly generated bitcoin to."),
           optional("maxtries", Kind.INT, MAX_GENERATE, "How many iterations to try.")],
     description="Mine to a specified address and return the block hashes.",
     result='["hex", ...]    (json array) hashes of blocks generated',
     examples=("11 \"myaddress\"",), locking=Locking.SELF)
def generatetoaddress(call: Call, nblocks: int, address: str, maxtries: int) -> list[str]:
    script = _script_of(call, address, "Error: Invalid address")
    hashes = []
    for _ in range(max(nblocks, 0)):
        call.context.check_interrupt()
        with call.context.chain_lock:
            block = _mine_one(call, script)
        hashes.append(block.header.hash_hex)
    return hashes


@rpc("hidden", args=[optional("nblocks", Kind.INT, None, "How many blocks (ignored: the call "
                                                          "is refused)"),
                     optional("maxtries", Kind.INT, None, "How many iterations (ignored)")],
     hidden=True, locking=Locking.SELF,
     description="has been replaced by the -generate cli option. Refer to -help for more "
                 "information.",
     result='(never returns: the call is refused with its help text)',
     examples=("",))
def generate(call: Call, nblocks: Any, maxtries: Any) -> None:
    raise RpcError(RpcCode.METHOD_NOT_FOUND, generate_help())


def generate_help() -> str:
    method = REGISTRY.get("generate")
    assert method is not None
    return method.help_text()


@rpc("generating",
     args=[required("output", Kind.STR, "The address to send the newly generated bitcoin to."),
           required("transactions", Kind.ARR, "An array of hex strings which are either txids "
                    "or raw transactions. Txids must reference transactions currently in the "
                    "mempool. All transactions must be valid and in valid order."),
           optional("submit", Kind.BOOL, True, "Whether to submit the block before the RPC "
                    "call returns or to return it as hex.")],
     description="Mine a set of ordered transactions to a specified address and return the "
                 "block hash.", locking=Locking.SELF,
     result='{\n'
            '  "hash" : "hex",    (string) hash of generated block\n'
            '  "hex" : "hex"      (string, optional) hex of generated block, only present '
            'when submit=false\n'
            '}',
     examples=('"myaddress" \'["rawtx", "mempool_txid"]\'',))
def generateblock(call: Call, output: str, transactions: list[Any],
                  submit: bool) -> dict[str, Any]:
    script = _script_of(call, output, "Error: Invalid address or descriptor")
    with call.context.chain_lock:
        node = call.node
        txs: list[Transaction] = []
        for item in transactions:
            if not isinstance(item, str):
                raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(item).value} "
                                                   "is not of expected type string")
            if len(item) == 64:
                entry = node.mempool.entries.get(parse_hash(item, "txid"))
                if entry is None:
                    raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                                   f"Transaction {item} not in mempool.")
                txs.append(entry.tx)
                continue
            try:
                txs.append(decode_transaction_hex(item))
            except RpcError:
                raise RpcError(RpcCode.DESERIALIZATION_ERROR,
                               f"Transaction decode failed for {item}. Make sure the tx has at "
                               "least one input.") from None
        if not submit:
            block = assemble_block(node, txs, script, now=call.context.now())
            return {"hash": block.header.hash_hex, "hex": block.serialize().hex()}
        block = _mine_one(call, script, txs)
    return {"hash": block.header.hash_hex}


@rpc("generating",
     args=[optional("min_tx_age", Kind.INT, 0, "How many seconds a transaction must have been "
                    "in the mempool to be included."),
           optional("proposed_parameters", Kind.OBJ, None, "Dynamic federation parameters "
                    "(not supported on this chain)."),
           optional("commit_data", Kind.ANY, None, "Array of data in hex to be committed to "
                    "in additional coinbase outputs (one hex string is accepted too).")],
     description="Gets hex representation of a proposed, unmined new block: its coinbase pays "
                 "the fees and the subsidy to -con_mandatorycoinbase, else to OP_TRUE, after "
                 "one OP_RETURN output per commit_data item. On an OP_TRUE challenge it needs "
                 "no signatures: submit it with submitblock.",
     result='"blockhex"    (string) the block hex',
     examples=("", '5'))
def getnewblockhex(call: Call, min_tx_age: int, proposed_parameters: Any,
                   commit_data: Any) -> str:
    if proposed_parameters is not None:  # dynafed is never active on our chains
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Dynamic federations is not active on this network. Proposed "
                       "parameters are not needed.")
    if min_tx_age < 0:
        raise RpcError(RpcCode.INVALID_PARAMETER, "min_tx_age must be non-negative.")
    node = call.node
    entries = list(node.mempool.entries.values())
    if min_tx_age:
        cutoff = time.time() - min_tx_age
        entries = [e for e in entries if e.time <= cutoff]
    # elementsd still takes a single hex string here (its older signature)
    items = [commit_data] if isinstance(commit_data, str) else commit_data or []
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise RpcError(RpcCode.TYPE_ERROR, "commit_data: expected a hex string or an array of "
                                           "hex strings")
    commitments = [TxOut(asset=node.params.policy_asset, value=0,
                         script_pubkey=OP_RETURN + push_data(parse_hex(item, "commit_data")))
                   for item in items]
    payee = node.params.mandatory_coinbase or OP_TRUE_SCRIPT
    txs, fees = select_transactions(entries, node.params.policy_asset)
    block = assemble_block(node, txs, payee, commitments, fees, now=call.context.now())
    note_assembled(call, block)
    return block.serialize().hex()


@rpc("mining",
     args=[required("hexdata", Kind.HEX, "the hex-encoded block data to submit"),
           optional("dummy", Kind.STR, None, "dummy value, for compatibility with BIP22. This "
                    "value is ignored.", "ignored")],
     description="Attempts to submit new block to network. See BIP22 for full specification.",
     result='null or "str"    (string) BIP22 result: null when accepted, otherwise '
            '"duplicate", "inconclusive" or the reject reason',
     examples=('"mydata"',))
def submitblock(call: Call, hexdata: str, dummy: Any) -> str | None:
    raw, block = decode_block_hex(hexdata)
    if not block.transactions or not block.transactions[0].is_coinbase:
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, "Block does not start with a coinbase")
    result = call.node.submit_block(raw, block)
    log_connect_bench(result.report)
    return result.bip22


@rpc("mining", description="Returns a json object containing mining-related information. On a "
                           "signed-block chain there is no proof of work: no bits, difficulty, "
                           "target, networkhashps or next (as elementsd).",
     result='{\n'
            '  "blocks" : n,                (numeric) The current block\n'
            '  "currentblockweight" : n,    (numeric, optional) The block weight (including '
            'reserved weight for block header, txs count and coinbase tx) of the last assembled '
            'block (only present if a block was ever assembled)\n'
            '  "currentblocktx" : n,        (numeric, optional) The number of block '
            'transactions (excluding coinbase) of the last assembled block (only present if a '
            'block was ever assembled)\n'
            '  "pooledtx" : n,              (numeric) The size of the mempool\n'
            '  "chain" : "str",             (string) current network name\n'
            '  "warnings" : [ "str" ]       (json array) any network and blockchain warnings\n'
            '}',
     examples=("",))
def getmininginfo(call: Call) -> dict[str, Any]:
    node = call.node
    out: dict[str, Any] = {"blocks": node.tip.height}
    last = call.context.last_block
    if last is not None:
        out["currentblockweight"] = last.weight
        out["currentblocktx"] = len(last.transactions) - 1
    out["pooledtx"] = len(node.mempool.entries)
    out["chain"] = node.params.name
    out["warnings"] = []
    return out


@rpc("generating",
     args=[required("blockhex", Kind.HEX, "The hex-encoded block from getnewblockhex"),
           optional("acceptnonstd", Kind.BOOL, None, "If set false, returns error if block "
                    "contains non-standard transaction.", "set via -acceptnonstdtxn")],
     description="Checks a block proposal for validity, and that it extends chaintip",
     result="null    (json null)", examples=("<hex>",))
def testproposedblock(call: Call, blockhex: str, acceptnonstd: bool | None) -> None:
    raw, block = decode_block_hex(blockhex)
    node = call.node
    if node.block_info(block.hash) is not None:
        raise RpcError(RpcCode.VERIFY_ALREADY_IN_CHAIN, "already have block")
    if block.header.prev_hash != node.tip.hash:
        raise RpcError(RpcCode.VERIFY_ERROR, "proposal was not based on our best chain")
    try:
        node.test_block(raw, block)
    except ValidationError as exc:
        raise RpcError(RpcCode.VERIFY_ERROR, exc.reason) from None
    settings = node.mempool.settings
    if not (settings.acceptnonstdtxn if acceptnonstd is None else acceptnonstd):
        for tx in block.transactions[1:]:
            try:
                node.check_standard(tx)
            except ValidationError as exc:
                raise RpcError(RpcCode.VERIFY_ERROR, "Block proposal included a non-standard "
                                                     f"transaction: {exc.reason}") from None


@rpc("mining",
     args=[required("hexdata", Kind.HEX, "the hex-encoded block header data")],
     description="Decode the given hexdata as a header and submit it as a candidate chain tip "
                 "if valid.\nThrows when the header is invalid.",
     result="null    (json null) None", examples=('"aabbcc"',))
def submitheader(call: Call, hexdata: str) -> None:
    try:
        header = parse_block_header(bytes.fromhex(hexdata))
    except (ValueError, ParseError, EncodingError):
        raise RpcError(RpcCode.DESERIALIZATION_ERROR, "Block header decode failed") from None
    node = call.node
    if node.block_info(header.prev_hash) is None:
        raise RpcError(RpcCode.VERIFY_ERROR,
                       f"Must submit previous header ({header.prev_hash[::-1].hex()}) first")
    outcome, error = node.submit_header(header)
    if outcome == "duplicate-invalid":
        raise RpcError(RpcCode.VERIFY_ERROR, "duplicate-invalid")
    if error is not None:
        raise RpcError(RpcCode.VERIFY_ERROR, error.reason)
