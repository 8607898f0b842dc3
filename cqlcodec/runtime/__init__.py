"""The runtime floor every other layer stands on.

* ``build``: the one ``COMPILED`` flag.
* ``buffers``: big-endian byte readers and the byte writer (librt, else ``librt_shim``).
* ``wire``: the protocol's primitive notations (``[int]``, ``[string]``, vints) and the
  error constructors that name type and offset.
* ``calendar``: civil-date arithmetic shared by timestamps and dates.

Imports only ``cqlcodec.errors`` from the rest of the package.
"""
