"""``ctplugin bulletproofs check FILE``: run a Bulletproof vectors file (schema:
docs/bulletproofs-format.md §11) and print one verdict line per case.

Per case: the prover's bytes (cases with openings and a nonce), verify alone, verify in a batch
(the case's claim together with every valid case's claim; a failing batch must name exactly this
case), and rewind (cases with a ``rewind`` entry). Quirk cases check the reference's own verdicts
with and without min_value. The ``generators`` section and each ``batches`` entry are checked
too. Exit status 0 only if everything matches, 2 if the file cannot be read or is malformed.
"""

from __future__ import annotations

import argparse
import json
import sys

from ctplugin.bulletproofs import vectors as bulletproof_vectors
from ctplugin.errors import CtpluginError
from rpc.helpformat import UserHelpFormatter

DESCRIPTION = """\
Run a Bulletproof vectors file and print one verdict line per case: the prover's bytes,
verification alone and in a batch with the other cases (a failing batch must name exactly
the bad case), and rewinding. Exit status 0 only if everything matches, 1 on a mismatch,
2 if the file cannot be read or is malformed.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ctplugin bulletproofs", description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p_check = sub.add_parser("check", help="run a vectors file; exit 0 only if all cases match",
                             formatter_class=UserHelpFormatter, description=DESCRIPTION)
    p_check.add_argument("file", help="the vectors file (JSON)")
    args = parser.parse_args(argv)
    try:
        with open(args.file) as handle:
            data = json.load(handle)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    try:
        ok = bulletproof_vectors.check(data, lambda line: print(line, flush=True))
    except (CtpluginError, KeyError, TypeError, ValueError, AttributeError) as exc:
        kind = "" if type(exc) is ValueError else f"{type(exc).__name__}: "
        print(f"malformed vectors file {args.file}: {kind}{exc}", file=sys.stderr)
        return 2
    print("all cases match" if ok else "MISMATCHES", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
