"""The optional extras of the package (``pip install 'ctplugin[node]'``, pyproject's
``[project.optional-dependencies]``) and the one-line refusal when a command needs a missing one.

The pure library (``import ctplugin``, verifying proofs, the validator) needs only the base
dependencies. Heavier pieces are imported only by the commands that use them: the node's HTTP
server and ZMQ (``node``), progress bars and report tables (``replay``; ``ctplugin chain`` draws
the same progress bar), plots (``plot``), and Dask (``dask``). A command checks what it needs
before importing it, so a missing extra is one line on stderr and exit status 2 (the command
cannot run as asked), never a traceback. ``make test`` / ``make demo`` install ``.[all,test]``.
"""

from __future__ import annotations

import importlib.util
from enum import StrEnum


class Extra(StrEnum):
    """One optional extra, named as in pyproject.toml."""

    NODE = "node"
    REPLAY = "replay"
    PLOT = "plot"
    DASK = "dask"


# The import names each extra provides (what its distributions install).
MODULES: dict[Extra, tuple[str, ...]] = {
    Extra.NODE: ("aiohttp", "zmq"),
    Extra.REPLAY: ("rich",),
    Extra.PLOT: ("matplotlib",),
    Extra.DASK: ("dask", "distributed"),
}


def installed(extra: Extra) -> bool:
    """Whether every module of ``extra`` can be imported (found, not imported: no start-up
    cost for the command that asks)."""
    for name in MODULES[extra]:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except ImportError:  # a finder that refuses the name (or a broken parent package)
            return False
    return True


def missing_message(what: str, *extras: Extra) -> str | None:
    """The refusal for the first of ``extras`` not installed, or None if all are:
    ``ctplugin replay --mode dask needs the 'dask' extra: pip install 'ctplugin[dask]'``."""
    for extra in extras:
        if not installed(extra):
            return f"{what} needs the '{extra}' extra: pip install 'ctplugin[{extra}]'"
    return None
