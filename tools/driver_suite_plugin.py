"""pytest plugin: run cassandra-driver's own test suite on cqlcodec's connection class.

Loaded with ``-p driver_suite_plugin`` (this folder on ``PYTHONPATH``) by
``tools/driver_suite.sh``. With ``CQLCODEC_DRIVER_SUITE_CLASS=cqlcodec`` it replaces, before
the driver's tests are imported, the reactor class they pick (``EVENT_LOOP_MANAGER``, libev by
default) and the driver's ``DefaultConnection`` with :func:`cqlcodec.driver.connection_class`
of that reactor, so every cluster and every connection the tests open reads through cqlcodec;
the tests themselves are not edited. The classes of the other reactors it knows (libev,
asyncore, asyncio) are replaced too, for the tests that name a reactor class themselves.
``CQLCODEC_DRIVER_SUITE_CLASS=install`` does the same and also calls
:func:`cqlcodec.driver.install` on every ``Cluster`` the tests make, as it is made: rows,
binding, row classes and skip-metadata through cqlcodec, what a user gets from ``install``.
With ``CQLCODEC_DRIVER_SUITE_CLASS=driver`` it changes nothing and only reports. Either way
the pytest header names the class in use and the cqlcodec build, and the summary counts the
connections the cqlcodec classes opened (0 means the switch did not take).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import pytest

REACTORS = {
    "libev": ("cassandra.io.libevreactor", "LibevConnection"),
    "asyncore": ("cassandra.io.asyncorereactor", "AsyncoreConnection"),
    "asyncio": ("cassandra.io.asyncioreactor", "AsyncioConnection"),
}
# The driver's tests import ccm's DSE and HCD cluster classes by their old module names;
# the public ccm (apache/cassandra-ccm) has them in subpackages.
CCM_MODULES = {"ccmlib.dse_cluster": "ccmlib.dse.dse_cluster",
               "ccmlib.hcd_cluster": "ccmlib.hcd.hcd_cluster"}
MODE = os.environ.get("CQLCODEC_DRIVER_SUITE_CLASS", "driver")
opened = [0]
installed = [0]  # clusters install() was called on (CQLCODEC_DRIVER_SUITE_CLASS=install)
# frames handed on by the cqlcodec classes, and those with bodies of fill_bodies_from or more
frames = [0, 0]


def _cqlcodec_class(module_name: str, class_name: str) -> type[Any]:
    from cqlcodec.driver import connection_class

    module = importlib.import_module(module_name)
    made = connection_class(base=getattr(module, class_name))
    original_init = made.__init__

    def counting_init(self: Any, *args: Any, **kwargs: Any) -> None:
        opened[0] += 1
        original_init(self, *args, **kwargs)

    made.__init__ = counting_init
    fill_from = os.environ.get("CQLCODEC_DRIVER_SUITE_FILL_FROM")
    if fill_from:  # bodies this large and larger filled in place (1 MiB unless told)
        made.fill_bodies_from = int(fill_from)
    original_process_msg = made.process_msg

    def counting_process_msg(self: Any, header: Any, body: bytes) -> Any:
        frames[0] += 1
        if len(body) >= self.fill_bodies_from:
            frames[1] += 1
        return original_process_msg(self, header, body)

    made.process_msg = counting_process_msg
    setattr(module, class_name, made)
    return made


def _switch() -> type[Any]:
    import cassandra.cluster

    loop = os.environ.get("EVENT_LOOP_MANAGER", "libev")
    if loop not in REACTORS:
        raise pytest.UsageError(f"EVENT_LOOP_MANAGER={loop}: the plugin knows {sorted(REACTORS)}")
    made = {name: _cqlcodec_class(*where) for name, where in REACTORS.items()}
    cassandra.cluster.DefaultConnection = made[loop]
    cassandra.cluster.Cluster.connection_class = made[loop]
    return made[loop]


def _install_on_every_cluster() -> None:
    """Call ``install()`` on every ``Cluster``, at the end of its ``__init__`` (before any
    ``connect``), so every session of every test decodes and binds through cqlcodec."""
    import cassandra.cluster

    from cqlcodec.driver import install

    cluster_class: Any = cassandra.cluster.Cluster
    original_init = cluster_class.__init__

    def init_and_install(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        install(self)
        installed[0] += 1

    cluster_class.__init__ = init_and_install


def _alias_ccm_modules() -> None:
    for old, new in CCM_MODULES.items():
        try:
            importlib.import_module(old)
        except ImportError:
            try:
                sys.modules[old] = importlib.import_module(new)
            except ImportError:  # scylla-ccm has neither; scylla-driver's tests need neither
                pass


def _external_node() -> None:
    """Point a harness without ``USE_CASS_EXTERNAL`` (scylla-driver's) at the running node.

    scylla-driver's ``tests.integration.use_cluster`` always creates a ccm cluster. Replaced,
    it does what cassandra-driver's does with ``USE_CASS_EXTERNAL``: no ccm, only the test
    keyspaces on the node that is already running. Tests that need ccm's nodes (stopping one,
    three nodes, other settings) fail or skip the same way with either class.
    """
    harness: Any = importlib.import_module("tests.integration")  # the driver's tests, not ours
    if hasattr(harness, "USE_CASS_EXTERNAL"):
        return

    def use_external_cluster(cluster_name: str, nodes: Any, ipformat: Any = None,
                             start: bool = True, workloads: Any = None,
                             set_keyspace: bool = True, **ignored: Any) -> None:
        if set_keyspace and start:
            harness.setup_keyspace(ipformat=ipformat)

    harness.use_cluster = use_external_cluster


_alias_ccm_modules()
if MODE in ("cqlcodec", "install"):
    SWITCHED: type[Any] | None = _switch()
    if MODE == "install":
        _install_on_every_cluster()
elif MODE == "driver":
    SWITCHED = None
else:
    raise RuntimeError("CQLCODEC_DRIVER_SUITE_CLASS must be cqlcodec, install or driver,"
                       f" not {MODE!r}")
if os.environ.get("USE_CASS_EXTERNAL"):
    _external_node()


def pytest_sessionstart() -> None:
    """With ``CQLCODEC_DRIVER_SUITE_RESET=1``, drop every keyspace the tests made before.

    Some of the driver's tests leave their tables behind (ccm gives them a new cluster per
    run), and fail on the next run against the same server; each run starts from a server
    without user keyspaces instead.
    """
    if os.environ.get("CQLCODEC_DRIVER_SUITE_RESET") != "1":
        return
    from cassandra.cluster import Cluster

    cluster = Cluster([os.environ.get("CLUSTER_IP", "127.0.0.1")],
                      protocol_version=int(os.environ.get("PROTOCOL_VERSION", "4")))
    try:
        session = cluster.connect()
        rows = session.execute("SELECT keyspace_name FROM system_schema.keyspaces")
        for row in rows:
            if not row.keyspace_name.startswith("system"):
                session.execute(f'DROP KEYSPACE "{row.keyspace_name}"', timeout=120)
    finally:
        cluster.shutdown()


def pytest_report_header() -> list[str]:
    """Name the connection class and, when it is cqlcodec's, the build."""
    import cassandra

    lines = [f"driver {cassandra.__version__} from {cassandra.__file__}"]
    if SWITCHED is None:
        lines.append("connection class: the driver's own")
    else:
        import cqlcodec
        from cqlcodec.runtime.build import COMPILED

        build = "compiled" if COMPILED else "interpreted"
        lines.append(f"connection class: {SWITCHED.__name__} (cqlcodec {build}, {cqlcodec.__file__})")
        if MODE == "install":
            lines.append("cqlcodec.driver.install() called on every Cluster")
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many connections and frames the cqlcodec classes read, and how many were filled."""
    if SWITCHED is not None:
        from cqlcodec.connection.large_bodies import fills_in_place

        terminalreporter.write_line(
            f"cqlcodec connection class: {opened[0]} connections opened, {frames[0]} frames"
            f" read, {frames[1]} of them with bodies of {SWITCHED.fill_bodies_from} bytes or"
            f" more (filled in place as they arrived: {fills_in_place()})")
        if MODE == "install":
            terminalreporter.write_line(f"cqlcodec.driver.install(): {installed[0]} clusters")
