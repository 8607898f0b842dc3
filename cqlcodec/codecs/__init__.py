"""How the values of each CQL type become bytes and back.

* ``base``: the :class:`Codec` interface (``encode``, ``encode_into``, ``decode``).
* ``builder``: the one dispatch from a CqlType's kind to its codec.
* One module per type family: ``fixed`` (fixed-width numbers, boolean), ``numeric``
  (varint, decimal), ``strings`` (text, ascii, blob, custom), ``uuids``, ``inet``,
  ``temporal`` (timestamp, date, time, duration), ``collections`` (list, set, map,
  tuple, UDT), ``vector``; ``coerce`` holds the shared input conversions and
  ``numpy_vectors`` the optional numpy glue.
* ``cache``: the bounded, thread-safe per-type codec caches.
* ``encryption``: the column-encryption policy protocol and the codecs that wrap it.

Imports ``types``, ``runtime``, ``values``, ``containers``, ``errors``, ``kinds``.
"""
