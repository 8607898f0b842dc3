"""The request path's transport against the real server, v4 and v5: TLS with the
cluster's ``ssl_context`` (and a CA that does not trust the server: a clear error) and
LZ4 compression when the cluster asks for it, each giving the rows the driver's session
gives over the same transport; speculative executions through the fault proxy."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable, Session
from cassandra.policies import ConstantSpeculativeExecutionPolicy, RoundRobinPolicy

from cqlcodec import aio
from cqlcodec.requests import FastSession
from cqlcodec.requests.tls import TLSHandshakeError

from .compare import assert_same_rows
from .conftest import new_cluster
from .data import KEYSPACE, PAGED_ROWS_PER_PARTITION
from .test_requests import SELECT_EVERYTHING, with_fast

pytestmark = pytest.mark.integration

# over 128 KiB and very compressible: one v5 frame over several compressed segments
BIG_TEXT = "cqlcodec requests over lz4 " * 12000


def _same_rows_as_the_session(session: Session, check: Callable[[FastSession], None]) -> None:
    """Prepared and simple statements' rows on the request path equal the session's."""
    every = session.prepare(f"{SELECT_EVERYTHING} WHERE k = ?")
    paged = session.prepare("SELECT * FROM paged WHERE p = ?")
    keys = [row.k for row in session.execute("SELECT k FROM everything")]
    want = [list(session.execute(every, [k])) for k in keys]
    want_all = sorted(session.execute(SELECT_EVERYTHING))

    async def main(fast: FastSession) -> tuple[list[list[Any]], list[Any], int]:
        got = [r.rows for r in await asyncio.gather(*(fast.execute(every, [k]) for k in keys))]
        every_row = (await fast.execute(SELECT_EVERYTHING)).rows
        check(fast)
        return got, every_row, len(await fast.execute(paged, [0]))
    got, got_all, n = with_fast(session, main)
    for k, w, g in zip(keys, want, got):
        assert_same_rows(w, g, f"key {k}")
    assert_same_rows(want_all, sorted(got_all), "every row")
    assert n == PAGED_ROWS_PER_PARTITION


def _connections(fast: FastSession) -> list[Any]:
    conns = list(fast._pool.conns.values())
    assert conns
    return conns


@pytest.mark.filterwarnings("ignore:Using ssl_options without ssl_context:DeprecationWarning")
@pytest.mark.parametrize("protocol", [4, 5])
def test_tls_rows_equal_the_sessions(protocol: int, schema: None, server_pem: str,
                                     server_tls: ssl.SSLContext, tmp_path: Path) -> None:
    """v5: the cluster's ``ssl_context``; v4: the older ``ssl_options`` alone (a CA file,
    the server's name checked), which the driver makes a context of."""
    if protocol >= 5:
        cluster = new_cluster(protocol, ssl_context=server_tls, compression=False)
    else:
        ca = tmp_path / "ca.pem"
        ca.write_text(server_pem)
        cluster = new_cluster(protocol, ssl_options={"ca_certs": str(ca), "check_hostname": True},
                              compression=False)
    session = cluster.connect(KEYSPACE)

    def over_tls(fast: FastSession) -> None:
        for conn in _connections(fast):
            assert conn.transport.get_extra_info("ssl_object") is not None
    try:
        _same_rows_as_the_session(session, over_tls)
    finally:
        cluster.shutdown()


def test_a_ca_that_does_not_trust_the_server_is_a_clear_error(schema: None,
                                                               server_tls: ssl.SSLContext) -> None:
    cluster = new_cluster(5, ssl_context=server_tls, compression=False)
    session = cluster.connect(KEYSPACE)
    try:
        setattr(cluster, "ssl_context", ssl.create_default_context())  # noqa: B010 (system CAs)
        with pytest.raises(NoHostAvailable) as caught:
            asyncio.run(aio.connect(session))
    finally:
        cluster.shutdown()
    errors = list(caught.value.errors.values())
    assert errors and all(isinstance(e, TLSHandshakeError) for e in errors), errors
    assert isinstance(errors[0], OSError)
    assert "TLS handshake" in str(errors[0]) and "certificate verify failed" in str(errors[0])
    assert "load_verify_locations" in str(errors[0])
    assert isinstance(errors[0].__cause__, ssl.SSLCertVerificationError)


