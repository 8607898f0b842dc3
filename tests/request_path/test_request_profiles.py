"""How the request path finds a call's execution profile (cqlcodec/requests/statements.py)."""

from __future__ import annotations

from typing import Any

from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, ExecutionProfile, Session, _ConfigMode
from cassandra.policies import ConstantSpeculativeExecutionPolicy
from cassandra.query import tuple_factory

from cqlcodec.requests.statements import Settings, _driver_lookup, profiles_of


class _OwnLookup(Session):
    def get_execution_profile(self, name: Any) -> ExecutionProfile:
        return ExecutionProfile()


class _Plain(Session):
    pass


def test_a_session_class_with_its_own_profile_lookup_is_asked() -> None:
    assert _driver_lookup(Session) and _driver_lookup(_Plain)
    assert not _driver_lookup(_OwnLookup)  # its method is called, not the dict read


class _Cluster:
    def __init__(self, profiles: dict[object, Any]) -> None:
        self._config_mode = _ConfigMode.PROFILES
        self.profile_manager = type("Manager", (), {"profiles": profiles})()


class _Session(Session):  # the driver's profile lookup, without a cluster behind it
    def __init__(self, profiles: dict[object, Any]) -> None:
        self.cluster: Any = _Cluster(profiles)


class _Computed(ExecutionProfile):
    @property
    def request_timeout(self) -> float:
        return 42.0

    @request_timeout.setter
    def request_timeout(self, value: float) -> None:
        pass


def test_a_profile_changed_since_the_last_call_applies_at_once() -> None:
    ep: Any = ExecutionProfile(request_timeout=5.0, consistency_level=ConsistencyLevel.ONE,
                          row_factory=tuple_factory)
    session = _Session({EXEC_PROFILE_DEFAULT: ep})
    assert Settings(session, EXEC_PROFILE_DEFAULT).timeout == 5.0
    ep.request_timeout = 7.5
    ep.consistency_level = ConsistencyLevel.QUORUM
    ep.speculative_execution_policy = ConstantSpeculativeExecutionPolicy(0.1, 2)
    again = Settings(session, EXEC_PROFILE_DEFAULT)
    assert (again.timeout, again.consistency) == (7.5, ConsistencyLevel.QUORUM)
    assert again.speculative is ep.speculative_execution_policy
    profiles = profiles_of(session)
    assert profiles is not None  # the driver's lookup, a cluster configured with profiles
    found = Settings(session, EXEC_PROFILE_DEFAULT, profiles[EXEC_PROFILE_DEFAULT])
    assert (found.timeout, found.row_factory) == (7.5, tuple_factory)


def test_a_profile_class_of_its_own_is_read_by_attribute() -> None:
    session = _Session({"own": _Computed(request_timeout=1.0)})
    assert Settings(session, "own").timeout == 42.0
    plain: Any = ExecutionProfile()
    del plain.__dict__["retry_policy"]  # read from the class, as attribute lookup does
    kind: Any = ExecutionProfile
    assert Settings(_Session({"p": plain}), "p").retry_policy is kind.retry_policy
