import threading

class MonotonicTimestampGenerator:
    lock: threading.Lock
    last: int
    warn_on_drift: bool
    warning_threshold: float
    warning_interval: float
    def __init__(self, warn_on_drift: bool = ..., warning_threshold: float = ...,
                 warning_interval: float = ...) -> None: ...
    def __call__(self) -> int: ...
    def _maybe_warn(self, now: int) -> None: ...
