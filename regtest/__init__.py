"""Our regtest chain: parameters (``params``), a deterministic confidential-transaction wallet
(``wallet``), a block builder (``builder``: ``ChainBuilder``, ``make_block``) and a Core-style
``blocks/`` directory writer (``blocksdir``); the command line is ``ctplugin chain``
(``apps.chain``)."""