class _Counted:
    """A compress or inflate function that counts its calls and bytes."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.calls = 0
        self.bytes_in = 0
        self.bytes_out = 0

    def __call__(self, *args: Any) -> bytes:
        out: bytes = self.function(*args)
        self.calls += 1
        self.bytes_in += len(args[0])
        self.bytes_out += len(out)
        return out


@pytest.mark.parametrize("protocol", [4, 5])
def test_lz4_rows_and_writes_equal_the_sessions(protocol: int, schema: None) -> None:
    pytest.importorskip("lz4")
    cluster = new_cluster(protocol, compression="lz4")
    session = cluster.connect(KEYSPACE)
    counted: dict[str, _Counted] = {}

    def compressed(fast: FastSession) -> None:
        (conn,) = _connections(fast)
        if protocol >= 5:
            assert conn.segment_compress is not None and conn.reader.decompress is not None
            counted["out"] = conn.segment_compress = _Counted(conn.segment_compress)
            counted["in"] = conn.reader.decompress = _Counted(conn.reader.decompress)
        else:
            assert conn.deflate is not None and conn.inflate is not None
            counted["out"] = conn.deflate = _Counted(conn.deflate)
            counted["in"] = conn.inflate = _Counted(conn.inflate)
    try:
        _same_rows_as_the_session(session, compressed)
        session.execute("CREATE TABLE IF NOT EXISTS request_lz4 (k int PRIMARY KEY, v text)")
        write = session.prepare("INSERT INTO request_lz4 (k, v) VALUES (?, ?)")
        read = session.prepare("SELECT k, v FROM request_lz4 WHERE k = ?")

        async def main(fast: FastSession) -> list[Any]:
            compressed(fast)
            await fast.execute(write, [protocol, BIG_TEXT + str(protocol)])
            return (await fast.execute(read, [protocol])).rows
        got = with_fast(session, main)
        assert_same_rows(list(session.execute(read, [protocol])), got, "the big text")
        assert got[0].v == BIG_TEXT + str(protocol)
    finally:
        cluster.shutdown()
    # the big text went out compressed, much smaller, and came back compressed
    assert counted["out"].calls >= 1 and counted["out"].bytes_out * 10 < counted["out"].bytes_in
    assert counted["in"].calls >= 1


class _EachHostTwice(RoundRobinPolicy):
    """Round robin, each host twice in a plan: on the one test node, a speculative
    execution (which goes to the next host of the plan, as the driver's does) has a host
    to go to."""

    def make_query_plan(self, working_keyspace: Any = None, query: Any = None) -> Any:
        for host in super().make_query_plan(working_keyspace, query):
            yield host
            yield host


def test_speculative_executions_first_answer_wins_and_nothing_leaks(schema: None) -> None:
    """With every answer held back 0.3 s by the fault proxy, an idempotent read sends a
    second execution after 50 ms (the policy's delay; its third would find no host left
    in the plan); the first answer is the result, the second's stream id is freed when
    it arrives. A statement not marked idempotent is sent once."""
    from .conftest import _host_port
    from .faultproxy import FaultProxy

    spec = ConstantSpeculativeExecutionPolicy(delay=0.05, max_attempts=3)
    profile = ExecutionProfile(load_balancing_policy=_EachHostTwice(), request_timeout=20,
                               speculative_execution_policy=spec)
    with FaultProxy(_host_port(), seed=43) as proxy:
        cluster = Cluster(["127.0.0.1"], port=proxy.port, protocol_version=5,
                          execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                          connect_timeout=20, control_connection_timeout=20)
        session = cluster.connect(KEYSPACE)
        try:
            ps = session.prepare("SELECT * FROM paged WHERE p = ?")
            want = list(session.execute(ps, [1]))
            ps.is_idempotent = True
            once = session.prepare("SELECT c FROM paged WHERE p = ? LIMIT 1")

            async def main(fast: FastSession) -> tuple[list[Any], int, int, int]:
                (conn,) = _connections(fast)
                proxy.latency = 0.3
                sent = conn.sent
                rows = (await fast.execute(ps, [1])).rows
                speculative = fast.speculative_executions
                sent_twice = conn.sent - sent
                for _ in range(500):  # the late answer arrives and frees its stream id
                    if fast.leftovers() == (0, 0, 0):
                        break
                    await asyncio.sleep(0.01)
                assert fast.leftovers() == (0, 0, 0)
                sent = conn.sent
                assert len((await fast.execute(once, [1])).rows) == 1
                return rows, speculative, sent_twice, conn.sent - sent
            rows, speculative, sent_twice, sent_once = with_fast(session, main)
        finally:
            proxy.latency = 0.0
            cluster.shutdown()
    assert_same_rows(want, rows, "speculative")
    assert speculative == 1 and sent_twice == 2 and sent_once == 1


@pytest.mark.parametrize("protocol,tls", [(4, False), (5, True)], ids=["v4-plain", "v5-tls-lz4"])
def test_on_uvloop(protocol: int, tls: bool, schema: None, server_tls: ssl.SSLContext) -> None:
    """The request path on uvloop's loop (where installed): rows equal to the session's,
    200 requests in flight on a connection allowing 64, then 300 cancelled leaving
    nothing behind; v5 over TLS with LZ4 (uvloop's own TLS transport)."""
    uvloop = pytest.importorskip("uvloop")
    options: dict[str, Any] = {"ssl_context": server_tls, "compression": "lz4"} if tls else \
        {"compression": False}
    if tls:
        pytest.importorskip("lz4")
    cluster = new_cluster(protocol, **options)
    session = cluster.connect(KEYSPACE)
    try:
        every = session.prepare(f"{SELECT_EVERYTHING} WHERE k = ?")
        paged = session.prepare("SELECT * FROM paged WHERE p = ?")
        keys = [row.k for row in session.execute("SELECT k FROM everything")]
        want = {k: list(session.execute(every, [k])) for k in keys}

        async def main() -> dict[int, list[Any]]:
            loop = asyncio.get_running_loop()
            assert type(loop).__module__.startswith("uvloop")
            async with await aio.connect(session, max_in_flight=64) as fast:
                conn = _connections(fast)[0]
                assert (conn.transport.get_extra_info("ssl_object") is not None) == tls
                got = {k: (await fast.execute(every, [k])).rows for k in keys}
                many = await asyncio.gather(*(fast.execute(paged, [i % 3]) for i in range(200)))
                assert [len(r) for r in many] == [PAGED_ROWS_PER_PARTITION] * 200
                tasks = [asyncio.ensure_future(fast.execute(paged, [i % 3])) for i in range(300)]
                await asyncio.sleep(0)
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                for _ in range(1000):
                    if fast.leftovers() == (0, 0, 0):
                        break
                    await asyncio.sleep(0.01)
                assert fast.leftovers() == (0, 0, 0)
                return got
        got = uvloop.run(main())
    finally:
        cluster.shutdown()
    for k in keys:
        assert_same_rows(want[k], got[k], f"uvloop, key {k}")
