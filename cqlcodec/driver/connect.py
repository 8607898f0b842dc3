"""How a worker process reaches the cluster: a picklable connect spec and one cached
session per spec and process.

A distributed engine ships its tasks to other processes, so the tasks cannot carry an
open driver session. They carry a :class:`Connect` instead (or a plain mapping of
``cassandra.cluster.Cluster`` keyword arguments, which :meth:`Connect.of` turns into
one), and :func:`session_for` opens the session on first use in each process, keeps
it for every later task with the same spec, and closes it when the process exits::

    spec = Connect(["10.0.0.1", "10.0.0.2"], 9042, username="reader", password=secret,
                   local_dc="dc1", protocol_version=5)
    session = session_for(spec)            # opened once per process, then reused

The password never appears in ``repr``/``str`` of a spec, so task names, logs and the
engines' dashboards that show a task's arguments do not show it.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cassandra.cluster import Cluster, Session

from cqlcodec.connection.driver_class import ON_BY_DEFAULT, connection_class
from cqlcodec.errors import CodecError

__all__ = ["Connect", "ConnectError", "Tls", "close_sessions", "open_session_count", "session_for"]


class ConnectError(CodecError):
    """A connect spec is malformed, or the cluster it describes cannot be reached."""


@dataclass(frozen=True)
class Tls:
    """TLS settings, applied as an ``ssl.SSLContext`` built in each worker process (a
    context itself does not pickle). ``cafile`` verifies the servers; ``certfile`` and
    ``keyfile`` give a client certificate; ``check_hostname`` checks the servers' names."""

    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    check_hostname: bool = False

    def context(self) -> Any:
        """A client ``ssl.SSLContext`` with these settings."""
        import ssl

        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.cafile)
        ctx.check_hostname = self.check_hostname
        if self.cafile is None:
            ctx.verify_mode = ssl.CERT_NONE
        if self.certfile is not None:
            ctx.load_cert_chain(self.certfile, self.keyfile)
        return ctx


_HIDDEN: Final = "***"


