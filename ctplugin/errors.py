"""The project's error types.

One hierarchy for the whole library, so callers catch ``CtpluginError`` and know nothing else can
escape from library code on bad input.
"""

from __future__ import annotations


class CtpluginError(Exception):
    """Base class of every error ctplugin raises on bad input."""


def _reason_from(message: str) -> str:
    """A stable identifier from a message: its text before any ':', lower-case, words joined by
    '-' (``"scalar 3: not below the group order"`` -> ``"scalar-3"``)."""
    head = message.split(":", 1)[0].strip().lower()
    return "-".join("".join(c if c.isalnum() else " " for c in head).split()) or "invalid"


class _ReasonedError(CtpluginError, ValueError):
    """An error with a stable machine-readable ``reason`` beside its human message.

    ``reason`` is given explicitly by the raiser (``EncodingError("...", reason="off-curve")``);
    when omitted it is derived from the message (``_reason_from``).
    """

    def __init__(self, message: str = "", *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason if reason is not None else _reason_from(message)

    def __reduce__(self) -> tuple[object, ...]:
        # keep the explicit reason across pickling (worker processes send errors back)
        return (_rebuild_reasoned, (type(self), str(self), self.reason))


def _rebuild_reasoned(cls: type[_ReasonedError], message: str, reason: str) -> _ReasonedError:
    return cls(message, reason=reason)


class EncodingError(_ReasonedError):
    """Bytes that do not encode the expected object (bad prefix, length, x >= p, off curve).

    ``reason`` values raised by the secp256k1 kernel: ``length``, ``scalar-range``,
    ``field-range``, ``off-curve``, ``prefix``, ``infinity``, ``count-mismatch``, ``zero``,
    ``too-large``, ``index-range``, ``kind``, ``flags``.
    """


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
    """A proof that cannot be parsed or whose parameters are out of the supported range.

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
