"""TLS for the request path's connections, set up as the driver sets up its own.

The TLS context is the cluster's ``ssl_context``; a cluster with only the older
``ssl_options`` gets the context the driver builds from them (its own
``_build_ssl_context_from_options``: ``ca_certs``, ``certfile``/``keyfile``,
``cert_reqs``, ``check_hostname``, ``ssl_version``, ``ciphers``). A host's endpoint may add
options of its own (``server_hostname``, for SNI endpoints). The server's name is
checked when the context says so (``check_hostname``), against the endpoint's
``server_hostname`` or else the address connected to, as the driver does.
"""

from __future__ import annotations

import ssl
from typing import Any

from cassandra.connection import Connection as DriverConnection
from mypy_extensions import mypyc_attr

from cqlcodec.errors import CodecError


@mypyc_attr(native_class=False)  # compiled code cannot subclass OSError natively
class TLSHandshakeError(CodecError, ConnectionError):
    """The TLS handshake with a host failed (its certificate not trusted by the
    cluster's ``ssl_context``, a name that does not match, no TLS on its port, ...).
    An ``OSError``, as the driver's own failed handshake is; its cause is the ``ssl``
    module's error."""


class _Options:
    """What the driver's ``_build_ssl_context_from_options`` reads of a connection."""

    def __init__(self, ssl_options: dict[str, Any]) -> None:
        self.ssl_options = ssl_options


def _options(cluster: Any, endpoint: Any) -> dict[str, Any]:
    """The TLS options of a connection to ``endpoint``, merged as the driver merges them."""
    mine = getattr(cluster, "ssl_options", None)
    theirs = getattr(endpoint, "ssl_options", None)
    if mine:
        merged = dict(mine)
        merged.update(theirs or {})
        return merged
    return dict(theirs) if theirs else {}


def tls_arguments(cluster: Any, host: Any, address: str) -> dict[str, Any]:
    """``ssl`` and ``server_hostname`` for ``loop.create_connection`` to ``host`` at
    ``address`` (empty: a plain connection)."""
    options = _options(cluster, host.endpoint)
    context: Any = getattr(cluster, "ssl_context", None)
    if context is None and options:
        build: Any = getattr(DriverConnection, "_build_ssl_context_from_options")  # noqa: B009
        context = build(_Options(options))
    if context is None:
        return {}
    name = options.get("server_hostname")
    if name is None and context.check_hostname:
        name = address
    return {"ssl": context, "server_hostname": name}


def handshake_error(exc: ssl.SSLError, host: Any, address: str, port: int) -> TLSHandshakeError:
    """A :class:`TLSHandshakeError` for the ``ssl`` module's ``exc``."""
    why = str(exc)
    if isinstance(exc, ssl.SSLCertVerificationError):
        why = (f"certificate verify failed: {exc.verify_message} (the server's certificate "
               "is checked against the CA certificates of Cluster.ssl_context: load the CA "
               "that signed it with load_verify_locations)")
    where = f"{address}:{port}"
    named = str(host)
    if named != where:
        where = f"{named} ({where})"
    err = TLSHandshakeError(f"cqlcodec: the TLS handshake with {where} failed: {why}")
    err.__cause__ = exc
    return err
