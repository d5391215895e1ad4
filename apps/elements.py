"""``ctplugin elements decode [HEX|-]`` / ``ctplugin elements check FILE``.

decode: prints elementsd ``decoderawtransaction`` JSON for a hex transaction (argument, or
stdin when absent or ``-``); exit 1 with ``TX decode failed`` on bad input.
check: runs a vectors file (transactions.json or blocks.json schema); exit 0 only if every
entry parses, round-trips byte-identically and matches every stated hash, and every range
proof (Borromean, as Elements and Liquid carry them) verifies.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ctplugin.elements import vectors as elements_vectors
from ctplugin.elements.model import Transaction
from ctplugin.elements.rpcjson import decode_transaction, dumps
from ctplugin.errors import ParseError
from rpc.helpformat import UserHelpFormatter

DESCRIPTION = """\
Elements transactions and vectors files:

  ctplugin elements decode HEX   elementsd's decoderawtransaction JSON of a transaction
                                 (HEX, or stdin when absent or -); exit 1 on bad input
  ctplugin elements check FILE   run a transactions or blocks vectors file: exit 0 only if
                                 every entry parses, writes back byte-identically, matches
                                 its hashes and every range proof verifies
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ctplugin elements", description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    decode = sub.add_parser("decode", help="decoderawtransaction-style JSON",
                            formatter_class=UserHelpFormatter,
                            description="Print elementsd's decoderawtransaction JSON of a "
                                        "transaction.")
    decode.add_argument("hex", nargs="?", default="-", help="transaction hex, or - for stdin")
    check = sub.add_parser("check", help="run a vectors file", formatter_class=UserHelpFormatter,
                           description="Run a transactions or blocks vectors file.")
    check.add_argument("file", type=Path, help="the vectors file (JSON)")
    args = parser.parse_args(argv)

    if args.command == "decode":
        text = sys.stdin.read() if args.hex == "-" else args.hex
        try:
            tx = Transaction.from_hex("".join(text.split()))
        except ParseError as exc:
            print(f"TX decode failed: {exc}", file=sys.stderr)
            return 1
        print(dumps(decode_transaction(tx)))
        return 0

    try:
        data = json.loads(args.file.read_bytes())
    except OSError as exc:
        print(f"cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError
        print(f"cannot read {args.file}: not JSON: {exc}", file=sys.stderr)
        return 2
    try:
        count, problems = elements_vectors.check(data, str(args.file))
    except ValueError as exc:
        print(f"malformed vectors file {args.file}: {exc}", file=sys.stderr)
        return 2
    for line in problems:
        print(f"FAIL {line}")
    print(f"{args.file}: {count} entries, {len(problems)} failures")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
