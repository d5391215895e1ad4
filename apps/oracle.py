"""``ctplugin oracle``: a deterministic DLC oracle for tests and demos.

The oracle is ``ctplugin.dlc.oracle.Oracle.from_seed``: the same seed gives the same key, the
same announcement of an event and, later, its attestation, with no state kept between runs.
Announcements and attestations are printed as rust-dlc JSON (``oracleAnnouncement``,
``OracleAttestation``), the forms the node's ``dlc...`` RPCs take.

    ctplugin oracle --seed alice-oracle info
    ctplugin oracle --seed alice-oracle announce btcusd --digits 10 --maturity 1700000000
    ctplugin oracle --seed alice-oracle attest btcusd 613 --digits 10 --maturity 1700000000
    ctplugin oracle --seed alice-oracle attest --announcement ann.json 613

An event is described by ``--digits N`` (digit decomposition, base ``--base``, optionally
``--signed``, ``--unit``, ``--precision``) or ``--outcomes a,b,c`` (enumeration). Errors are
printed as ``error: <reason>: <detail>`` with exit code 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import announcement_json, attestation_json, parse_announcement
from ctplugin.dlc.oracle import (
    DigitDecompositionEvent,
    EnumEvent,
    EventDescriptor,
    MessageHash,
    Oracle,
)
from ctplugin.errors import CtpluginError
from rpc.helpformat import UserHelpFormatter

DESCRIPTION = """\
A deterministic DLC oracle for tests and demos: the same seed gives the same key, the same
announcement of an event and, later, the same attestation, with nothing stored between runs.
Announcements and attestations print as rust-dlc JSON, the form the node's dlc... calls take.

  ctplugin oracle --seed alice-oracle info
  ctplugin oracle --seed alice-oracle announce btcusd --digits 10 --maturity 1700000000
  ctplugin oracle --seed alice-oracle attest btcusd 613 --digits 10 --maturity 1700000000
  ctplugin oracle --seed alice-oracle attest --announcement ann.json 613

An event is --digits N (a number in base --base, optionally --signed, with --unit and
--precision) or --outcomes a,b,c (an enumeration). Errors print as "error: REASON: DETAIL"
with exit status 1.
"""


def _event_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--digits", type=int, metavar="N",
                        help="a numeric event of N digits (digit decomposition)")
    parser.add_argument("--base", type=int, default=2, help="digit base (default 2)")
    parser.add_argument("--signed", action="store_true", help="a signed outcome (+/- nonce)")
    parser.add_argument("--unit", default="", help="the outcome's unit")
    parser.add_argument("--precision", type=int, default=0, help="power of ten of the unit")
    parser.add_argument("--outcomes", help="enumeration: comma-separated outcomes")
    parser.add_argument("--maturity", type=int, default=0, metavar="TIME",
                        help="the event's maturity, seconds since 1970")


def _descriptor(args: argparse.Namespace) -> EventDescriptor:
    if (args.digits is None) == (args.outcomes is None):
        raise DlcError("bad-event", "give exactly one of --digits and --outcomes")
    if args.outcomes is not None:
        outcomes = tuple(o for o in args.outcomes.split(",") if o)
        if not outcomes:
            raise DlcError("bad-event", "an enumeration needs outcomes")
        return EnumEvent(outcomes)
    if not 1 <= args.digits <= 64 or not 2 <= args.base <= 1 << 16:
        raise DlcError("bad-event", "need 1..64 digits and a base in 2..65536")
    return DigitDecompositionEvent(args.base, args.signed, args.unit, args.precision,
                                   args.digits)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctplugin oracle", description=DESCRIPTION,
                                     formatter_class=UserHelpFormatter)
    seed = parser.add_mutually_exclusive_group(required=True)
    seed.add_argument("--seed", help="the oracle's seed as text")
    seed.add_argument("--seed-hex", help="the oracle's seed as hex")
    parser.add_argument("--tagged", action="store_true",
                        help="sign the dlcspecs' tagged messages (default: rust-dlc's SHA256)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("info", help="print the oracle's public key",
                        formatter_class=UserHelpFormatter,
                        description="Print the oracle's public key.")
    announce = commands.add_parser("announce", help="print an event's announcement",
                                   formatter_class=UserHelpFormatter,
                                   description="Print an event's announcement.")
    announce.add_argument("event_id", help="the event's name, e.g. btcusd")
    _event_args(announce)
    attest = commands.add_parser("attest", help="print an outcome's attestation",
                                 formatter_class=UserHelpFormatter,
                                 description="Print an outcome's attestation.")
    attest.add_argument("event_id", nargs="?", help="the event (or --announcement)")
    attest.add_argument("outcome", help="the outcome to sign: a number, or one of --outcomes")
    attest.add_argument("--announcement", help="announcement JSON file ('-': stdin)")
    _event_args(attest)
    return parser


def _oracle(args: argparse.Namespace) -> Oracle:
    scheme = MessageHash.TAGGED if args.tagged else MessageHash.UNTAGGED
    if args.seed_hex is not None:
        try:
            seed = bytes.fromhex(args.seed_hex)
        except ValueError:
            raise DlcError("bad-seed", "--seed-hex is not hex") from None
    else:
        seed = args.seed.encode()
    return Oracle.from_seed(seed, scheme)


def run(args: argparse.Namespace) -> object:
    oracle = _oracle(args)
    if args.command == "info":
        return {"oraclePublicKey": oracle.public_key.hex()}
    if args.command == "announce":
        return announcement_json(oracle.announce(args.event_id, _descriptor(args),
                                                 args.maturity))
    if args.announcement is not None:
        try:
            text = (sys.stdin.read() if args.announcement == "-"
                    else Path(args.announcement).read_text(encoding="utf-8"))
            announcement = parse_announcement(json.loads(text))
        except (OSError, ValueError) as exc:
            raise DlcError("bad-announcement", str(exc)) from None
    else:
        if args.event_id is None:
            raise DlcError("bad-event", "give the event id or --announcement")
        announcement = oracle.announce(args.event_id, _descriptor(args), args.maturity)
    return attestation_json(oracle.attest(announcement, args.outcome))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        result = run(args)
    except CtpluginError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
