"""Opening a connection of the request path: TCP (TLS as the driver sets it up:
:mod:`~cqlcodec.requests.tls`), OPTIONS, STARTUP (with the compression the cluster asks
for: :mod:`~cqlcodec.requests.compression`), the SASL exchange with the cluster's auth
provider, then ``USE`` of the session's keyspace.

Protocol v5 frames go in segments from the server's READY or AUTHENTICATE on, both ways;
on v4, request bodies are compressed from then on, answers' whenever their flag says so.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from cassandra import AuthenticationFailed
from cassandra.connection import ConnectionShutdown

from cqlcodec.requests.compression import choose
from cqlcodec.requests.connection import Connection, Frame
from cqlcodec.requests.errors import error_of
from cqlcodec.requests.frames import (
    OP_AUTH_CHALLENGE,
    OP_AUTH_RESPONSE,
    OP_AUTH_SUCCESS,
    OP_AUTHENTICATE,
    OP_ERROR,
    OP_OPTIONS,
    OP_QUERY,
    OP_READY,
    OP_RESULT,
    OP_STARTUP,
    Parameters,
    bytes_value,
    query_body,
    string_map,
)
from cqlcodec.requests.tls import handshake_error, tls_arguments
from cqlcodec.runtime.wire import read_string

_ONE = 1


def _read_bytes(body: bytes) -> bytes | None:
    n = int.from_bytes(body[:4], "big", signed=True)
    return None if n < 0 else body[4:4 + n]


def _supported(body: bytes) -> dict[str, list[str]]:
    """A ``[string multimap]``."""
    out: dict[str, list[str]] = {}
    count = int.from_bytes(body[:2], "big")
    p = 2
    end = len(body)
    for _ in range(count):
        key, p = read_string(body, p, end, "SUPPORTED key")
        n = int.from_bytes(body[p:p + 2], "big")
        p += 2
        values: list[str] = []
        for _j in range(n):
            value, p = read_string(body, p, end, "SUPPORTED value")
            values.append(value)
        out[key] = values
    return out


async def _ask(conn: Connection, opcode: int, body: bytes, timeout: float) -> Frame:
    frame = await conn.request(opcode, body, 0, timeout)
    if frame.opcode == OP_ERROR:
        raise error_of(frame, conn.version, conn.host)
    return frame


async def open_connection(loop: asyncio.AbstractEventLoop, host: Any, cluster: Any,
                          version: int, max_in_flight: int, keyspace: str | None,
                          timeout: float) -> Connection:
    """A ready connection to ``host`` (a driver ``Host``) speaking ``version``."""
    address, port = host.endpoint.resolve()
    conn = Connection(loop, version, host, max_in_flight)
    kwargs = tls_arguments(cluster, host, address)
    try:
        # the connection is an asyncio protocol by its methods (a compiled class cannot
        # derive from asyncio.Protocol)
        factory: Any = lambda: conn  # noqa: E731
        try:
            await asyncio.wait_for(loop.create_connection(factory, address, port, **kwargs),
                                   timeout)
        except ssl.SSLError as exc:
            raise handshake_error(exc, host, address, port) from exc
        await _start(conn, cluster, host, timeout)
        if keyspace:
            await use_keyspace(conn, keyspace, timeout)
    except BaseException:
        conn.close()
        raise
    return conn


async def _start(conn: Connection, cluster: Any, host: Any, timeout: float) -> None:
    supported = _supported((await _ask(conn, OP_OPTIONS, b"", timeout)).body)
    cql_versions = supported.get("CQL_VERSION") or ["3.0.0"]
    options = {"CQL_VERSION": cql_versions[0], "DRIVER_NAME": "cqlcodec requests",
               "DRIVER_VERSION": "1"}
    compression = choose(getattr(cluster, "compression", False), conn.version,
                         supported.get("COMPRESSION") or [], host)
    if compression is not None:
        options["COMPRESSION"] = compression.name
        conn.inflate = compression.inflate
    answer = await _ask(conn, OP_STARTUP, string_map(options), timeout)
    if conn.version >= 5:
        conn.start_segments(compression)
    elif compression is not None:
        conn.deflate = compression.compress  # after READY or AUTHENTICATE, as the driver
    if answer.opcode == OP_READY:
        return
    if answer.opcode != OP_AUTHENTICATE:
        raise ConnectionShutdown(f"cqlcodec: unexpected answer {answer.opcode} to STARTUP "
                                 f"from {host}")
    server_class, _p = read_string(answer.body, 0, len(answer.body), "AUTHENTICATE")
    provider = getattr(cluster, "auth_provider", None)
    if provider is None:
        raise AuthenticationFailed(
            f"Remote end requires authentication (server authenticator {server_class}); "
            "the cluster has no auth_provider")
    authenticator = provider.new_authenticator(host.endpoint.address)
    authenticator.server_authenticator_class = server_class
    token = authenticator.initial_response()
    while True:
        reply = await conn.request(OP_AUTH_RESPONSE, bytes_value(token), 0, timeout)
        if reply.opcode == OP_AUTH_SUCCESS:
            authenticator.on_authentication_success(_read_bytes(reply.body))
            return
        if reply.opcode == OP_AUTH_CHALLENGE:
            token = authenticator.evaluate_challenge(_read_bytes(reply.body))
            if token is None:
                token = b""
            continue
        if reply.opcode == OP_ERROR:
            err = error_of(reply, conn.version, conn.host)
            raise AuthenticationFailed(f"Failed to authenticate to {host}: {err}")
        raise ConnectionShutdown(f"cqlcodec: unexpected answer {reply.opcode} during "
                                 f"authentication with {host}")


async def use_keyspace(conn: Connection, keyspace: str, timeout: float) -> None:
    """``USE "keyspace"`` on the connection (at ONE)."""
    quoted = '"' + keyspace.replace('"', '""') + '"'
    params = Parameters(_ONE, None, 0, None, None, None, False)
    frame = await _ask(conn, OP_QUERY, query_body(conn.version, f"USE {quoted}", params, None),
                       timeout)
    if frame.opcode != OP_RESULT:
        raise ConnectionShutdown(f"cqlcodec: unexpected answer {frame.opcode} to USE")
    conn.keyspace = keyspace
