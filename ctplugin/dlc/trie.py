"""Outcome look-up at execution time: which adaptor signature do the attestations unlock?

For each oracle combination the digit prefixes of its adaptor entries are stored in a nested trie
(first oracle's prefix → second oracle's prefix → … → adaptor index). Looking up walks every
prefix of each attested digit string, so an outcome covered by a short prefix (a compressed CET)
or by bounded-difference prefixes is found. Combinations are tried in rust-dlc's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.multi_oracle import AdaptorEntry, oracle_combinations
from ctplugin.dlc.oracle import OracleAttestation


class ItemShape(NamedTuple):
    """What the look-up needs of one contract-info item (``PreparedItem.shape()``): its oracle
    count and threshold, its enumerated outcomes (empty for a numeric item), and how many
    adaptor entries and CETs it has (they follow the previous items' in the contract's lists)."""

    n_oracles: int
    threshold: int
    enum_outcomes: tuple[str, ...]
    n_entries: int
    n_cets: int


class OutcomeIndex:
    def __init__(self, items: Sequence[ItemShape], entries: Sequence[AdaptorEntry]) -> None:
        self._items = list(items)
        self._tries: list[dict[tuple[int, ...], dict[tuple[int, ...], Any]]] = []
        self._enum: list[dict[tuple[tuple[int, ...], int], int]] = []
        position, cet_offset = 0, 0
        for item in items:
            tries: dict[tuple[int, ...], dict[tuple[int, ...], Any]] = {}
            enum_keys: dict[tuple[tuple[int, ...], int], int] = {}
            for _ in range(item.n_entries):
                entry = entries[position]
                oracles = tuple(i for i, _ in entry.paths)
                if item.enum_outcomes:
                    enum_keys.setdefault((oracles, entry.cet_index - cet_offset), position)
                else:
                    node = tries.setdefault(oracles, {})
                    for depth, (_, prefix) in enumerate(entry.paths):
                        if depth == len(entry.paths) - 1:
                            node.setdefault(prefix, position)
                        else:
                            node = node.setdefault(prefix, {})
                position += 1
            cet_offset += item.n_cets
            self._tries.append(tries)
            self._enum.append(enum_keys)

    def look_up(self, item_number: int, attestations: dict[int, OracleAttestation]) -> int | None:
        if not 0 <= item_number < len(self._items):
            raise DlcError("bad-item-number", f"no contract-info item {item_number}")
        item = self._items[item_number]
        for combo in oracle_combinations(item.n_oracles, item.threshold):
            if not all(i in attestations for i in combo):
                continue
            if item.enum_outcomes:
                outcomes = {attestations[i].outcomes[0] for i in combo}
                if len(outcomes) != 1 or (outcome := outcomes.pop()) not in item.enum_outcomes:
                    continue
                found = self._enum[item_number].get((combo, item.enum_outcomes.index(outcome)))
            else:
                try:
                    digits = [tuple(int(d) for d in attestations[i].outcomes) for i in combo]
                except ValueError:
                    continue
                found = _walk(self._tries[item_number].get(combo), digits, 0)
            if found is not None:
                return found
        return None


def _walk(node: Any, digits: list[tuple[int, ...]], depth: int) -> int | None:
    if node is None:
        return None
    own = digits[depth]
    for length in range(1, len(own) + 1):
        child = node.get(own[:length])
        if child is None:
            continue
        if depth == len(digits) - 1:
            return child
        found = _walk(child, digits, depth + 1)
        if found is not None:
            return found
    return None
