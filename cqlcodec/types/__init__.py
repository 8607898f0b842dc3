"""What a CQL type is and how it is written down.

* ``model``: :class:`~cqlcodec.CqlType` (immutable, interned) and its constructors.
* ``parse``: CQL type text and Java marshal class names into a CqlType.
* ``option``: the binary ``[option]`` of RESULT/PREPARED metadata into a CqlType.

Imports ``runtime``, ``errors`` and ``kinds``; never ``codecs`` (a CqlType reaches its
codec through the builder that ``cqlcodec.codecs.builder`` registers).
"""
