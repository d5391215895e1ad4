"""``ctplugin replay SOURCE --datadir DIR [--mode MODE] ...``: replay blocks into a data directory.

SOURCE is a chain file of ours (``ctplugin chain --out``), a Bitcoin Core / Elements ``blocks/``
directory (blk*.dat, any order, xor.dat), or ``http://HOST:PORT`` of an elementsd-compatible node
(``getblockhash`` / ``getblock HASH 0``; credentials from the URL, --rpcuser/--rpcpassword or
--rpccookiefile). The replay resumes from the data directory's tip.

``ctplugin replay --compare A.json B.json ... --plot OUT.png`` plots earlier reports together.

Exit status: 0 done, 1 a block was rejected (the culprit is printed), 2 bad usage, unreadable
input or a missing optional extra, 3 the data directory or the workers failed, 130 interrupted
(Ctrl-C; run it again to resume).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from apps.extras import Extra, missing_message
from apps.main import ignore_further_interrupts
from ctplugin.errors import CtpluginError
from ctplugin.secp256k1 import kernel
from regtest.elements import CHAIN_OPTION_HELP, chain_from_words
from regtest.params import CHAIN_NAMES, DEFAULT_CHAIN
from replay.config import ReplayConfig, ReplayError, ReplayMode
from replay.driver import replay
from replay.report import ReplayReport, ReportError
from replay.sources import SourceError, open_source, read_cookie
from rpc.helpformat import UserHelpFormatter
from rpcclient import cookie_path

DESCRIPTION = """\
Replay blocks into a data directory, verifying every proof, with a progress bar and a
report (and a JSON report and a picture if asked). SOURCE is a chain file ("ctplugin chain
--out"), a Bitcoin Core / Elements blocks/ directory (blk*.dat files in any order, xor.dat
obfuscation), or http://HOST:PORT of an elementsd-compatible node. A second run resumes
from the data directory's tip.

  ctplugin replay chain.dat --datadir replayed --mode window --json window.json
  ctplugin replay --compare block.json window.json --plot modes.png

Exit status: 0 done, 1 a block was rejected (the culprit is printed), 2 bad usage,
unreadable input or a missing optional extra, 3 the data directory or the workers failed,
130 interrupted (Ctrl-C; run it again to resume).
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ctplugin replay", description=DESCRIPTION,
                                formatter_class=UserHelpFormatter)
    p.add_argument("source", nargs="?", help="chain file, blocks/ directory or http:// URL")
    p.add_argument("--datadir", type=Path, help="data directory (created if missing)")
    p.add_argument("--mode", type=ReplayMode, choices=list(ReplayMode),
                   default=ReplayMode.BLOCK,
                   help="single: each proof alone (Elements' way); block: one batch per "
                        "block (the node); window: one batch per W blocks; workers: proof "
                        "work in N processes; dask: proof work on a Dask cluster")
    p.add_argument("--window", type=int, default=10, metavar="W",
                   help="blocks per batch in window mode (default 10)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="worker processes (workers mode) or LocalCluster workers (dask "
                        "mode without --scheduler); default: one per core")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="dask mode: an existing Dask scheduler (default: a LocalCluster)")
    p.add_argument("--task-proofs", type=int, default=1000, metavar="N",
                   help="workers/dask: about N proofs per task (default 1000)")
    p.add_argument("--par", type=int, default=0, metavar="N",
                   help="kernel threads for the driver's own verification (0: all cores, "
                        "the default; as Core's -par)")
    p.add_argument("--worker-par", type=int, default=1, metavar="N",
                   help="kernel threads inside each worker (workers/dask; default 1: one "
                        "worker per core)")
    p.add_argument("--chain", choices=CHAIN_NAMES, default=DEFAULT_CHAIN,
                   help=f"which of our chains the blocks belong to (default {DEFAULT_CHAIN}; "
                        "a chain written with `ctplugin chain --chain ctregtest-borromean` "
                        "replays with the same; a data directory keeps the chain it was "
                        "made for)")
    p.add_argument("--chain-option", action="append", default=[], metavar="NAME=VALUE",
                   help=CHAIN_OPTION_HELP + "; the same as the chain was built with")
    p.add_argument("--stop-at-height", type=int, metavar="H",
                   help="stop once the block at height H is connected (default: the "
                        "source's last block)")
    p.add_argument("--json", type=Path, metavar="FILE", help="write the report as JSON")
    p.add_argument("--plot", type=Path, metavar="FILE.png",
                   help="draw time per block against proofs per block, and the cumulative "
                        "time (an image: .png, .svg, .pdf ...)")
    p.add_argument("--compare", type=Path, nargs="+", metavar="REPORT.json",
                   help="plot these reports together (with --plot), no replay")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar: UpdateTip log lines instead")
    p.add_argument("--log-every", type=float, default=1.0, metavar="SECONDS",
                   help="with --quiet, at most one UpdateTip line per SECONDS (0: every "
                        "block)")
    p.add_argument("--rpcuser", help="an http:// SOURCE's JSON-RPC user (with --rpcpassword)")
    p.add_argument("--rpcpassword", help="an http:// SOURCE's JSON-RPC password")
    p.add_argument("--rpccookiefile", type=Path,
                   help="the node's cookie (relative: to the node's DIR/<chain>/)")
    p.add_argument("--rpcdatadir", type=Path, metavar="DIR",
                   help="the node's data directory: its cookie is read from DIR/<chain>/.cookie "
                        "(--chain), as elements-cli finds it")
    return p


