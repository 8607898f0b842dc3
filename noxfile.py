"""nox sessions: tests in both builds, type checking, and (added per issue) more.

``python3 -m nox`` runs the default sessions. Interpreters 3.10-3.13 are looked
up on PATH and under pyenv's versions directory; a missing one is skipped.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
IMPLS = ["compiled", "pure"]
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100", "numpy>=1.24", "cassandra-driver==3.30.1"]
TYPECHECK_DEPS = ["mypy==2.4.1", "librt>=0.16", "mypy_extensions>=1.0", *TEST_DEPS,
                  "pytest-benchmark>=4", "nox"]

nox.options.error_on_missing_interpreters = False
nox.options.reuse_existing_virtualenvs = False
nox.options.sessions = ["tests", "typecheck"]


def _works(exe: str) -> bool:
    try:
        return subprocess.run([exe, "-c", "pass"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _expose_pyenv_interpreters() -> None:
    """Put pyenv-installed interpreters that the shims refuse to run on PATH."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    extra = []
    for version in PYTHONS:
        exe = shutil.which(f"python{version}")
        if exe and _works(exe):
            continue
        for candidate in sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin"))):
            if _works(os.path.join(candidate, f"python{version}")):
                extra.append(candidate)
                break
    if extra:
        os.environ["PATH"] = os.pathsep.join([*extra, os.environ.get("PATH", "")])


_expose_pyenv_interpreters()


def install_cqlcodec(session: nox.Session, impl: str) -> None:
    """Non-editable install of the given build of cqlcodec into the session."""
    session.install(".", env={"CQLCODEC_COMPILE": "1" if impl == "compiled" else "0"})


@nox.session(python=PYTHONS)
@nox.parametrize("impl", IMPLS)
def tests(session: nox.Session, impl: str) -> None:
    """The unit test suite against a non-editable install of one build."""
    install_cqlcodec(session, impl)
    session.install(*TEST_DEPS)
    session.run(
        "pytest", "-p", "no:cacheprovider", *session.posargs,
        env={"CQLCODEC_EXPECT": impl, "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "ci")},
    )


@nox.session(python="3.11")
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package, tests, benchmarks and stubs."""
    session.install(*TYPECHECK_DEPS)
    session.run("mypy", "--strict", "cqlcodec", "tests", "benchmarks", "noxfile.py",
                *session.posargs)


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """The main job: a short encode/decode demo on the compiled build."""
    install_cqlcodec(session, "compiled")
    session.run("python", "-m", "cqlcodec", "demo")
