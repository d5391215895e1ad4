"""CET compression: cover an outcome interval with digit prefixes (dlcspecs
NumericOutcomeCompression.md).

An interval [start, end] with one payout is covered by the fewest prefixes, i.e. aligned blocks of
base^k outcomes (a prefix of nb_digits − k digits leaves its last k digits free). Walking up from
``start`` and always taking the largest aligned block that still ends at or before ``end`` gives
exactly the spec's groupings: the front groupings (blocks growing while ``start``'s trailing digits
fill up, trailing zeros dropped), the middle single-digit blocks, then the back groupings (blocks
shrinking towards ``end``, trailing base − 1 digits dropped), and the "total" optimisation when the
interval is one block. The order is ascending, which fixes the adaptor-signature order (it equals
rust-dlc's ``group_by_ignoring_digits``).
"""

from __future__ import annotations

from ctplugin.dlc.digits import decompose
from ctplugin.dlc.errors import DlcError


def group_by_ignoring_digits(start: int, end: int, base: int,
                             nb_digits: int) -> list[tuple[int, ...]]:
    """Digit prefixes (most significant first) covering exactly [start, end], ascending."""
    if not 0 <= start <= end < base**nb_digits:
        raise DlcError("bad-interval", f"[{start}, {end}] is not inside 0..{base}^{nb_digits}-1")
    prefixes = []
    cursor = start
    while cursor <= end:
        free = 0  # number of trailing free digits of the next block
        while (free < nb_digits and cursor % base ** (free + 1) == 0
               and cursor + base ** (free + 1) - 1 <= end):
            free += 1
        if free == nb_digits:
            # One prefix of length zero would cover the whole domain: a single-outcome contract.
            raise DlcError("single-outcome", "the interval covers every outcome (empty prefix)")
        prefixes.append(decompose(cursor, base, nb_digits)[: nb_digits - free])
        cursor += base**free
    return prefixes
