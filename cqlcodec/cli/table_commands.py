"""The table commands of ``python -m cqlcodec``: ``unload``, ``load`` and ``count``.

    cqlcodec unload ks.table -o DIR [--format parquet|csv|arrow] [--columns a,b]
                    [--where COND] [--resume]
    cqlcodec load ks.table FILE_OR_DIR...
    cqlcodec count ks.table [--where COND]

They connect with the driver (cassandra-driver or scylla-driver) and
:func:`cqlcodec.driver.install`, read with :func:`cqlcodec.driver.plan_splits` and
:func:`cqlcodec.driver.read_split` (several splits at once) and write with
:func:`cqlcodec.driver.load_table`. Progress goes to stderr when it is a terminal
(``--quiet`` turns it and the summary line off); the exit statuses are in
:mod:`cqlcodec.cli.exits`.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Final

from cqlcodec.cli import exits
from cqlcodec.cli.connect import ConnectError, add_connection_options, open_session
from cqlcodec.cli.progress import Progress, summary
from cqlcodec.cli.unload_files import (
    COMPRESSIONS,
    FORMATS,
    TEXT_FORMATS,
    Manifest,
    ManifestError,
    remove_temporaries,
    split_file_name,
    splits_as_dicts,
    write_split,
)
from cqlcodec.types.names import CqlNameError, parse_names, quote_name

DEFAULT_RETRY_TIMEOUT: Final = 120.0  # as cqlcodec.driver.outage (not imported: startup time)
if TYPE_CHECKING:
    from cqlcodec.driver.outage import Patience

ARROW_HINT: Final = "this command needs pyarrow: pip install 'cqlcodec[arrow]'"
MAX_COUNT_HALVINGS: Final = 8
DEFAULT_TOP: Final = 10
DEFAULT_BATCH_BYTES: Final = 40_000


class TableCommandError(Exception):
    """A table command stops: one line on stderr and ``status`` as exit status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def add_commands(sub: Any) -> None:
    """Adds unload, load and count to the tool's subparsers."""
    p = sub.add_parser("unload",
                       help="write a whole table to Parquet, CSV, JSON lines or Arrow files",
                       description="Read every row of a table, several token-range splits at "
                                   "once, into one file per split in DIR (and a manifest, "
                                   "_manifest.json, of the finished splits).",
                       epilog=exits.DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", metavar="KEYSPACE.TABLE")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="output directory; - writes csv or jsonl to stdout")
    p.add_argument("--format", choices=sorted(FORMATS), default="parquet",
                   help="file format (default parquet)")
    p.add_argument("--columns", metavar="A,B",
                   help='only these columns (default all); unquoted names fold to lower case, '
                        '"Quoted" ones keep their case')
    p.add_argument("--where", metavar="COND",
                   help="a further CQL condition on the rows (sent with ALLOW FILTERING)")
    p.add_argument("--resume", action="store_true",
                   help="continue an unload into DIR that was stopped: write only the splits "
                        "its manifest does not list")
    p.add_argument("--compress", choices=sorted(COMPRESSIONS),
                   help="compress csv or jsonl output (files get .gz or .zst)")
    p.add_argument("--parquet-compression", metavar="CODEC",
                   choices=["none", "snappy", "gzip", "brotli", "lz4", "zstd"],
                   help="the Parquet files' codec (default snappy)")
    p.add_argument("--rate", type=_rate, metavar="ROWS_PER_S",
                   help="at most this many rows per second")
    p.add_argument("--writetime", action="store_true",
                   help="add a column writetime(c) (microseconds) per regular column c")
    p.add_argument("--ttl", action="store_true",
                   help="add a column ttl(c) (seconds left, empty without TTL) per regular "
                        "column c")
    _scan_options(p)
    p.set_defaults(run=cmd_unload)

    p = sub.add_parser("load", help="write Parquet, CSV, JSON lines or Arrow files into a table",
                       description="Insert every row of the files (or the files in the "
                                   "directories) into a table; columns are matched by name.",
                       epilog=exits.DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", metavar="KEYSPACE.TABLE")
    p.add_argument("sources", nargs="+", metavar="FILE_OR_DIR",
                   help="files or directories; - reads stdin (with --format)")
    p.add_argument("--format", choices=["csv", "jsonl"],
                   help="the format of stdin (files are known by their names)")
    p.add_argument("--columns", metavar="A,B",
                   help='only these source columns (default all), by their exact names; '
                        '"quotes" hold a name with a comma')
    p.add_argument("--chunk-rows", type=_positive, default=20_000, metavar="N",
                   help="rows read, checked and sent at a time (default 20000)")
    p.add_argument("--batch-bytes", type=_positive, metavar="N",
                   help="batch size in the server's measure (default 40000; the server "
                        "refuses more than batch_size_fail_threshold, 50 KiB)")
    p.add_argument("--no-batch", action="store_true", help="one row per request")
    p.add_argument("--concurrency", type=_positive, default=16, metavar="N",
                   help="requests (batches) in flight (default 16)")
    _retry_options(p, "without a row written")
    p.add_argument("--rate", type=_rate, metavar="ROWS_PER_S",
                   help="at most this many rows per second")
    p.add_argument("--max-errors", type=_non_negative, metavar="N",
                   help="go on past bad rows (wrong type, out of range, refused by the "
                        "server); stop after more than N (exit status 1 if any); without "
                        "--bad-rows they go to a file in the current directory")
    p.add_argument("--bad-rows", metavar="FILE",
                   help="append the bad rows to FILE (CSV for CSV input, else JSON lines) "
                        "with their error and source position; implies going on past them")
    p.add_argument("--dry-run", action="store_true",
                   help="read, convert and bind every row, send nothing, report the errors")
    p.add_argument("--ignore-writetime", action="store_true",
                   help="leave out the source's writetime(c)/ttl(c) columns: cells get the "
                        "time of the load and no TTL")
    p.add_argument("--nulls-delete", action="store_true",
                   help="write null cells as deletions (tombstones), so that a null clears "
                        "what the table holds; by default a null is left unwritten")
    p.add_argument("--time-zone", type=_time_zone, default="UTC", metavar="ZONE",
                   help="the zone of CSV and JSON lines timestamps written without one: "
                        "an IANA name (Europe/Paris), an offset (+02:00) or UTC (default)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress, no summary line")
    add_connection_options(p)
    p.set_defaults(run=cmd_load, error_status=exits.BAD_INPUT)

    p = sub.add_parser("count", help="count the rows of a table (in parallel over its splits)",
                       description="Count the rows of a table exactly: SELECT count(*) per "
                                   "token-range split, several at once, each on a replica; a "
                                   "split that times out is counted in halves. Prints the count.",
                       epilog=exits.DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", metavar="KEYSPACE.TABLE")
    p.add_argument("--where", metavar="COND",
                   help="count only rows matching this CQL condition (ALLOW FILTERING)")
    p.add_argument("--by", choices=["host", "range", "partition"],
                   help="one line per replica host, token range or partition: the group, "
                        "then its row count")
    p.add_argument("--top", type=_positive, metavar="N",
                   help=f"with --by partition: the N largest partitions (default {DEFAULT_TOP})")
    p.add_argument("--json", action="store_true", help="with --by: one JSON document")
    _scan_options(p)
    p.set_defaults(run=cmd_count)


def _whole(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
    return value


def _positive(text: str) -> int:
    return _whole(text, 1)


def _non_negative(text: str) -> int:
    return _whole(text, 0)


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {value}")
    return value


def _time_zone(text: str) -> str:
    from cqlcodec.driver.time_text import time_zone_of

    try:
        time_zone_of(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _scan_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--splits", type=_positive, metavar="N",
                   help="token-range splits to read (default: 8 per core of the cluster)")
    p.add_argument("--concurrency", type=_positive, default=4, metavar="N",
                   help="splits read at once (default 4)")
    p.add_argument("--fetch-size", type=_positive, default=5000, metavar="N",
                   help="rows per page (default 5000)")
    _retry_options(p, "without a page read (per split)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress, no summary line")
    add_connection_options(p)
    p.set_defaults(error_status=exits.BAD_INPUT)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {text}")
    return value


def _retry_options(p: argparse.ArgumentParser, progress: str) -> None:
    p.add_argument("--retry-timeout", type=_seconds, default=DEFAULT_RETRY_TIMEOUT, metavar="S",
                   help=f"keep retrying through an outage until S seconds pass {progress} "
                        f"(default {DEFAULT_RETRY_TIMEOUT:g})")
    p.add_argument("--retries", type=int, default=None, metavar="N",
                   help="also give up after N failures in a row (default: no count limit; "
                        "before --retry-timeout existed this was the only bound)")


def _columns(text: str | None) -> list[str] | None:
    """--columns of unload: the names as CQL writes them (quoted ones keep their case and
    may hold commas), resolved against the table by the scan."""
    names = _column_names(text)
    return None if names is None else [quote_name(n) if q else n for n, q in names]


def _source_columns(text: str | None) -> list[str] | None:
    """--columns of load: source (file) column names, matched exactly; double quotes
    hold a name with a comma or a quote (``""``)."""
    names = _column_names(text)
    return None if names is None else [n for n, _ in names]


def _column_names(text: str | None) -> list[tuple[str, bool]] | None:
    if not text:
        return None
    try:
        names = parse_names(text, "--columns")
    except CqlNameError as exc:
        raise TableCommandError(str(exc), exits.USAGE) from None
    if not names:
        raise TableCommandError("--columns names no column", exits.USAGE)
    return names


def _require_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise TableCommandError(ARROW_HINT, exits.MISSING_DEPENDENCY) from None


def _connect(args: argparse.Namespace) -> tuple[Any, Any]:
    try:
        return open_session(args)
    except ConnectError as exc:
        raise TableCommandError(str(exc), exc.status) from None


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def _say(args: argparse.Namespace, line: str) -> None:
    if not args.quiet:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


# --------------------------------------------------------------------------- unload

def cmd_unload(args: argparse.Namespace) -> int:
    """``unload``: one file per split into the output directory, resumable."""
    _require_pyarrow()
    from cqlcodec.driver import ScanError, TokenSplit, plan_splits, read_split
    from cqlcodec.driver.estimates import RowEstimate
    from cqlcodec.driver.outage import host_watch
    from cqlcodec.driver.scan import table_schema_batch
    from cqlcodec.driver.splits import table_ref

    columns = _columns(args.columns)
    out = args.output
    if args.compress and args.format not in TEXT_FORMATS:
        raise TableCommandError("--compress is for csv and jsonl (Parquet: "
                                "--parquet-compression)", exits.USAGE)
    if args.parquet_compression and args.format != "parquet":
        raise TableCommandError(f"--parquet-compression is for --format parquet, not "
                                f"{args.format} (csv, jsonl: --compress)", exits.USAGE)
    if out == "-":
        if args.format not in TEXT_FORMATS:
            raise TableCommandError("-o - (stdout) writes csv or jsonl only", exits.USAGE)
        if args.resume:
            raise TableCommandError("--resume continues an unload into a directory: stdout "
                                    "(-o -) keeps no manifest to resume from", exits.USAGE)
        return _unload_to_stdout(args, columns)
    if os.path.exists(out) and not os.path.isdir(out):
        raise TableCommandError(f"{out} is not a directory", exits.BAD_INPUT)
    cluster, session = _connect(args)
    try:
        ref = table_ref(session, args.table)
        table = str(ref)
        # unknown columns and a condition the server refuses fail before any file
        table_schema_batch(session, table, columns, writetime=args.writetime, ttl=args.ttl,
                           where=args.where)
        header = {"table": table, "columns": columns, "where": args.where, "format": args.format}
        if args.writetime or args.ttl:
            header.update(writetime=args.writetime, ttl=args.ttl)
        if args.compress:
            header["compress"] = args.compress
        os.makedirs(out, exist_ok=True)
        try:
            manifest = Manifest.load(out)
        except ManifestError as exc:
            raise TableCommandError(str(exc), exits.BAD_INPUT) from None
        if manifest is not None and not args.resume:
            raise TableCommandError(f"{out} holds an unload already ({manifest.path}): use "
                                    "--resume to finish it, or another directory",
                                    exits.BAD_INPUT)
        if manifest is not None:
            try:
                manifest.check_matches(header)
            except ManifestError as exc:
                raise TableCommandError(str(exc), exits.BAD_INPUT) from None
            splits = [TokenSplit(d["start"], d["end"], tuple(d["replicas"]),
                                 d["estimated_rows"], d["estimated_bytes"])
                      for d in manifest.splits]
        else:
            if any(n.startswith("part-") for n in os.listdir(out)):
                raise TableCommandError(f"{out} holds part- files but no manifest: use an "
                                        "empty directory", exits.BAD_INPUT)
            splits = plan_splits(session, table, args.splits)
            manifest = Manifest(out, header, splits_as_dicts(splits), {})
            manifest.save()
        remove_temporaries(out)
        todo = [i for i in range(len(splits)) if str(i) not in manifest.done]
        estimate = RowEstimate(sum(s.estimated_rows for s in splits),
                               bool(ref.metadata.clustering_key))
        for key, done in manifest.done.items():
            estimate.split_done(int(done["rows"]), splits[int(key)].estimated_rows)
        progress = Progress("unloaded", "splits", len(splits), 0, _show_progress(args))
        progress.estimate = lambda: estimate.rows
        progress.status = host_watch(session).waiting_text
        progress.rows = manifest.rows_done()
        progress.units_done = len(splits) - len(todo)
        before = progress.rows
        cl = _consistency(args)

        limiter = _limiter(args)

        def unload_split(index: int) -> None:
            batches = read_split(session, table, splits[index], columns, where=args.where,
                                 fetch_size=_fetch_size(args), consistency_level=cl,
                                 retries=args.retries, retry_timeout=args.retry_timeout,
                                 writetime=args.writetime, ttl=args.ttl)
            name = split_file_name(index, args.format, args.compress)
            rows = write_split(_throttled(_sampled(batches, estimate, ref.partition_key),
                                          limiter), out, name, args.format,
                               progress.add_rows,
                               compress=args.compress,
                               parquet_compression=args.parquet_compression)
            manifest.finished(index, name if rows else None, rows)
            estimate.split_done(rows, splits[index].estimated_rows)
            progress.unit_done()

        failed = _run_all(unload_split, todo, args.concurrency, progress)
        progress.finish()
        done_now = progress.rows - before
        if failed:
            index, error = failed[0]
            _refused_permission(error)
            cause = f"{type(error).__name__}: {error}"
            if isinstance(error, ScanError):
                cause = str(error)
            raise TableCommandError(
                f"{len(failed)} of {len(todo)} splits failed (first: split {index}, {cause}); "
                f"{len(todo) - len(failed)} written: run again with --resume to finish",
                exits.FAILED)
        files = sum(1 for d in manifest.done.values() if d["file"])
        _say(args, summary("unloaded", done_now, progress.elapsed,
                           f"{progress.rows:,} rows in {files} files in {out}"))
        return exits.OK
    finally:
        cluster.shutdown()


def _unload_to_stdout(args: argparse.Namespace, columns: list[str] | None) -> int:
    """``unload -o -``: every split's rows, as they arrive, to stdout (csv or jsonl)."""
    import pyarrow as pa

    from cqlcodec.cli.unload_files import open_output, write_csv_stream, write_jsonl
    from cqlcodec.driver import ScanError, scan_table

    cluster, session = _connect(args)
    try:
        progress = Progress("unloaded", "splits", 0, 0, _show_progress(args))
        try:
            scan = scan_table(session, args.table, columns, where=args.where,
                              splits=args.splits, concurrency=args.concurrency,
                              fetch_size=_fetch_size(args),
                              consistency_level=_consistency(args),
                              retries=args.retries, retry_timeout=args.retry_timeout,
                              writetime=args.writetime, ttl=args.ttl)
            pages = _throttled(scan, _limiter(args))
            with scan, open_output(pa, sys.stdout.buffer, args.compress) as sink:
                if args.format == "jsonl":
                    rows = write_jsonl(pa, pages, sink, progress.add_rows)
                else:
                    rows = write_csv_stream(pa, pages, sink, progress.add_rows)
            sys.stdout.flush()
        except ScanError as exc:  # before any split was read: the table, columns, --where
            _refused_permission(exc)
            status = exits.FAILED if exc.split is not None else exits.BAD_INPUT
            raise TableCommandError(str(exc), status) from None
        progress.finish()
        _say(args, summary("unloaded", rows, progress.elapsed, "to stdout"))
        return exits.OK
    finally:
        cluster.shutdown()


def _refused_permission(error: BaseException) -> None:
    """A split refused because the role may not read the table (the server's
    ``Unauthorized``, which names the role, the permission and the table) ends the
    command with that message alone, status 3: running again cannot help."""
    from cassandra import Unauthorized

    seen: BaseException | None = error
    while seen is not None and not isinstance(seen, Unauthorized):
        seen = seen.__cause__
    if seen is not None:
        import re

        found = re.search(r'message="(.*)"', str(seen), re.DOTALL)
        message = found.group(1) if found else str(seen)
        raise TableCommandError(f"permission refused: {message}", exits.BAD_INPUT)


def _limiter(args: argparse.Namespace) -> Any:
    from cqlcodec.driver.throttle import RowRate

    return RowRate(args.rate) if args.rate else None


def _fetch_size(args: argparse.Namespace) -> int:
    """--fetch-size, at most a tenth of a second of rows under --rate."""
    from cqlcodec.driver.throttle import piece_rows

    return piece_rows(args.rate, args.fetch_size) if args.rate else int(args.fetch_size)


def _sampled(batches: Any, estimate: Any, keys: list[str]) -> Any:
    """The batches, the first ones counted into the row estimate (partitions per page)."""
    from cqlcodec.driver.estimates import sample_page

    for batch in batches:
        sample_page(estimate, batch, keys)
        yield batch


def _throttled(batches: Any, limiter: Any) -> Any:
    """The batches, each let through when --rate allows its rows."""
    for batch in batches:
        if limiter is not None:
            limiter.wait(len(batch))
        yield batch


def _consistency(args: argparse.Namespace) -> int:
    from cqlcodec.cli.connect import consistency_level

    return consistency_level(args)


def _run_all(work: Any, items: list[int], concurrency: int,
             progress: Progress) -> list[tuple[int, BaseException]]:
    """Runs ``work(item)`` for every item, ``concurrency`` at once; returns the failures.
    On Ctrl-C the process ends at once (finished splits are in the manifest)."""
    failed: list[tuple[int, BaseException]] = []
    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="cqlcodec")
    futures: dict[Future[None], int] = {}
    try:
        pending = iter(items)
        for item in pending:
            futures[pool.submit(work, item)] = item
            if len(futures) >= concurrency:
                break
        while futures:
            done, _ = wait(list(futures), timeout=0.5, return_when=FIRST_COMPLETED)
            progress.draw()
            for future in done:
                item = futures.pop(future)
                error = future.exception()
                if error is not None:
                    failed.append((item, error))
                following = next(pending, None)
                if following is not None:
                    futures[pool.submit(work, following)] = following
    except KeyboardInterrupt:
        progress.finish()
        sys.stderr.write("cqlcodec: interrupted (finished splits are kept; --resume continues)\n")
        sys.stderr.flush()
        os._exit(exits.INTERRUPTED)
    pool.shutdown(wait=True)
    failed.sort(key=lambda f: f[0])
    return failed


# --------------------------------------------------------------------------- load

def cmd_load(args: argparse.Namespace) -> int:
    """``load``: the files into the table through :func:`cqlcodec.driver.load_table`."""
    _require_pyarrow()
    from cqlcodec.driver import LoadProgress, load_table
    from cqlcodec.driver.bad_rows import BadRowsFile
    from cqlcodec.driver.outage import host_watch
    from cqlcodec.driver.sources import TooManyBadRows, source_parts

    columns = _source_columns(args.columns)
    if "-" in args.sources and args.format is None:
        raise TableCommandError("reading stdin (-) needs --format csv or jsonl", exits.USAGE)
    if "-" not in args.sources and args.format is not None:
        raise TableCommandError("--format is the format of stdin (-): files are known by "
                                "their names", exits.USAGE)
    if "-" in args.sources and len(args.sources) > 1:
        raise TableCommandError("stdin (-) is read alone, without other sources", exits.USAGE)
    if args.no_batch and args.batch_bytes is not None:
        raise TableCommandError("--batch-bytes sizes batches: --no-batch sends none",
                                exits.USAGE)
    parts = source_parts(list(args.sources), args.format)  # bad paths fail before connecting
    cluster, session = _connect(args)
    try:
        _warn_counter_rows(session, args.table)
        progress = Progress("loaded", "files", len(parts), 0, _show_progress(args))
        progress.status = host_watch(session).waiting_text

        def report(p: LoadProgress) -> None:
            if p.rows_total is not None:
                progress.estimated_rows = p.rows_total
            elif p.bytes_done > 0:
                progress.estimated_rows = int(p.rows * p.bytes_total / p.bytes_done)
            progress.units_done = p.parts_done
            progress.set_rows(p.rows)

        tolerant = args.max_errors is not None or args.bad_rows is not None or args.dry_run
        bad_file = None
        if tolerant:
            bad_file = BadRowsFile(args.bad_rows or _bad_rows_name(args.table, parts),
                                   all(p.kind == "csv" for p in parts))
        try:
            result = load_table(
                session, args.table, list(args.sources), columns=columns,
                chunk_rows=args.chunk_rows, batch_by_replica=not args.no_batch,
                batch_bytes=args.batch_bytes or DEFAULT_BATCH_BYTES, concurrency=args.concurrency,
                consistency_level=_consistency(args), retries=args.retries,
                retry_timeout=args.retry_timeout, raise_on_error=False, progress=report,
                ignore_writetime=args.ignore_writetime, stdin_format=args.format,
                nulls="delete" if args.nulls_delete else "unset",
                max_errors=args.max_errors if args.max_errors is not None else
                (1 << 62 if tolerant else None),
                bad_rows=bad_file, dry_run=args.dry_run, rate=args.rate,
                time_zone=args.time_zone)
        except TooManyBadRows as exc:
            progress.finish()
            _show_bad_rows(bad_file)
            raise TableCommandError(f"{exc}{_bad_rows_place(bad_file)}", exits.FAILED) from None
        finally:
            if bad_file is not None:
                bad_file.close()
        progress.finish()
        detail = f"{result.requests:,} requests"
        if result.empty:
            detail += (f", {result.empty:,} rows whose counters were all null (nothing to "
                       "add, nothing written)")
        if args.dry_run:
            _show_bad_rows(bad_file)
            _say(args, f"dry run: {result.rows:,} rows read and bound, "
                       f"{len(result.failures):,} bad{_bad_rows_place(bad_file)}, nothing sent")
            return exits.FAILED if result.failures else exits.OK
        if tolerant:
            budget = "" if args.max_errors is None else f", within --max-errors {args.max_errors}"
            _say(args, summary("loaded", result.written, progress.elapsed,
                               f"{len(result.failures):,} bad rows{_bad_rows_place(bad_file)}"
                               f"{budget}, {detail}"))
            return exits.FAILED if result.failures else exits.OK
        if result.failures:
            for f in result.failures[:5]:
                sys.stderr.write(f"cqlcodec: row {f.row}: {type(f.error).__name__}: {f.error}\n")
            raise TableCommandError(f"{len(result.failures):,} of {result.rows:,} rows were not "
                                    "written (rows counted from 0 across the files in order)",
                                    exits.FAILED)
        _say(args, summary("loaded", result.written, progress.elapsed, detail))
        return exits.OK
    finally:
        cluster.shutdown()


def _bad_rows_name(table: str, parts: list[Any]) -> str:
    """The bad-rows file of a load given --max-errors or --dry-run without --bad-rows: a
    new file in the current directory, named after the table and the time (as dsbulk
    keeps its operation's errors)."""
    import re
    import time

    suffix = "csv" if all(p.kind == "csv" for p in parts) else "jsonl"
    stem = "cqlcodec-bad-rows-" + re.sub(r"[^\w.-]+", "_", table) + \
        time.strftime("-%Y%m%d-%H%M%S")
    name = f"{stem}.{suffix}"
    n = 1
    while os.path.exists(name):
        n += 1
        name = f"{stem}-{n}.{suffix}"
    return name


def _bad_rows_place(bad_file: Any) -> str:
    """`` (in FILE)`` when the bad-rows file holds rows, else nothing."""
    return f" (in {bad_file.path})" if bad_file is not None and bad_file.count else ""


def _show_bad_rows(bad_file: Any) -> None:
    """The first bad rows on stderr, each with its place in the source."""
    if bad_file is None:
        return
    for bad in bad_file.first:
        error = bad.error if len(bad.error) <= 200 else bad.error[:200] + "..."
        sys.stderr.write(f"cqlcodec: bad row at {bad.source}: {error}\n")
    if bad_file.count > len(bad_file.first):
        sys.stderr.write(f"cqlcodec: ... {bad_file.count - len(bad_file.first):,} more in "
                         f"{bad_file.path}\n")


def _warn_counter_rows(session: Any, table: str, what: str = "load") -> None:
    """A warning on stderr when the target ``table`` is a counter table that has rows
    already: the load (or copy) adds to them."""
    from cqlcodec.driver.load import resolve_table
    from cqlcodec.driver.scan import protect_name

    meta = resolve_table(session, table)
    if not any(str(c.cql_type) == "counter" for c in meta.columns.values()):
        return
    cql = (f"SELECT * FROM {protect_name(meta.keyspace_name)}.{protect_name(meta.name)} "
           "LIMIT 1")
    if session.execute(cql).one() is not None:
        counts = "the file's counts" if what == "load" else "the source's counts"
        sys.stderr.write(f"cqlcodec: warning: {table} is a counter table that has rows "
                         f"already: the {what} adds {counts} to them\n")
        sys.stderr.flush()


# --------------------------------------------------------------------------- count

def cmd_count(args: argparse.Namespace) -> int:
    """``count``: SELECT count(*) per split, in parallel; prints the total."""
    from cqlcodec.driver import plan_splits
    from cqlcodec.driver.estimates import RowEstimate
    from cqlcodec.driver.outage import Patience, host_watch
    from cqlcodec.driver.scan import protect_name
    from cqlcodec.driver.splits import table_ref

    _check_count_flags(args)
    cluster, session = _connect(args)
    try:
        ref = table_ref(session, args.table)
        key = ", ".join(protect_name(k) for k in ref.partition_key)
        cql = (f"SELECT count(*) FROM {protect_name(ref.keyspace)}.{protect_name(ref.name)} "
               f"WHERE token({key}) > ? AND token({key}) <= ?")
        if args.where:
            cql += f" AND {args.where} ALLOW FILTERING"
        statement = session.prepare(cql)
        statement.consistency_level = _consistency(args)
        splits = plan_splits(session, str(ref), args.splits)
        estimate = RowEstimate(sum(s.estimated_rows for s in splits),
                               bool(ref.metadata.clustering_key))
        progress = Progress("counted", "splits", len(splits), 0, _show_progress(args))
        progress.estimate = lambda: estimate.rows
        progress.status = host_watch(session).waiting_text
        lock = threading.Lock()
        total = [0]
        counts: dict[int, int] = {}
        partitions = None
        if args.by == "partition":
            from cqlcodec.cli.count_groups import PartitionCounter

            partitions = PartitionCounter(session, ref, args.top or DEFAULT_TOP,
                                          _consistency(args))

        def count_split(index: int) -> None:
            s = splits[index]
            if partitions is not None:
                n = partitions.count_split(s, _host(session, s.replicas))
            else:
                patience = Patience(session, args.retry_timeout, args.retries)
                try:
                    n = _count_range(session, statement, s.start, s.end, s.replicas,
                                     patience, 0)
                finally:
                    patience.done()
            with lock:
                total[0] += n
                counts[index] = n
                estimate.split_done(n, s.estimated_rows)
            progress.add_rows(n)
            progress.unit_done()

        failed = _run_all(count_split, list(range(len(splits))), args.concurrency, progress)
        progress.finish()
        if failed:
            index, error = failed[0]
            _refused_permission(error)
            s = splits[index]
            raise TableCommandError(f"{len(failed)} of {len(splits)} splits could not be "
                                    f"counted (first: {s}: {type(error).__name__}: {error})",
                                    exits.FAILED)
        if args.by:
            from cqlcodec.cli.count_groups import by_host, by_range, render

            groups = (partitions.largest() if partitions is not None else
                      by_host(splits, counts) if args.by == "host" else by_range(splits, counts))
            print(render(args.by, groups, ref.partition_key, args.json))
        else:
            print(total[0])
        _say(args, summary("counted", total[0], progress.elapsed, f"{len(splits)} splits"))
        return exits.OK
    finally:
        cluster.shutdown()


def _check_count_flags(args: argparse.Namespace) -> None:
    """Exit status 2 for flags that mean nothing together (before connecting)."""
    if args.json and not args.by:
        raise TableCommandError("--json is the form of --by's groups: give --by too",
                                exits.USAGE)
    if args.top is not None and args.by != "partition":
        raise TableCommandError("--top is the number of partitions of --by partition",
                                exits.USAGE)
    if args.by == "partition" and args.where:
        raise TableCommandError("--by partition counts whole partitions: no --where",
                                exits.USAGE)


def _count_range(session: Any, statement: Any, start: int, end: int,
                 replicas: tuple[str, ...], patience: Patience, depth: int) -> int:
    """count(*) of the token range (start, end]: on a replica when one is known; a
    range that times out on a live host is counted as two halves (up to 8 halvings);
    other transient failures are retried as ``patience`` allows (waiting for a host
    that is down); a permanent one (a bad query, unauthorized) fails at once."""
    from cassandra import OperationTimedOut, ReadTimeout, RequestValidationException

    host = _host(session, replicas)
    while True:
        try:
            row = session.execute(statement, (start, end), host=host).one()
            patience.progressed()
            return int(row[0])
        except RequestValidationException:
            raise
        except Exception as exc:
            timed_out = isinstance(exc, (ReadTimeout, OperationTimedOut))
            if timed_out and depth < MAX_COUNT_HALVINGS and end - start > 1 and \
                    any(h.is_up is not False for h in session.cluster.metadata.all_hosts()):
                middle = start + (end - start) // 2
                return (_count_range(session, statement, start, middle, replicas, patience,
                                     depth + 1)
                        + _count_range(session, statement, middle, end, replicas, patience,
                                       depth + 1))
            reason = patience.wait_to_retry(replicas)
            if reason is not None:
                raise TableCommandError(f"counting ({start}, {end}] gave up: {reason}, last: "
                                        f"{type(exc).__name__}: {exc}", exits.FAILED) from exc
            host = _host(session, replicas)  # a replica when one is up, else any coordinator


def _host(session: Any, replicas: tuple[str, ...]) -> Any:
    if not replicas:
        return None
    for host in session.cluster.metadata.all_hosts():
        if host.is_up is not False and str(host.address) == replicas[0]:
            return host
    return None
