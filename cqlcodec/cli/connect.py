"""The connection options of the table commands and the driver session they open."""

from __future__ import annotations

import argparse
import getpass
import logging
import os
import sys
import threading
from typing import Any, Final

from cqlcodec.cli import exits

DEFAULT_PASSWORD_ENV: Final = "CQLCODEC_PASSWORD"
CONSISTENCY_NAMES: Final = ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM",
                            "EACH_QUORUM", "LOCAL_ONE")
# the table commands' reconnection policy: 0.5 s after a node went down, doubled up to 4 s
RECONNECT_BASE_DELAY: Final = 0.5
RECONNECT_MAX_DELAY: Final = 4.0
DRIVER_HINT: Final = ("the table commands need cassandra-driver or scylla-driver: "
                      "pip install 'cqlcodec[cassandra-driver]'")


class ConnectError(Exception):
    """The session cannot be opened; ``status`` is the exit status to return."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


PASSWORD_REFUSED: Final = (
    "--password is not an option: a password on the command line is seen by every user "
    "of the machine (ps, shell history); put it in an environment variable named by "
    f"--password-env (default ${DEFAULT_PASSWORD_ENV}), or give --username alone to be "
    "asked for it")


class RefusedPassword(argparse.Action):
    """``--password``/``-p``: refused with exit status 2, the value never shown."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        parser.error(PASSWORD_REFUSED)


