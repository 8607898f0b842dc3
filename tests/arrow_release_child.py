"""One scenario of tests/test_columnar_release.py, in its own process (see there).

``python arrow_release_child.py MODE SCENARIO``: MODE ``pyarrow`` exports through
pyarrow-owned structs and reads with pyarrow; MODE ``ctypes`` blocks pyarrow before
cqlcodec is imported (the ctypes structs) and reads with polars. The scenario raises a
``UserError`` while a reader holds arrays exported by cqlcodec; the child prints
``caught UserError`` when that exception reached its handler, ``lost UserError`` when a
``SystemError`` came instead, and exits 0 unless the process crashed.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

MODE, SCENARIO = sys.argv[1], sys.argv[2]
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
    if MODE == "pyarrow":
        import pyarrow

        return pyarrow.record_batch  # type: ignore[no-any-return]
    return polars.DataFrame


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
    read = reader()
    errors: list[UserError] = []

    def work() -> None:
        held = read(cqlcodec.decode_columns(BODY, 4))
        raise UserError(f"in a thread, holding {len(held)} rows")

    def run() -> None:
        try:
            work()
        except UserError as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    held = [read(cqlcodec.decode_columns(BODY, 4)) for _ in range(3)]
    thread = threading.Thread(target=held.clear)  # the last references go in that thread
    thread.start()
    thread.join()
    raise errors[0]


class _Interrupting:
    """A meta path finder: importing one module name raises KeyboardInterrupt."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == "cqlcodec_test_interrupting_import":
            raise KeyboardInterrupt
        return None


def keyboard_interrupt() -> None:
    read = reader()
    sys.meta_path.insert(0, _Interrupting())

    def importing() -> None:
        held = [read(b) for b in [cqlcodec.decode_columns(BODY, 4)]]
        import cqlcodec_test_interrupting_import  # type: ignore[import-not-found]  # noqa: F401
        print(len(held))

    try:
        importing()
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


SCENARIOS: dict[str, Callable[[], None]] = {
    "comprehension": comprehension, "polars_from_arrow": polars_from_arrow,
    "duckdb": duckdb_relations, "thread": other_thread,
    "keyboard_interrupt": keyboard_interrupt, "alive_at_exit": alive_at_exit,
}

if __name__ == "__main__":
    try:
        SCENARIOS[SCENARIO]()
    except UserError:
        print("caught UserError", flush=True)
    except SystemError as exc:
        print(f"lost UserError: {exc}", flush=True)
