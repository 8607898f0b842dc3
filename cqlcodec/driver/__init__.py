"""cqlcodec inside cassandra-driver and scylla-driver: one call switches it on.

::

    import cqlcodec.driver
    cluster = Cluster(["127.0.0.1"])
    cqlcodec.driver.install(cluster)          # or install(session)
    session = cluster.connect("ks")

After :func:`install`, for every session of that cluster (or that one session):

* the rows of RESULT messages are decoded by cqlcodec where they lie in the
  driver's message (no copy);
  for prepared statements the driver's result metadata is converted once to a
  :class:`cqlcodec.Prepared` whose parse description is cached and reused;
* the cluster's connections (when ``install`` runs before ``connect``) read 64 KiB
  at a time and cut frames and protocol v5 segments with cqlcodec's reassembler
  (:func:`connection_class`; ``connection=False`` opts out);
* prepared statements bind their values with :meth:`cqlcodec.Prepared.bind`
  (``prepared.bind(values)``, ``session.execute(prepared, values)``,
  ``BatchStatement.add(prepared, values)``), whether they were prepared before or
  after ``install``.

By default applications see exactly the values the driver itself returns: its
``SortedSet`` for sets, ``OrderedMapSerializedKey`` for maps, ``util.Date``,
``util.Time`` and ``util.Duration``, its UDT named tuples or the classes
registered with ``Cluster.register_user_type``. Binding accepts everything the
driver accepts for those types (its value classes, ``UNSET_VALUE``, ints as raw
``date`` values) as well as cqlcodec's values. ``plain_values=True`` returns
cqlcodec's plain values instead (``set``, ``dict``, ``datetime.date``,
:class:`cqlcodec.Time`, ...), which skips the conversion; ``numpy_vectors=True``
returns numeric vectors as numpy arrays (numpy must be installed).

Supported drivers: cassandra-driver 3.29 and 3.30, scylla-driver 3.29, with or
without their Cython extensions. Any other version is refused with
:class:`UnsupportedDriverError`. ``BoundStatement`` objects built by hand keep the
driver's own binding.

Whatever cqlcodec cannot handle goes the driver's own way, exactly as without
``install``, and is logged once per reason (logger ``cqlcodec.driver``): a protocol
version other than 3, 4 and 5 (v6 beta), a type the driver decodes with a class of
its own that cqlcodec does not know (a custom class, ``DateRangeType``, the geometry
types ...), and result rows with a column type whose ``support_empty_values``
switch is on. Values cqlcodec refuses to bind are handed to the driver's own
``bind``, so what the driver accepts is accepted and what it refuses fails with
the driver's exception. A RESULT whose rows cqlcodec refuses (malformed to it, or
beyond one of its limits) is read once more by the driver's own code, which returns
its values or raises its own error, exactly as without ``install``; the first
fallback of each reason is logged. The deliberate differences are listed in
:func:`install` and in README.md ("Differences from the driver").
"""

from __future__ import annotations

from cqlcodec.connection.driver_class import connection_class
from cqlcodec.driver.columns import (
    ColumnPages,
    InsertError,
    InsertFailure,
    InsertResult,
    ResultConsumedError,
    execute_columns,
    insert_columns,
)
from cqlcodec.driver.connect import Connect, ConnectError, Tls, close_sessions, session_for
from cqlcodec.driver.copy import CopyError, CopyProgress, CopyResult, copy_table
from cqlcodec.driver.diff import Difference, DiffError, DiffProgress, TableDiff, diff_tables
from cqlcodec.driver.installer import (
    SUPPORTED_DRIVERS,
    CqlcodecBoundStatement,
    CqlcodecPreparedStatement,
    DriverDecodeError,
    Options,
    UnsupportedDriverError,
    cql_type_of,
    driver_name,
    driver_version,
    input_adapter,
    install,
    installed_options,
    value_converter,
)
from cqlcodec.driver.load import LoadProgress, load_table
from cqlcodec.driver.scan import (
    ScanError,
    ScanProgress,
    TableScan,
    read_split,
    scan_table,
    table_schema_batch,
)
from cqlcodec.driver.sources import LoadCancelled, LoadError, TooManyBadRows
from cqlcodec.driver.splits import SplitPlanError, TokenSplit, plan_splits

__all__ = [
    "SUPPORTED_DRIVERS", "ColumnPages", "connection_class", "Connect", "ConnectError", "Tls", "close_sessions",
    "session_for", "CqlcodecBoundStatement", "CqlcodecPreparedStatement",
    "DriverDecodeError", "InsertError", "InsertFailure", "InsertResult", "Options", "ResultConsumedError",
    "UnsupportedDriverError", "cql_type_of", "driver_name", "driver_version", "execute_columns",
    "input_adapter", "insert_columns", "install", "installed_options", "value_converter",
    # whole tables (driver/splits.py, driver/scan.py)
    "ScanError", "ScanProgress", "SplitPlanError", "TableScan", "TokenSplit", "plan_splits",
    "read_split", "scan_table", "table_schema_batch",
    # bulk loads (driver/load.py, driver/sources.py)
    "LoadCancelled", "LoadError", "LoadProgress", "TooManyBadRows", "load_table",
    # table to table (driver/copy.py)
    "CopyError", "CopyProgress", "CopyResult", "copy_table",
    # two tables compared (driver/diff.py)
    "DiffError", "DiffProgress", "Difference", "TableDiff", "diff_tables",
]
