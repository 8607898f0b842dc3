"""Which build is running.

setup.py compiles every module of the package except a listed few into one mypyc
group, or none at all, so whether this module is an extension says it for all of
them. Compiled code reads the flag as a constant.
"""

from typing import Final

COMPILED: Final = not __file__.endswith((".py", ".pyc"))
"""True when the package's core modules are mypyc-compiled extensions."""
