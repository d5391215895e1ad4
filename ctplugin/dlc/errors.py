"""The DLC module's error type."""

from __future__ import annotations

from ctplugin.errors import CtpluginError


class DlcError(CtpluginError, ValueError):
    """An invalid contract, offer, announcement, attestation or adaptor signature input.

    ``reason`` is a short stable identifier (``payout-not-continuous``, ``bad-rounding``, ...);
    the message adds the detail.
    """

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