def _unwritable(*paths: Path | None, datadir: Path | None = None) -> str | None:
    """A message for the first output file that cannot be written (checked before a replay
    that may run for hours), or None. A missing directory that creating ``datadir`` makes
    (``--datadir run/data --json run/r.json``) is fine."""
    from validator import unwritable

    for path in paths:
        if path is None:
            continue
        target = path
        if datadir is not None and not path.parent.is_dir() \
                and datadir.absolute().is_relative_to(path.parent.absolute()):
            target = path.parent  # made with the data directory: its own parent must be
            while not target.parent.is_dir() and target.parent != target:
                target = target.parent
        reason = "Is a directory" if path.is_dir() else unwritable(target)
        if reason is not None:
            return f"ctplugin replay: cannot write {path}: {reason}"
    return None


def _write_outputs(report: ReplayReport, args: argparse.Namespace) -> int:
    """The --json / --plot files of a finished replay: 0, or 2 (with a message) if one
    cannot be written after all."""
    from replay.plot import plot_reports

    try:
        if args.json:
            report.write_json(args.json)
            print(f"wrote {args.json}")
        if args.plot:
            plot_reports([report], args.plot)
            print(f"wrote {args.plot}")
    except OSError as exc:
        print(f"ctplugin replay: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0


def _bad_picture(path: Path | None) -> str | None:
    """The refusal of a --plot name matplotlib cannot write as an image, checked before any
    work; None when fine."""
    if path is None:
        return None
    from replay.plot import PlotError, image_format

    try:
        image_format(path)
    except PlotError as exc:
        return f"ctplugin replay: {exc}"
    return None


def _compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from replay.plot import plot_reports

    if args.plot is None:
        parser.error("--compare needs --plot FILE.png")
    if (message := _unwritable(args.plot) or _bad_picture(args.plot)) is not None:
        print(message, file=sys.stderr)
        return 2
    try:
        reports = [ReplayReport.read_json(path) for path in args.compare]
    except ReportError as exc:
        print(f"ctplugin replay: {exc}", file=sys.stderr)
        return 2
    try:
        # each series is named by its file, as the user named the runs ("block.json": block)
        plot_reports(reports, args.plot, names=_series_names(args.compare))
    except OSError as exc:
        print(f"ctplugin replay: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {args.plot} ({len(reports)} reports)")
    return 0


def _series_names(paths: list[Path]) -> list[str]:
    """The files' names without ``.json``; whole paths where two names are the same."""
    stems = [path.stem if path.suffix == ".json" else path.name for path in paths]
    if len(set(stems)) < len(stems):
        return [str(path) for path in paths]
    return stems


def _missing_extra(args: argparse.Namespace) -> str | None:
    """The refusal for an option whose optional extra is not installed (checked before any
    work), or None."""
    if args.mode is ReplayMode.DASK and (message := missing_message(
            "ctplugin replay --mode dask", Extra.DASK)) is not None:
        return message
    return missing_message("ctplugin replay --plot", Extra.PLOT) if args.plot else None


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if (message := _missing_extra(args)) is not None:
        print(message, file=sys.stderr)
        return 2
    if args.compare:
        return _compare(args, parser)
    if args.source is None or args.datadir is None:
        parser.error("SOURCE and --datadir are required (or --compare)")
    if args.window < 1 or (args.workers is not None and args.workers < 1) \
            or args.task_proofs < 1:
        parser.error("--window, --workers and --task-proofs must be positive")
    if args.stop_at_height is not None and args.stop_at_height < 0:
        parser.error("--stop-at-height must be 0 or more")
    if not (0 <= args.par <= kernel.MAX_THREADS and 0 <= args.worker_par <= kernel.MAX_THREADS):
        parser.error(f"--par and --worker-par are 0 (all cores) to {kernel.MAX_THREADS}")
    if args.scheduler and args.mode is not ReplayMode.DASK:
        parser.error("--scheduler goes with --mode dask")
    if bool(args.rpcuser) != bool(args.rpcpassword):
        parser.error("--rpcuser and --rpcpassword go together")
    config = ReplayConfig(mode=args.mode, window=args.window, workers=args.workers,
                          scheduler=args.scheduler, stop_at_height=args.stop_at_height,
                          quiet=args.quiet, log_every=args.log_every,
                          task_proofs=args.task_proofs, par=args.par,
                          worker_par=args.worker_par, chain=args.chain,
                          chain_options=tuple(args.chain_option))
    try:
        params = chain_from_words(args.chain, args.chain_option)
    except CtpluginError as exc:
        parser.error(str(exc))
    if (message := _unwritable(args.json, args.plot, datadir=args.datadir)) is not None:
        print(message, file=sys.stderr)
        return 2
    if (message := _bad_picture(args.plot)) is not None:
        print(message, file=sys.stderr)
        return 2
    from rich.console import Console

    try:
        auth = (args.rpcuser, args.rpcpassword) if args.rpcuser else None
        if args.rpcdatadir is not None and not args.rpcuser:
            auth = read_cookie(cookie_path(args.rpcdatadir, chain_subdir=args.chain,
                                           rpccookiefile=args.rpccookiefile))
        elif args.rpccookiefile is not None:
            auth = read_cookie(args.rpccookiefile)
        source = open_source(args.source, params.genesis_hash, rpc_auth=auth,
                             magic=params.network_magic)
    except SourceError as exc:
        print(f"ctplugin replay: {exc}", file=sys.stderr)
        return 2
    for warning in getattr(source, "warnings", list)():
        print(f"ctplugin replay: warning: {warning}", file=sys.stderr)
    status = 0
    report: ReplayReport | None
    try:
        report = replay(source, args.datadir, config)
    except ReplayError as exc:
        print(f"ctplugin replay: {exc}", file=sys.stderr)
        report = exc.report
        status = 1
    except SourceError as exc:
        print(f"ctplugin replay: {exc}", file=sys.stderr)
        return 2
    except CtpluginError as exc:
        print(f"ctplugin replay: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        ignore_further_interrupts()
        print("ctplugin replay: interrupted; the data directory is at its last verified block "
              "(run the same command again to resume)", file=sys.stderr)
        return 130
    finally:
        source.close()
    if report is None:
        return status
    if report.blocks == 0 and status == 0:
        # a resume with nothing left: one line, not a table of zeros
        print(f"nothing to replay: {args.datadir} is already at height {report.height} "
              f"(tip {report.tip})")
        return _write_outputs(report, args)
    console = Console()
    console.print(report.table())
    for line in report.summary():
        console.print(line, highlight=False, soft_wrap=True)
    return _write_outputs(report, args) or status
