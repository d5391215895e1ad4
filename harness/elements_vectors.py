"""Elements vectors in the schema of ``elements-vectors/{transactions,blocks}.json`` (the shared
vectors, docs/elements-format.md §4):
loading them (tests, benchmarks) and checking them (``ctplugin elements check FILE``).

Every entry must parse, re-serialize byte-identically, and match each hash the entry states
(``expected_*`` from the source, else the offline ``computed`` value); every range proof its
transactions carry (blinded output values, blinded issuance amounts) must verify, all of them
in one ring-kernel call (``ctplugin.borromean``). ``check`` returns one line per failure; an
empty list means the whole document passed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctplugin.elements.model import (
    Transaction,
    parse_block,
    parse_block_header,
    parse_transaction,
)
from ctplugin.errors import ParseError


def vector_entries(data: object) -> tuple[str, list[dict[str, Any]]]:
    """("transactions" or "blocks", the entries) of a vectors document, each entry an object
    with a ``hex`` string; ``ValueError`` naming what is malformed otherwise."""
    if not isinstance(data, dict):
        raise ValueError("a vectors file is a JSON object with 'transactions' or 'blocks'")
    key = next((k for k in ("transactions", "blocks") if k in data), None)
    if key is None:
        raise ValueError("neither a 'transactions' nor a 'blocks' vectors file")
    entries = data[key]
    if not isinstance(entries, list):
        raise ValueError(f"{key} must be a list")
    what = key[:-1]
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"{what} {i} is not an object")
        if not isinstance(entry.get("hex"), str):
            raise ValueError(f"{what} {i}: hex must be a hex string")
        try:
            bytes.fromhex(entry["hex"])
        except ValueError:
            raise ValueError(f"{what} {i}: hex is not hex") from None
    return key, entries


def _object(entry: dict[str, Any], key: str) -> dict[str, Any]:
    value = entry.get(key)
    return value if isinstance(value, dict) else {}


def _expected(entry: dict[str, Any], key: str) -> str | None:
    return entry.get(f"expected_{key}") or _object(entry, "computed").get(key)


def _block_name(entry: dict[str, Any], index: int) -> str:
    return str(entry.get("id") or _object(entry, "source").get("locator") or f"block {index}")


def check_transaction_entry(entry: dict[str, Any]) -> list[str]:
    name = entry.get("id", "?")
    raw = bytes.fromhex(entry["hex"])
    try:
        tx = parse_transaction(raw)
    except ParseError as exc:
        return [f"{name}: parse error: {exc}"]
    problems = []
    if tx.serialize() != raw:
        problems.append(f"{name}: re-serialization differs")
    for key, got in (("txid", tx.txid_hex), ("wtxid", tx.wtxid_hex), ("withash", tx.withash_hex)):
        want = _expected(entry, key)
        if want is not None and got != want:
            problems.append(f"{name}: {key} {got} != expected {want}")
    return problems


def check_block_entry(entry: dict[str, Any], index: int) -> list[str]:
    name = _block_name(entry, index)
    raw = bytes.fromhex(entry["hex"])
    try:
        if entry.get("kind") == "block_header":
            header = parse_block_header(raw)
            block = None
        else:
            block = parse_block(raw)
            header = block.header
    except ParseError as exc:
        return [f"{name}: parse error: {exc}"]
    problems = []
    if (block.serialize() if block else header.serialize()) != raw:
        problems.append(f"{name}: re-serialization differs")
    for want in {entry.get("expected_block_hash"), _object(entry, "computed").get("hash")} - {None}:
        if header.hash_hex != want:
            problems.append(f"{name}: block hash {header.hash_hex} != expected {want}")
    if block is not None:
        txids = _object(entry, "computed").get("txids")
        if txids is not None and [t.txid_hex for t in block.transactions] != txids:
            problems.append(f"{name}: txids differ")
        if not block.merkle_root_matches():
            problems.append(f"{name}: merkle root mismatch")
        if block.witness_commitment_index() is not None and not block.check_witness_commitment():
            problems.append(f"{name}: witness commitment mismatch")
    return problems


def check_range_proofs(named: list[tuple[str, Transaction]]) -> list[str]:
    """Every range proof of the (name, transaction) pairs, verified in one kernel call."""
    from ctplugin.borromean import verify_many
    from ctplugin.borromean.elements import transaction_claims

    sites = [(name, site, claim) for name, tx in named for site, claim in transaction_claims(tx)]
    results = verify_many([claim for _, _, claim in sites])
    return [f"{name}: {site}: range proof "
            + (f"malformed: {r}" if isinstance(r, Exception) else "does not verify")
            for (name, site, _), r in zip(sites, results) if not isinstance(r, tuple)]


def _parsed(entries: list[dict[str, Any]], blocks: bool) -> list[tuple[str, Transaction]]:
    named: list[tuple[str, Transaction]] = []
    for i, entry in enumerate(entries):
        try:
            if not blocks:
                named.append((entry.get("id", "?"), parse_transaction(bytes.fromhex(entry["hex"]))))
            elif entry.get("kind") != "block_header":
                block = parse_block(bytes.fromhex(entry["hex"]))
                name = _block_name(entry, i)
                named += [(f"{name} tx {t}", tx) for t, tx in enumerate(block.transactions)]
        except ParseError:
            continue  # reported by the entry checks
    return named


def check(data: object, name: str = "vectors") -> tuple[int, list[str]]:
    """(number of entries checked, failures) for a transactions or blocks vectors document.
    A malformed document raises ValueError (``vector_entries``)."""
    problems: list[str] = []
    key, entries = vector_entries(data)
    if key == "transactions":
        for entry in entries:
            problems += check_transaction_entry(entry)
    else:
        for i, entry in enumerate(entries):
            problems += check_block_entry(entry, i)
    if not entries:
        problems.append(f"{name}: no entries")
    problems += check_range_proofs(_parsed(entries, key == "blocks"))
    return len(entries), problems


def load_entries(paths: list[Path], key: str) -> list[dict[str, Any]]:
    """Entries under ``key`` ("transactions" or "blocks") of the existing files among
    ``paths``, deduplicated by hex, first occurrence kept."""
    seen: dict[str, dict[str, Any]] = {}
    for path in paths:
        if Path(path).exists():
            for entry in json.loads(Path(path).read_text())[key]:
                seen.setdefault(entry["hex"], entry)
    return list(seen.values())