def add_connection_options(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """--host/--port, credentials, SSL, consistency and protocol version; with ``prefix``
    (``"to-"``: the target of ``copy`` and ``diff``) the same options named ``--to-host`` ..., each
    defaulting to the source's (None until :func:`target_args` fills it in)."""
    target = bool(prefix)
    g = p.add_argument_group("target connection (each defaults to the source's option)"
                             if target else "connection")

    def option(name: str, short: str | None, default: Any, **kwargs: Any) -> None:
        names = [f"--{prefix}{name}"] + ([short] if short and not target else [])
        if target:
            kwargs["help"] = f"--{name} of the target (default: the source's --{name})"
        g.add_argument(*names, default=None if target else default, **kwargs)

    option("host", None, None, action="append", metavar="HOST[,HOST...]",
           help="contact point(s); repeat or separate with commas (default 127.0.0.1); "
                "HOST:PORT gives a port of its own")
    option("port", None, 9042, type=int, metavar="PORT", help="CQL native port (default 9042)")
    option("username", "-u", None, metavar="NAME",
           help="log in as NAME (password from --password-env, else a prompt)")
    option("password-env", None, DEFAULT_PASSWORD_ENV, metavar="VAR",
           help=f"environment variable holding the password (default {DEFAULT_PASSWORD_ENV})")
    g.add_argument(*([f"--{prefix}password"] + ([] if target else ["-p"])),
                   action=RefusedPassword, nargs="?", help=argparse.SUPPRESS)
    option("ssl", None, False, action="store_true", help="connect with TLS")
    option("ssl-ca", None, None, metavar="FILE",
           help="CA certificates (PEM) to verify the server with (default: the system's)")
    option("ssl-no-verify", None, False, action="store_true",
           help="do not verify the server's certificate")
    option("consistency", None, "LOCAL_ONE", type=str.upper, choices=CONSISTENCY_NAMES,
           metavar="LEVEL", help="consistency level (default LOCAL_ONE; one of "
                                 f"{', '.join(CONSISTENCY_NAMES)})")
    option("protocol-version", None, None, type=int, choices=(3, 4, 5),
           help="native protocol version (default: negotiated)")
    option("timeout", None, 60.0, type=float, metavar="S",
           help="request timeout in seconds (default 60)")


CONNECTION_OPTIONS: Final = ("host", "port", "username", "password_env", "ssl", "ssl_ca",
                             "ssl_no_verify", "consistency", "protocol_version", "timeout")


def target_args(args: argparse.Namespace) -> argparse.Namespace | None:
    """The connection options of the target of ``copy`` and ``diff``: each ``--to-X`` given, else the
    source's ``--X``; None when no ``--to-`` option was given (the target is reached
    through the source's session)."""
    given = {name: getattr(args, f"to_{name}") for name in CONNECTION_OPTIONS
             if getattr(args, f"to_{name}", None) not in (None, False)}
    if not given:
        return None
    merged = argparse.Namespace(**vars(args))
    for name, value in given.items():
        setattr(merged, name, value)
    return merged


def contact_points(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The (host, port) pairs of --host and --port."""
    hosts: list[tuple[str, int]] = []
    for item in args.host or ["127.0.0.1"]:
        for text in item.split(","):
            text = text.strip()
            if not text:
                continue
            host, port = text, args.port
            if text.count(":") == 1:  # HOST:PORT (IPv6 addresses have several colons)
                host, _, given = text.partition(":")
                try:
                    port = int(given)
                except ValueError:
                    raise ConnectError(f"bad port in --host {text!r}", exits.USAGE) from None
            elif text.startswith("[") and "]:" in text:
                host, _, given = text[1:].partition("]:")
                port = int(given)
            hosts.append((host, port))
    if not hosts:
        raise ConnectError("--host names no host", exits.USAGE)
    return hosts


def password(args: argparse.Namespace) -> str | None:
    """The password for --username: the environment variable, else a prompt on the
    terminal; None without --username."""
    if not args.username:
        return None
    found = os.environ.get(args.password_env)
    if found is not None:
        return found
    if not sys.stdin.isatty():
        raise ConnectError(f"--username given but ${args.password_env} is not set and there "
                           "is no terminal to ask for the password", exits.USAGE)
    return getpass.getpass(f"password for {args.username}: ")


NO_AUTH_WARNING: Final = ("cqlcodec: warning: --username {user} given, but the server asked "
                          "for no authentication (its authenticator lets every client in): "
                          "the password was not used\n")


class NoAuthNotice(logging.Filter):
    """Turns the driver's warning, logged per connection, that a server with
    ``--username`` sent no authentication challenge into one line on stderr."""

    def __init__(self, username: str) -> None:
        super().__init__()
        self.username = username
        self.said = False
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """False for the driver's no-challenge warning (said once here), else True."""
        if "authentication challenge was not sent" not in str(record.msg):
            return True
        with self._lock:
            if not self.said:
                self.said = True
                sys.stderr.write(NO_AUTH_WARNING.format(user=self.username))
                sys.stderr.flush()
        return False


def consistency_level(args: argparse.Namespace) -> int:
    """The driver's ConsistencyLevel value of --consistency."""
    from cassandra import ConsistencyLevel

    return int(getattr(ConsistencyLevel, args.consistency))


def open_session(args: argparse.Namespace) -> tuple[Any, Any]:
    """(cluster, session) connected with the options, cqlcodec installed. Raises
    :class:`ConnectError` with the exit status to use."""
    try:
        from cassandra import AuthenticationFailed
        from cassandra.auth import PlainTextAuthProvider
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
        from cassandra.policies import (
            DCAwareRoundRobinPolicy,
            ExponentialReconnectionPolicy,
            TokenAwarePolicy,
        )
    except ImportError:
        raise ConnectError(DRIVER_HINT, exits.MISSING_DEPENDENCY) from None
    import cqlcodec.driver

    points = contact_points(args)
    ports = {p for _, p in points}
    options: dict[str, Any] = {}
    if len(ports) == 1:
        options["contact_points"] = [h for h, _ in points]
        options["port"] = ports.pop()
    else:
        from cassandra.connection import DefaultEndPoint

        options["contact_points"] = [DefaultEndPoint(h, p) for h, p in points]
    secret = password(args)
    if args.username:
        options["auth_provider"] = PlainTextAuthProvider(args.username, secret or "")
        logging.getLogger("cassandra.connection").addFilter(NoAuthNotice(args.username))
    if args.ssl or args.ssl_ca or args.ssl_no_verify:
        options["ssl_context"] = _ssl_context(args)
    if args.protocol_version is not None:
        options["protocol_version"] = args.protocol_version
    profile = ExecutionProfile(
        load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy()),
        request_timeout=args.timeout, consistency_level=consistency_level(args))
    # a node that comes back is noticed within RECONNECT_MAX_DELAY, never given up on
    reconnection = ExponentialReconnectionPolicy(RECONNECT_BASE_DELAY, RECONNECT_MAX_DELAY,
                                                 max_attempts=None)
    cluster = Cluster(execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                      reconnection_policy=reconnection,
                      connect_timeout=min(args.timeout, 30.0),
                      control_connection_timeout=min(args.timeout, 30.0), **options)
    cqlcodec.driver.install(cluster)
    try:
        session = cluster.connect()
    except NoHostAvailable as exc:
        cluster.shutdown()
        causes = "; ".join(f"{host}: {err}" for host, err in exc.errors.items()) or str(exc)
        refused = any(isinstance(e, AuthenticationFailed) for e in exc.errors.values())
        what = "authentication refused by" if refused else "cannot connect to"
        raise ConnectError(f"{what} {_names(points)}: {causes}", exits.CONNECTION) from None
    except Exception as exc:  # noqa: BLE001 - SSL and socket errors of every kind
        cluster.shutdown()
        raise ConnectError(f"cannot connect to {_names(points)}: {type(exc).__name__}: {exc}",
                           exits.CONNECTION) from None
    return cluster, session


def _names(points: list[tuple[str, int]]) -> str:
    return ", ".join(f"{h}:{p}" for h, p in points)


def _ssl_context(args: argparse.Namespace) -> Any:
    import ssl

    context = ssl.create_default_context(cafile=args.ssl_ca)
    if args.ssl_no_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context
