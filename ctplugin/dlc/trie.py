"""Outcome look-up at execution time: which adaptor signature do the attestations unlock?

For each oracle combination the digit prefixes of its adaptor entries are stored in a nested trie
(first oracle's prefix → second oracle's prefix → … → adaptor index). Looking up walks every
prefix of each attested digit string, so an outcome covered by a short prefix (a compressed CET)
or by bounded-difference prefixes is found. Combinations are tried in rust-dlc's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctplugin.dlc.multi_oracle import AdaptorEntry, oracle_combinations
from ctplugin.dlc.oracle import OracleAttestation

if TYPE_CHECKING:
    from ctplugin.dlc.contract import PreparedItem


class OutcomeIndex:
    def __init__(self, items: Sequence[PreparedItem], entries: Sequence[AdaptorEntry]) -> None:
        self._items = list(items)
        self._tries: list[dict[tuple[int, ...], dict[tuple[int, ...], Any]]] = []
        self._enum: list[dict[tuple[tuple[int, ...], int], int]] = []
        position, cet_offset = 0, 0
        for item in items:
            tries: dict[tuple[int, ...], dict[tuple[int, ...], Any]] = {}
            enum_keys: dict[tuple[tuple[int, ...], int], int] = {}
            for _ in item.entries:
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
            cet_offset += len(item.payouts)
            self._tries.append(tries)
            self._enum.append(enum_keys)

    def look_up(self, item_number: int, attestations: dict[int, OracleAttestation]) -> int | None:
        item = self._items[item_number]
        n, t = len(item.oracle_infos), item.item.oracles.threshold
        for combo in oracle_combinations(n, t):
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
