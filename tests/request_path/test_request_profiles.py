"""How the request path finds a call's execution profile (cqlcodec/requests/statements.py)."""

from __future__ import annotations

from typing import Any

from cassandra.cluster import ExecutionProfile, Session

from cqlcodec.requests.statements import _driver_lookup


class _OwnLookup(Session):
    def get_execution_profile(self, name: Any) -> ExecutionProfile:
        return ExecutionProfile()


class _Plain(Session):
    pass


def test_a_session_class_with_its_own_profile_lookup_is_asked() -> None:
    assert _driver_lookup(Session) and _driver_lookup(_Plain)
    assert not _driver_lookup(_OwnLookup)  # its method is called, not the dict read
