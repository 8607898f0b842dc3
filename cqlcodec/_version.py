__version__ = "0.1.0"
"""The version of cqlcodec (also ``python -m cqlcodec --version``)."""