class Connect:
    """A picklable description of how to connect to a cluster; carries no connection.

    ``contact_points`` and ``port`` as for ``Cluster``; ``username`` / ``password``
    become a ``PlainTextAuthProvider``; ``tls`` a :class:`Tls`; ``local_dc`` makes the
    load balancing token-aware within that data centre (``DCAwareRoundRobinPolicy``);
    ``keyspace`` is the session's keyspace. Any other keyword is passed to
    ``cassandra.cluster.Cluster`` as is (``protocol_version=5``, ``connect_timeout=20``,
    ``compression=...``); such values must pickle. Without a ``connection_class``
    keyword the cluster reads through cqlcodec's connection class
    (:func:`cqlcodec.driver.connection_class`); give one
    (``connection_class=cassandra.cluster.Cluster.connection_class`` for the driver's
    own) to choose.

    Equal specs share one session per process (:func:`session_for`). ``repr``/``str``
    name the settings but never the password nor the other keywords' values.
    """

    __slots__ = ("contact_points", "port", "username", "_password", "tls", "local_dc",
                 "keyspace", "cluster_options")

    def __init__(self, contact_points: Sequence[str] | str = ("127.0.0.1",), port: int = 9042, *,
                 username: str | None = None, password: str | None = None,
                 tls: Tls | None = None, local_dc: str | None = None,
                 keyspace: str | None = None, **cluster_options: Any) -> None:
        if isinstance(contact_points, str):
            contact_points = [contact_points]
        points = tuple(str(p) for p in contact_points)
        if not points:
            raise ConnectError("a connect spec needs at least one contact point")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ConnectError(f"port must be an int in 1..65535, got {port!r}")
        if (username is None) != (password is None):
            raise ConnectError("give both username and password, or neither")
        for reserved in ("auth_provider", "ssl_context") if username or tls else ():
            if reserved in cluster_options:
                raise ConnectError(f"{reserved}= conflicts with username/password or tls")
        self.contact_points: tuple[str, ...] = points
        self.port = port
        self.username = username
        self._password = password
        self.tls = tls
        self.local_dc = local_dc
        self.keyspace = keyspace
        self.cluster_options: dict[str, Any] = dict(cluster_options)

    @classmethod
    def of(cls, spec: Connect | Mapping[str, Any]) -> Connect:
        """``spec`` itself if it is a :class:`Connect`; a mapping of ``Cluster`` keyword
        arguments (plus, optionally, this class's own keywords) made into one."""
        if isinstance(spec, Connect):
            return spec
        if isinstance(spec, Mapping):
            options = dict(spec)
            for name in options:
                if not isinstance(name, str):
                    raise ConnectError(f"connect mapping keys must be str, got {name!r}")
            return cls(**options)
        raise ConnectError("connect must be a cqlcodec.driver.Connect or a mapping of "
                           f"cassandra.cluster.Cluster keyword arguments, not {type(spec).__name__}")

    def cluster(self) -> Cluster:
        """A new, unconnected ``cassandra.cluster.Cluster`` for this spec."""
        options: dict[str, Any] = dict(self.cluster_options)
        if self.username is not None:
            from cassandra.auth import PlainTextAuthProvider

            options["auth_provider"] = PlainTextAuthProvider(self.username, self._password)
        if self.tls is not None:
            options["ssl_context"] = self.tls.context()
        if self.local_dc is not None:
            from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile
            from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

            policy = TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=self.local_dc))
            profiles = dict(options.get("execution_profiles") or {})
            base = profiles.get(EXEC_PROFILE_DEFAULT)
            if base is None:
                profiles[EXEC_PROFILE_DEFAULT] = ExecutionProfile(load_balancing_policy=policy)
            else:
                base.load_balancing_policy = policy
            options["execution_profiles"] = profiles
        if "connection_class" not in options and ON_BY_DEFAULT:
            options["connection_class"] = connection_class()
        return Cluster(list(self.contact_points), port=self.port, **options)

    def key(self) -> bytes:
        """An opaque digest identifying the spec (equal specs, equal keys)."""
        state = (self.contact_points, self.port, self.username, self._password, self.tls,
                 self.local_dc, self.keyspace, sorted(self.cluster_options.items()))
        try:
            raw = pickle.dumps(state, protocol=4)
        except Exception as exc:
            raise ConnectError(f"the connect spec's options do not pickle: {exc}") from exc
        return hashlib.sha256(raw).digest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Connect) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        parts = [f"{list(self.contact_points)!r}", f"port={self.port}"]
        if self.username is not None:
            parts.append(f"username={self.username!r}, password={_HIDDEN!r}")
        if self.tls is not None:
            parts.append("tls=on")
        if self.local_dc is not None:
            parts.append(f"local_dc={self.local_dc!r}")
        if self.keyspace is not None:
            parts.append(f"keyspace={self.keyspace!r}")
        simple = (int, float, str, bool, type(None))
        for name in sorted(self.cluster_options):
            value = self.cluster_options[name]
            shown = repr(value) if isinstance(value, simple) and "pass" not in name.lower() \
                and "secret" not in name.lower() and "token" not in name.lower() else "..."
            parts.append(f"{name}={shown}")
        return f"Connect({', '.join(parts)})"

    __str__ = __repr__


# --------------------------------------------------------------------------- sessions

_lock: Final = threading.Lock()
_sessions: dict[bytes, tuple[Cluster, Session]] = {}
_owner = [0]  # the pid the cached sessions belong to (a forked child opens its own)
_hook = [False]


def session_for(spec: Connect | Mapping[str, Any]) -> Session:
    """This process's session for ``spec``: opened on first use (``Cluster.connect``),
    reused by every later call with an equal spec, closed at process exit."""
    connect = Connect.of(spec)
    key = connect.key()
    with _lock:
        if _owner[0] != os.getpid():
            _sessions.clear()  # inherited from a parent through fork: never shared
            _owner[0] = os.getpid()
        found = _sessions.get(key)
        if found is not None and not found[1].is_shutdown:
            return found[1]
        cluster = connect.cluster()
        try:
            session = cluster.connect(connect.keyspace)
        except Exception as exc:
            cluster.shutdown()
            raise ConnectError(f"cannot connect to {connect!r}: {type(exc).__name__}: "
                               f"{_without(str(exc), connect)}") from exc
        _sessions[key] = (cluster, session)
        if not _hook[0]:
            atexit.register(close_sessions)
            _hook[0] = True
        return session


def _without(text: str, connect: Connect) -> str:
    password = connect.__getstate__()["_password"]
    return text.replace(password, _HIDDEN) if password else text


def open_session_count() -> int:
    """How many sessions this process holds (one per distinct spec used here)."""
    with _lock:
        return len(_sessions) if _owner[0] == os.getpid() else 0


def close_sessions() -> None:
    """Shut down every session this process opened (registered with ``atexit``)."""
    with _lock:
        found = list(_sessions.values()) if _owner[0] == os.getpid() else []
        _sessions.clear()
    for cluster, _session in found:
        try:
            cluster.shutdown()
        except Exception:  # noqa: S110 - at exit, a cluster already half shut down
            pass
