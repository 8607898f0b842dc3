"""The scenarios of tests/test_columnar_release.py, in a process of their own (see there).

``python arrow_release_child.py MODE SCENARIO...``: MODE ``pyarrow`` exports through
pyarrow-owned structs and reads with pyarrow; MODE ``ctypes`` blocks pyarrow before
cqlcodec is imported (the ctypes structs) and reads with polars. Each scenario raises
a ``UserError`` while a reader holds arrays exported by cqlcodec. Before a scenario
the child writes ``== SCENARIO`` to stdout and stderr (so that a crash, and anything
printed, names its scenario); after it, ``caught UserError`` when that exception
reached its handler or ``lost UserError`` when a ``SystemError`` came instead. It
exits 0 unless the process crashed.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

MODE, NAMES = sys.argv[1], sys.argv[2:]
if MODE == "ctypes":
    sys.modules["pyarrow"] = None  # type: ignore[assignment]

import polars  # noqa: E402

import cqlcodec  # noqa: E402
from cqlcodec import bench_workloads  # noqa: E402

BODY = bench_workloads.rows_case("c").unprepared


class UserError(Exception):
    pass


def pages() -> Iterator[cqlcodec.ColumnBatch]:
    yield cqlcodec.decode_columns(BODY, 4)
    yield cqlcodec.decode_columns(BODY, 4)
    raise UserError("the next page failed")


def reader() -> Callable[[Any], Any]:
    read: Callable[[Any], Any]  # typed here: polars and pyarrow may be untyped where mypy runs
    if MODE == "pyarrow":
        import pyarrow

        read = pyarrow.record_batch
    else:
        read = polars.DataFrame
    return read


def comprehension() -> None:
    read = reader()
    records = [read(b) for b in pages()]
    print(len(records))


def polars_from_arrow() -> None:
    import pyarrow

    frames = [polars.from_arrow(pyarrow.record_batch(b)) for b in pages()]
    print(len(frames))


def duckdb_relations() -> None:
    import duckdb

    con = duckdb.connect()
    relations = []
    for b in pages():
        relation = con.from_arrow(b)
        relation.fetchall()
        relations.append(relation)


def other_thread() -> None:
    """The comprehension in another thread; then arrays whose last references are
    dropped in another thread (no exception)."""
    read = reader()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            print(len([read(b) for b in pages()]))
        except (UserError, SystemError) as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    held = [read(cqlcodec.decode_columns(BODY, 4)) for _ in range(3)]
    thread = threading.Thread(target=held.clear)  # the last references go in that thread
    thread.start()
    thread.join()
    raise outcome[0]


class _Interrupting:
    """A meta path finder: importing one module name raises KeyboardInterrupt."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == "cqlcodec_test_interrupting_import":
            raise KeyboardInterrupt
        return None


def pages_then_an_interrupted_import() -> Iterator[cqlcodec.ColumnBatch]:
    yield cqlcodec.decode_columns(BODY, 4)
    import cqlcodec_test_interrupting_import  # type: ignore[import-not-found]  # noqa: F401


def keyboard_interrupt() -> None:
    """KeyboardInterrupt (from an import hook) while a comprehension holds arrays."""
    read = reader()
    sys.meta_path.insert(0, _Interrupting())
    try:
        print(len([read(b) for b in pages_then_an_interrupted_import()]))
    except KeyboardInterrupt:
        raise UserError("interrupted during an import") from None


KEPT: list[object] = []


def alive_at_exit() -> None:
    """Arrays still held (by a global and by a reference cycle) when the interpreter
    exits; the user's exception is raised and caught first."""
    read = reader()
    KEPT.append(read(cqlcodec.decode_columns(BODY, 4)))
    cycle: dict[str, object] = {"array": read(cqlcodec.decode_columns(BODY, 4))}
    cycle["self"] = cycle
    raise UserError("then exit with exported arrays alive")


def held_by_a_library_at_exit() -> None:
    """Arrays still held, when the interpreter exits, by a module imported before cqlcodec
    (as a library's long-lived object holds them: distributed's scheduler keeps the tasks
    it sent, with their arguments). Such a module is torn down after cqlcodec's, so the
    reader releases the arrays after cqlcodec's modules are gone."""
    read = reader()
    threading.cqlcodec_test_kept = [read(cqlcodec.decode_columns(BODY, 4))]  # type: ignore[attr-defined]
    raise UserError("then exit with exported arrays held by another module")


SCENARIOS: dict[str, Callable[[], None]] = {
    "comprehension": comprehension, "polars_from_arrow": polars_from_arrow,
    "duckdb": duckdb_relations, "thread": other_thread,
    "keyboard_interrupt": keyboard_interrupt, "alive_at_exit": alive_at_exit,
    "held_by_a_library_at_exit": held_by_a_library_at_exit,
}

if __name__ == "__main__":
    for name in NAMES:
        print(f"== {name}", flush=True)
        print(f"== {name}", file=sys.stderr, flush=True)
        try:
            SCENARIOS[name]()
        except UserError:
            print("caught UserError", flush=True)
        except SystemError as exc:
            print(f"lost UserError: {exc}", flush=True)
