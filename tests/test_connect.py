"""The connect spec of the distributed engines (no server needed): it pickles, carries no
connection, compares by value, and never shows its password; importing cqlcodec (and
cqlcodec.driver) never imports Dask or Ray."""

from __future__ import annotations

import pickle
import subprocess
import sys

import pytest

pytest.importorskip("cassandra")

from cqlcodec.driver import Connect, ConnectError, Tls  # noqa: E402
from cqlcodec.errors import CodecError  # noqa: E402

SECRET = "s3cr3t-Pa55"


def test_repr_and_str_never_show_the_password() -> None:
    spec = Connect(["127.0.0.1", "127.0.0.2"], 9042, username="reader", password=SECRET,
                   protocol_version=5, local_dc="dc1", tls=Tls(check_hostname=False))
    for text in (repr(spec), str(spec), f"{spec}", repr([spec]), repr({"c": spec})):
        assert SECRET not in text
        assert "reader" in text and "***" in text
    assert "protocol_version=5" in repr(spec) and "local_dc='dc1'" in repr(spec)


def test_options_that_look_secret_are_not_shown() -> None:
    spec = Connect(["h"], 9042, my_password_option=SECRET, some_token=SECRET, connect_timeout=20)
    assert SECRET not in repr(spec)
    assert "connect_timeout=20" in repr(spec)


def test_a_spec_pickles_with_its_settings_and_compares_by_value() -> None:
    spec = Connect(["127.0.0.1"], 9043, username="u", password=SECRET, keyspace="ks",
                   protocol_version=4)
    copy = pickle.loads(pickle.dumps(spec))
    assert copy == spec and hash(copy) == hash(spec) and copy.key() == spec.key()
    assert copy.port == 9043 and copy.keyspace == "ks" and copy.cluster_options == {"protocol_version": 4}
    other = Connect(["127.0.0.1"], 9043, username="u", password="other", keyspace="ks",
                    protocol_version=4)
    assert other != spec and other.key() != spec.key()


def test_a_mapping_of_cluster_arguments_makes_a_spec() -> None:
    spec = Connect.of({"contact_points": ["127.0.0.1"], "port": 9044, "protocol_version": 5})
    assert spec == Connect(["127.0.0.1"], 9044, protocol_version=5)
    assert Connect.of(spec) is spec
    cluster = spec.cluster()  # not connected: nothing is opened until connect()
    try:
        assert cluster.port == 9044 and cluster.protocol_version == 5
        assert not cluster.sessions
    finally:
        cluster.shutdown()


def test_credentials_become_a_plain_text_auth_provider() -> None:
    from cassandra.auth import PlainTextAuthProvider

    cluster = Connect(["127.0.0.1"], username="u", password=SECRET).cluster()
    try:
        assert isinstance(cluster.auth_provider, PlainTextAuthProvider)
        assert cluster.auth_provider.username == "u"
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("bad, message", [
    ({"contact_points": []}, "at least one contact point"),
    ({"port": 0}, "port must be"),
    ({"port": "9042"}, "port must be"),
    ({"username": "u"}, "both username and password"),
])
def test_bad_specs_are_refused_clearly(bad: dict[str, object], message: str) -> None:
    with pytest.raises(ConnectError, match=message):
        Connect.of(bad)
    assert issubclass(ConnectError, CodecError)


def test_something_else_is_refused() -> None:
    with pytest.raises(ConnectError, match="mapping of cassandra.cluster.Cluster"):
        Connect.of(["127.0.0.1"])  # type: ignore[arg-type]


def test_importing_cqlcodec_imports_no_engine() -> None:
    code = ("import sys, cqlcodec, cqlcodec.driver\n"
            "bad = [m for m in ('dask', 'distributed', 'ray', 'pyarrow', 'pandas') if m in sys.modules]\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
