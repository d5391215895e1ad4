"""Digit decomposition of numeric outcomes (dlcspecs Oracle.md "Digit Decomposition").

Digits are most significant first: the first nonce of an event signs the most significant digit.
"""

from __future__ import annotations

from ctplugin.dlc.errors import DlcError


def decompose(value: int, base: int, nb_digits: int) -> tuple[int, ...]:
    """``value`` written with exactly ``nb_digits`` digits in ``base``, most significant first."""
    if base < 2:
        raise DlcError("bad-base", f"base must be at least 2, got {base}")
    if value < 0 or value >= base**nb_digits:
        raise DlcError("outcome-out-of-range",
                       f"{value} does not fit {nb_digits} base-{base} digits")
    digits = [0] * nb_digits
    for position in range(nb_digits - 1, -1, -1):
        value, digits[position] = divmod(value, base)
    return tuple(digits)


def compose(digits: tuple[int, ...] | list[int], base: int) -> int:
    """The inverse of ``decompose``: Σ d_j·base^(len-1-j)."""
    value = 0
    for digit in digits:
        if not 0 <= digit < base:
            raise DlcError("bad-digit", f"digit {digit} not in base {base}")
        value = value * base + digit
    return value


def prefix_interval(prefix: tuple[int, ...], base: int, nb_digits: int) -> tuple[int, int]:
    """The outcomes [start, end] covered by a digit prefix (the remaining digits are free)."""
    free = nb_digits - len(prefix)
    if free < 0:
        raise DlcError("bad-prefix", "prefix longer than the number of digits")
    start = compose(prefix, base) * base**free
    return start, start + base**free - 1


def attested_digits(value: int, base: int, nb_digits: int, is_signed: bool) -> list[str]:
    """The outcome strings an oracle signs for ``value``, one per nonce.

    Values above the maximum are clamped to base^nb_digits − 1 (all digits base − 1); negative
    values of an unsigned event give 0; a signed event first signs "+" or "−" (ASCII "-").
    Each digit is its decimal string (base > 10 digits are written in base 10).
    """
    sign: list[str] = []
    if is_signed:
        sign = ["-" if value < 0 else "+"]
        value = abs(value)
    value = min(max(value, 0), base**nb_digits - 1)
    return sign + [str(d) for d in decompose(value, base, nb_digits)]
