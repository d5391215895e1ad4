"""``ctplugin-elementsd``: the node with elementsd's command line (docs/elements-regtest.md §9):
elementsd's defaults (``~/.elements``, ``elements.conf``, chain liquidv1 unless told, so
``-chain=elementsregtest`` or the file's ``chain=`` is needed), its options (accepted and
honoured, accepted with no effect where they concern what this node does not
have, an error where they cannot be honoured), Core's ``Error: ...`` lines on stderr with exit
status 1, nothing on stdout with ``-printtoconsole=0``, ``-version`` and ``-?``/``-h``.
Elements' functional test framework runs it as its ``BITCOIND``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from apps.node import run
from rpc.config import ELEMENTSD, parse_config

DESCRIPTION = """\
The ctplugin regtest node with elementsd's command line: elementsd's defaults (~/.elements,
elements.conf, and chain liquidv1 unless told: give -chain=elementsregtest or chain= in the
file), its options (those about what this node does not have are accepted with no effect),
and its messages ("Error: ..." on stderr, exit status 1). Elements' functional tests run it
as their BITCOIND.
"""


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_config(sys.argv[1:] if argv is None else argv, ELEMENTSD.name, DESCRIPTION,
                          ELEMENTSD)
    return run(config, announce=False, prog=ELEMENTSD.name)


if __name__ == "__main__":
    sys.exit(main())
