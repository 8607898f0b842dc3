from typing import Any

class Host:
    is_up: bool | None
    def __init__(self, endpoint: Any, conviction_policy_factory: Any,
                 datacenter: str | None = ..., rack: str | None = ...,
                 host_id: Any = ...) -> None: ...
