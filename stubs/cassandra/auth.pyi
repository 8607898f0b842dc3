"""Authentication providers."""

class AuthProvider: ...

class PlainTextAuthProvider(AuthProvider):
    username: str
    password: str
    def __init__(self, username: str | None = None, password: str | None = None) -> None: ...
