"""Hostile variants of a JSON message (rust-dlc offers, accepts...): one or two leaves replaced
by junk of another type or a byte flipped inside a hex string (shared by the DLC fuzz tests)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st


def leaves(obj: object, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in leaves(v, (*path, k))]
    if isinstance(obj, list):
        return [leaf for i, v in enumerate(obj) for leaf in leaves(v, (*path, i))] or [path]
    return [path]


junk = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                 st.floats(allow_nan=True), st.text(max_size=8),
                 st.sampled_from(["00" * 32, "02" + "11" * 32, "ff" * 33, "zz", "", "00" * 33]),
                 st.just({}), st.just([]))


def mutate(message: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    out = copy.deepcopy(message)
    paths = [p for p in leaves(out) if "cetAdaptorSignatures" not in p or data.draw(
        st.integers(0, 20)) == 0]
    for _ in range(data.draw(st.integers(1, 2))):
        path = data.draw(st.sampled_from(paths))
        node = out
        for key in path[:-1]:
            node = node[key]
        value = node[path[-1]]
        if isinstance(value, str) and value and data.draw(st.booleans()):
            try:
                raw = bytearray.fromhex(value)
            except ValueError:
                raw = bytearray()
            if raw:  # flip one byte of a hex field
                at = data.draw(st.integers(0, len(raw) - 1))
                raw[at] ^= data.draw(st.integers(1, 255))
                node[path[-1]] = raw.hex()
                continue
        node[path[-1]] = data.draw(junk)
    return json.loads(json.dumps(out))
