"""The project's error types.

One hierarchy for the whole library, so callers catch ``CtpluginError`` and know nothing else can
escape from library code on bad input.
"""

from __future__ import annotations


class CtpluginError(Exception):
    """Base class of every error ctplugin raises on bad input."""


class _ReasonedError(CtpluginError, ValueError):
    """An error with a stable machine-readable ``reason`` beside its human message.

    ``reason`` is always given by the raiser (``EncodingError("...", reason="off-curve")``): one
    of a documented vocabulary (``ENCODING_REASONS`` below; each proof system's ``REASONS``),
    so a caller can switch on it; tests/fuzz/test_error_contract.py checks every raise site.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self) -> tuple[object, ...]:
        # keep the explicit reason across pickling (worker processes send errors back)
        return (_rebuild_reasoned, (type(self), str(self), self.reason))


def _rebuild_reasoned(cls: type[_ReasonedError], message: str, reason: str) -> _ReasonedError:
    return cls(message, reason=reason)


ENCODING_REASONS: dict[str, str] = {
    "length": "wrong size (bytes, vector or list length)",
    "type": "a value of the wrong kind for the field (bytes, a tuple of TxIn, a bool, ...)",
    "value-range": "an integer outside the range its encoding allows",
    "scalar-range": "a scalar that is zero where it may not be, or not below the group order",
    "field-range": "a coordinate not below the field size",
    "off-curve": "a point (or x coordinate) not on the curve",
    "prefix": "a wrong prefix or flag byte (point, commitment, generator, nonce, address)",
    "infinity": "the point at infinity where a point is required or encoded",
    "count-mismatch": "vectors or lists whose counts must agree do not",
    "zero": "zero where an inverse or a non-zero value is needed",
    "too-large": "above a size bound",
    "index-range": "an index or run outside its vector",
    "kind": "an unknown point encoding kind",
    "shape": "an unsupported proof shape for a kernel entry (nbits / m)",
    "flags": "unused flag bits set",
    "non-minimal": "a non-minimal number encoding",
    "structure": "fields that cannot be encoded together (a null prevout with flags, a dynafed "
                 "header with a challenge, a script tree without leaves, ...)",
    "der": "not a strict-DER signature",
    "ecdh": "an ECDH shared secret that cannot be formed",
    "not-in-tree": "a script that is not a leaf of the taproot tree",
    "mixed-case": "an address in mixed case",
    "character": "a character outside the address alphabet",
    "checksum": "an address checksum that does not verify",
    "padding": "address data that does not regroup into bytes",
    "path": "a BIP32 key path that does not parse or cannot be derived (hardened from a public "
            "key)",
    "descriptor": "an output descriptor that does not parse (BIP380-386)",
    "scheme": "a key operation the key chain's derivation scheme does not have",
}
"""Every ``EncodingError.reason``, with its meaning (the message adds the details)."""


class EncodingError(_ReasonedError):
    """Bytes that do not encode the expected object (bad prefix, length, x >= p, off curve);
    ``reason`` is one of ``ENCODING_REASONS``."""


class ParseError(CtpluginError, ValueError):
    """Malformed serialized data, with the byte offset where parsing failed."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"{reason} at offset {offset}")
        self.offset = offset
        self.reason = reason

    def __reduce__(self) -> tuple[object, ...]:
        # rebuilt from its fields (worker processes send errors back)
        return (type(self), (self.offset, self.reason))


class ProofError(_ReasonedError):
    """A proof that cannot be parsed or whose parameters are out of the supported range;
    ``reason`` is one of its proof system's ``REASONS`` (``ctplugin.bulletproofs.errors``,
    ``ctplugin.borromean.format``, ``ctplugin.surjection.errors``).

    Verification failure of a well-formed proof is a ``False`` verdict, not this error.
    """


class ValidationError(CtpluginError):
    """A transaction or block breaks a consensus rule.

    ``reason`` is a stable reject-reason string (Elements' own where one exists, e.g.
    ``bad-txns-in-ne-out``); ``tx_index`` / ``output_index`` locate the culprit when known.
    """

    def __init__(
        self,
        reason: str,
        *,
        tx_index: int | None = None,
        output_index: int | None = None,
        input_index: int | None = None,
        detail: str = "",
    ) -> None:
        where = []
        if tx_index is not None:
            where.append(f"tx {tx_index}")
        if input_index is not None:
            where.append(f"input {input_index}")
        if output_index is not None:
            where.append(f"output {output_index}")
        text = reason + (f" ({', '.join(where)})" if where else "")
        text += f": {detail}" if detail else ""
        super().__init__(text)
        self.reason = reason
        self.tx_index = tx_index
        self.output_index = output_index
        self.input_index = input_index
        self.detail = detail

    def __reduce__(self) -> tuple[object, ...]:
        # rebuilt from its fields (worker processes send verdicts back)
        return (_rebuild_validation_error, (type(self), self.reason, self.tx_index,
                                            self.output_index, self.input_index, self.detail))


def _rebuild_validation_error(cls: type[ValidationError], reason: str, tx_index: int | None,
                              output_index: int | None, input_index: int | None,
                              detail: str) -> ValidationError:
    return cls(reason, tx_index=tx_index, output_index=output_index, input_index=input_index,
               detail=detail)
