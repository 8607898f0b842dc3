"""``python -m cqlcodec copy SRC_KS.T DST_KS.T``: a table into another, on the same
cluster or another (the ``--to-*`` options), through
:func:`cqlcodec.driver.copy_table`, resumable from ``--state DIR``."""

from __future__ import annotations

import argparse
from typing import Any

from cqlcodec.cli import exits
from cqlcodec.cli.connect import ConnectError, add_connection_options, open_session, target_args
from cqlcodec.cli.progress import Progress, summary
from cqlcodec.cli.table_commands import (
    DEFAULT_BATCH_BYTES,
    TableCommandError,
    _columns,
    _connect,
    _consistency,
    _positive,
    _rate,
    _refused_permission,
    _require_pyarrow,
    _retry_options,
    _say,
    _show_progress,
    _warn_counter_rows,
)


def add_command(sub: Any) -> None:
    """Adds ``copy`` to the tool's subparsers."""
    p = sub.add_parser(
        "copy", help="copy a table into another, on this cluster or another (--to-host)",
        description="Read every row of SOURCE, several token-range splits at once, and "
                    "write it into TARGET as it is read, each cell with its own write time "
                    "and TTL, no files in between. The target table must exist with the "
                    "columns copied. --state DIR keeps which splits were copied; --resume "
                    "continues a copy that was stopped.",
        epilog=exits.DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("source", metavar="SRC_KEYSPACE.TABLE")
    p.add_argument("target", metavar="DST_KEYSPACE.TABLE")
    p.add_argument("--columns", metavar="A,B",
                   help="only these columns (default all; the primary key is always copied); "
                        'unquoted names fold to lower case, "Quoted" ones keep their case')
    p.add_argument("--where", metavar="COND",
                   help="copy only the source rows matching this CQL condition "
                        "(sent with ALLOW FILTERING)")
    p.add_argument("--state", metavar="DIR",
                   help="keep the plan and the splits copied in DIR (made if need be)")
    p.add_argument("--resume", action="store_true",
                   help="continue the copy whose state is in --state DIR: copy only the "
                        "splits not recorded there")
    p.add_argument("--ignore-writetime", action="store_true",
                   help="write the cells at the time of the copy, without TTL (default: "
                        "each cell keeps its write time and TTL)")
    p.add_argument("--nulls-delete", action="store_true",
                   help="write null cells as deletions; by default a null is left unwritten")
    p.add_argument("--rate", type=_rate, metavar="ROWS_PER_S",
                   help="at most this many rows per second")
    p.add_argument("--concurrency", type=_positive, default=16, metavar="N",
                   help="write requests (batches) in flight (default 16)")
    p.add_argument("--read-concurrency", type=_positive, default=4, metavar="N",
                   help="source splits read at once (default 4)")
    p.add_argument("--splits", type=_positive, metavar="N",
                   help="token-range splits to read (default: 8 per core of the cluster)")
    p.add_argument("--fetch-size", type=_positive, default=5000, metavar="N",
                   help="rows per page read, and written at a time (default 5000)")
    p.add_argument("--batch-bytes", type=_positive, metavar="N",
                   help="batch size in the server's measure (default 40000)")
    p.add_argument("--no-batch", action="store_true", help="one row per write request")
    _retry_options(p, "without a page read or a row written")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress, no summary line")
    add_connection_options(p)
    add_connection_options(p, "to-")
    p.set_defaults(run=cmd_copy, error_status=exits.BAD_INPUT)


def cmd_copy(args: argparse.Namespace) -> int:
    """``copy``: :func:`cqlcodec.driver.copy_table` with the command line's options."""
    if args.resume and not args.state:
        raise TableCommandError("--resume continues the copy kept in --state DIR: give "
                                "--state", exits.USAGE)
    if args.no_batch and args.batch_bytes is not None:
        raise TableCommandError("--batch-bytes sizes batches: --no-batch sends none",
                                exits.USAGE)
    _require_pyarrow()
    from cqlcodec.driver import CopyError, CopyProgress, ScanError, copy_table

    columns = _columns(args.columns)
    second = target_args(args)
    cluster, session = _connect(args)
    clusters = [cluster]
    try:
        target_session = session
        if second is not None:
            try:
                target_cluster, target_session = open_session(second)
            except ConnectError as exc:
                raise TableCommandError(f"target: {exc}", exc.status) from None
            clusters.append(target_cluster)
        if not args.resume:
            _warn_counter_rows(target_session, args.target, "copy")
        progress = Progress("copied", "splits", 0, 0, _show_progress(args))
        latest: list[CopyProgress] = []
        progress.estimate = lambda: latest[-1].estimated_rows if latest else 0
        progress.status = lambda: latest[-1].waiting if latest else ""

        def report(p: CopyProgress) -> None:
            latest[:] = [p]
            progress.total_units = p.splits_total
            progress.units_done = p.splits_done
            progress.set_rows(p.rows)

        try:
            result = copy_table(
                session, args.source, target_session, args.target, columns=columns,
                where=args.where, splits=args.splits, read_concurrency=args.read_concurrency,
                fetch_size=args.fetch_size, concurrency=args.concurrency,
                batch_by_replica=not args.no_batch,
                batch_bytes=args.batch_bytes or DEFAULT_BATCH_BYTES,
                read_consistency=_consistency(args),
                write_consistency=_consistency(second or args), retries=args.retries,
                retry_timeout=args.retry_timeout, ignore_writetime=args.ignore_writetime,
                nulls="delete" if args.nulls_delete else "unset", rate=args.rate,
                progress=report, state=args.state, resume=args.resume,
                raise_on_error=False)
        except CopyError as exc:
            progress.finish()
            raise TableCommandError(str(exc), exits.BAD_INPUT) from None
        except ScanError as exc:
            progress.finish()
            _refused_permission(exc)
            status = exits.FAILED if exc.split is not None else exits.BAD_INPUT
            raise TableCommandError(f"{exc}{_resume_hint(args)}", status) from None
        progress.finish()
        splits = f"{result.splits_done} of {result.splits_total} splits"
        if result.splits_skipped:
            splits += f" ({result.splits_skipped} copied before)"
        if result.failures:
            for f in result.failures[:5]:
                _say(args, f"cqlcodec: row {f.row}: {type(f.error).__name__}: {f.error}")
            raise TableCommandError(
                f"{len(result.failures):,} rows of split {result.failed_splits[0]} were not "
                f"written; {splits} copied{_resume_hint(args)}", exits.FAILED)
        detail = f"{result.requests:,} requests, {splits}"
        if result.empty:
            detail += f", {result.empty:,} rows whose counters were all null"
        _say(args, summary("copied", result.written, progress.elapsed, detail))
        return exits.OK
    finally:
        for c in clusters:
            c.shutdown()


def _resume_hint(args: argparse.Namespace) -> str:
    if args.state:
        return f": run again with --state {args.state} --resume to finish"
    return " (give --state DIR to make a copy resumable)"
