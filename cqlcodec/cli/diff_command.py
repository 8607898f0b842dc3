"""``python -m cqlcodec diff SRC_KS.T DST_KS.T``: two tables compared row by row
(:func:`cqlcodec.driver.diff_tables`), on one cluster or two (``--to-host`` ...).

Prints a summary line on stderr and writes every difference as one JSON line to
``--report FILE`` (``-``: stdout). Exit status 0 when the tables are equal, 1 when they
are not, the other statuses of :mod:`cqlcodec.cli.exits` otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import IO, Any

from cqlcodec.cli import exits
from cqlcodec.cli.connect import ConnectError, add_connection_options, open_session, target_args
from cqlcodec.cli.progress import Progress

__all__ = ["add_command", "cmd_diff"]


def add_command(sub: Any) -> None:
    """Adds ``diff`` to the tool's subparsers."""
    from cqlcodec.cli.table_commands import _rate, _scan_options, _seconds

    p = sub.add_parser("diff", help="compare two tables row by row (same or another cluster)",
                       description="Read both tables with the same token-range splits and "
                                   "match their rows by primary key as they stream; report "
                                   "rows missing from the target, rows only in the target "
                                   "and rows whose values differ. Exit status 0 when equal, "
                                   "1 when not.",
                       epilog=exits.DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", metavar="SRC_KEYSPACE.TABLE")
    p.add_argument("target", metavar="DST_KEYSPACE.TABLE")
    p.add_argument("--columns", metavar="A,B",
                   help="compare only these columns (and the primary key)")
    p.add_argument("--writetime", action="store_true",
                   help="also compare each cell's write time")
    p.add_argument("--ttl", action="store_true",
                   help="also compare each cell's TTL (within --ttl-tolerance)")
    p.add_argument("--ttl-tolerance", type=_seconds, default=0.0, metavar="S",
                   help="TTLs this many seconds apart are equal (default 0; TTLs count down "
                        "between the two reads)")
    p.add_argument("--float-tolerance", type=float, default=0.0, metavar="X",
                   help="float and double values at most X apart are equal (default 0)")
    p.add_argument("--report", metavar="FILE",
                   help="write every difference as one JSON line to FILE (- for stdout)")
    p.add_argument("--recheck", action="store_true",
                   help="read every difference again at the end from both sides and drop "
                        "those that converged (a table taking writes)")
    p.add_argument("--recheck-after", type=_seconds, default=5.0, metavar="S",
                   help="with --recheck: wait S seconds before the recheck (default 5)")
    p.add_argument("--fix", action="store_true",
                   help="write the source's version of missing and differing rows into the "
                        "target, with the source's write times and TTLs (a newer target "
                        "write wins)")
    p.add_argument("--fix-counters", action="store_true",
                   help="with --fix on a counter table: add the difference (source - target) "
                        "to each counter of a missing or differing row; exact only while "
                        "nothing else increments those counters")
    p.add_argument("--where", metavar="COND",
                   help="compare only the rows matching this CQL condition, on both sides "
                        "(sent with ALLOW FILTERING; a row whose filtered values differ shows "
                        "as missing or extra)")
    p.add_argument("--rate", type=_rate, metavar="ROWS_PER_S",
                   help="read at most this many rows per second from each table")
    p.add_argument("--delete-extra", action="store_true",
                   help="delete the rows only the target has, at their own latest write "
                        "time (a later write survives)")
    p.add_argument("--state", metavar="DIR",
                   help="record the plan and the finished splits in DIR (for --resume)")
    p.add_argument("--resume", action="store_true",
                   help="continue the diff recorded in --state DIR")
    _scan_options(p)
    add_connection_options(p, "to-")
    p.set_defaults(run=cmd_diff)


def _connect(args: argparse.Namespace) -> tuple[list[Any], Any, Any]:
    from cqlcodec.cli.table_commands import TableCommandError

    try:
        cluster, session = open_session(args)
        second = target_args(args)
        if second is None:
            return [cluster], session, session
        target_cluster, target = open_session(second)
        return [cluster, target_cluster], session, target
    except ConnectError as exc:
        raise TableCommandError(str(exc), exc.status) from None


def cmd_diff(args: argparse.Namespace) -> int:
    """``diff``: the summary on stderr, the differences to ``--report``; 0 equal, 1 not."""
    from cqlcodec.cli.table_commands import TableCommandError, _columns
    from cqlcodec.driver import DiffError, DiffProgress, diff_tables
    from cqlcodec.driver.diff import check_diff_options

    if args.resume and not args.state:
        raise TableCommandError("--resume needs --state DIR", exits.USAGE)
    try:
        check_diff_options(args.where, args.fix, args.fix_counters, args.delete_extra)
    except DiffError as exc:
        message = str(exc).replace("delete_extra (--delete-extra)", "--delete-extra")
        for name in ("where", "fix_counters", "fix"):
            message = message.replace(f"{name} (--{name.replace('_', '-')})",
                                      f"--{name.replace('_', '-')}")
        raise TableCommandError(message, exits.USAGE) from None
    if not args.float_tolerance >= 0:
        raise TableCommandError(f"--float-tolerance must be at least 0, got "
                                f"{args.float_tolerance}", exits.USAGE)
    columns = _columns(args.columns)
    clusters, source, target = _connect(args)
    progress = Progress("compared", "splits", 0, 0, not args.quiet and sys.stderr.isatty())

    def report(p: DiffProgress) -> None:
        progress.total_units = p.splits_total
        progress.units_done = p.splits_done
        progress.set_rows(p.source_rows)

    out: IO[str] | None = None
    started = time.monotonic()
    try:
        diff = diff_tables(source, args.table, target, args.target, columns=columns,
                           writetime=args.writetime, ttl=args.ttl,
                           float_tolerance=args.float_tolerance,
                           ttl_tolerance=args.ttl_tolerance, splits=args.splits,
                           concurrency=args.concurrency, fetch_size=args.fetch_size,
                           # each side at its session's level: --consistency, --to-consistency
                           consistency_level=None, retries=args.retries,
                           retry_timeout=args.retry_timeout, recheck=args.recheck,
                           recheck_after=args.recheck_after, fix=args.fix,
                           delete_extra=args.delete_extra, fix_counters=args.fix_counters,
                           where=args.where, rate=args.rate, state=args.state,
                           resume=args.resume, progress=report)
        if args.report == "-":
            out = sys.stdout
        elif args.report:
            out = open(args.report, "w", encoding="utf-8")
        for difference in diff:
            if out is not None:
                out.write(json.dumps(difference.as_json(), ensure_ascii=False,
                                     separators=(",", ":")) + "\n")
    except DiffError as exc:
        raise TableCommandError(str(exc), exits.BAD_INPUT) from None
    finally:
        progress.finish()
        if out is not None and out is not sys.stdout:
            out.close()
        for cluster in clusters:
            cluster.shutdown()
    if args.report == "-":
        sys.stdout.flush()
    if not args.quiet:
        seconds = time.monotonic() - started
        sys.stderr.write(f"diff {args.table} -> {args.target}: {diff.summary()} "
                         f"in {seconds:.2f} s\n")
        sys.stderr.flush()
    return exits.OK if diff.equal else exits.FAILED
