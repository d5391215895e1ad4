"""``ctplugin-elements-cli``: ``ctplugin cli`` with elements-cli's defaults
(docs/elements-regtest.md §4, §9): ``~/.elements``, ``elements.conf``, the chain from
``-chain`` or the file (liquidv1 otherwise, as elements-cli), the cookie in
``DATADIR/<chain>/.cookie``. Elements' functional test framework runs it as its
``BITCOINCLI``."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from apps.cli import main as cli_main
from rpc.config import ELEMENTSD


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None,
         stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    return cli_main(argv, stdin, stdout, stderr, prog="ctplugin-elements-cli",
                    program=ELEMENTSD)


if __name__ == "__main__":
    sys.exit(main())
