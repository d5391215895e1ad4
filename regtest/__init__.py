"""Our regtest chain: parameters (``params``), a deterministic confidential-transaction wallet
(``wallet``) and a chain builder writing chain files (``chain``; ``python -m regtest.chain``)."""
