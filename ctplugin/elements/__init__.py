"""Elements transactions and blocks: exact parse/serialize, hashes, elementsd-style JSON.

Parsing is done by one native walker (``_speedups.c``) that builds the immutable model below
directly; bad bytes raise only ``ctplugin.errors.ParseError(offset, reason)``.  Format reference:
docs/elements-format.md §1.

Parse
    parse_transaction(data) -> Transaction        exactly one tx, trailing bytes are an error
    parse_block(data) -> Block                    signed-block header with height + txs
    parse_block_header(data) -> BlockHeader       (legacy challenge/solution or dynafed)
    Transaction.parse / Transaction.from_hex / Block.parse / BlockHeader.parse

Model (frozen, slotted dataclasses; build them with keywords, lists are accepted for tuples)
    Transaction(version, inputs, outputs, locktime=0)
        .serialize() .serialize_without_witness() .hex()
        .txid .wtxid .withash (32 bytes, internal order; cached), .txid_hex .wtxid_hex .withash_hex
        .size .base_size .weight .vsize .discount_weight .discount_vsize (ELIP-200)
        .has_witness .is_coinbase .fee_outputs
        .fees() -> {asset: sum}
    TxIn(prevout_hash, prevout_index, script_sig=b"", sequence=0xffffffff, is_pegin=False,
         issuance=None, issuance_amount_rangeproof=b"", inflation_keys_rangeproof=b"",
         script_witness=(), pegin_witness=())
        prevout_index is the real index (flag bits stripped); 0xffffffff = null prevout.
        .prevout -> (hash, index) .is_null_prevout .prevout_txid_hex .has_witness
        .serialized_prevout()
    AssetIssuance(asset_blinding_nonce, asset_entropy, amount=None, inflation_keys=None)
        .is_reissuance .amount_is_blinded .inflation_keys_are_blinded
    TxOut(asset, value, nonce=b"", script_pubkey=b"", surjection_proof=b"", range_proof=b"")
        asset: 32-byte explicit id | 33-byte generator commitment (prefix 0a/0b)
        value: int explicit amount | 33-byte Pedersen commitment (prefix 08/09)
        nonce: b"" null | 33 bytes (prefix 01/02/03)
        .is_fee .asset_is_explicit .value_is_explicit .has_witness
        TxOut.parse(data) reads one output's non-witness serialization (e.g. a stored UTXO)
    BlockHeader(version, prev_hash, merkle_root, time, height, challenge=None, solution=None,
                dynafed_params=None, signblock_witness=())
        .hash .hash_hex .is_dynafed .serialize() .serialize_for_hash()
    DynafedParams(current, proposed).root(); DynafedParamEntry(type, signblockscript,
        signblock_witness_limit, elided_root, fedpeg_program, fedpegscript, extension_space)
        .root() .extra_root() .to_pruned()
    Block(header, transactions)
        .hash .compute_merkle_root() -> (root, mutated) .merkle_root_matches()
        .witness_root() .witness_commitment_index() .expected_witness_commitment()
        .check_witness_commitment() .serialize() .size .weight

Issuance (``ctplugin.elements.issuance``)
    issuance_entropy(prevout_hash, prevout_index, contract_hash), issuance_asset_id(entropy),
    reissuance_token_id(entropy, amount_is_blinded), input_issuance_ids(txin) -> IssuanceIds

Other modules
    ``rpcjson``   decode_transaction(tx) -> dict (elementsd decoderawtransaction), dumps(obj)
    ``script``    script_to_asm(script, attempt_sighash_decode), script_type(script)
    ``vectors``   check(document) -> (entries, failures) of an Elements vectors document
    ``address``   a chain's addresses and keys (key_io.cpp): decode_destination(text, params)
                  -> Destination(script_pubkey, blinding_pubkey), encode_destination,
                  decode_secret / encode_secret (WIF); AddressError
    (conversions to/from python-elementstx and wallycore: ``harness.interop``)
    Hashes: ``ctplugin.hashes.fast_merkle_root`` / ``sha256_midstate`` (the hashing layer's; an
    odd node of the fast Merkle tree is promoted, not paired with itself).

Notes for users
    * Hashes are bytes in internal order; ``*_hex`` properties give elementsd's reversed text.
    * Readers follow Elements exactly, stricter than wallycore: canonical compact sizes <=
      MAX_SIZE, no trailing bytes, no superfluous witness/issuance records, only the known
      prefixes, null asset/value refused in outputs; an index of 0xffffffff is the null prevout
      whatever the hash (no issuance/peg-in flags); a dynafed header must not have both
      parameter entries null (Elements would re-serialize it as a legacy header).
    * Headers are Liquid signed-block headers with height (legacy challenge/solution or
      dynafed); proof-of-work Elements headers (nBits/nNonce) are not read.
    * Parsed objects keep a copy of their consensus bytes (serialize() returns it; hashes are
      computed from it once).  ``dataclasses.replace`` gives a value whose bytes are rebuilt.

Command line (``apps.elements``): ``ctplugin elements decode [HEX|-]`` prints elementsd
``decoderawtransaction`` JSON; ``ctplugin elements check FILE`` runs a vectors file.
"""

from ctplugin.elements.issuance import (
    IssuanceIds,
    input_issuance_ids,
    issuance_asset_id,
    issuance_entropy,
    reissuance_token_id,
)
from ctplugin.elements.model import (
    AssetIssuance,
    Block,
    BlockHeader,
    DynafedParamEntry,
    DynafedParams,
    Transaction,
    TxIn,
    TxOut,
    parse_block,
    parse_block_header,
    parse_transaction,
)

__all__ = [
    "AssetIssuance", "Block", "BlockHeader", "DynafedParamEntry", "DynafedParams", "IssuanceIds",
    "Transaction", "TxIn", "TxOut", "input_issuance_ids", "issuance_asset_id", "issuance_entropy",
    "parse_block", "parse_block_header", "parse_transaction", "reissuance_token_id",
]
