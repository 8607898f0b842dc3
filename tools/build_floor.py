"""Compile benchmarks/native/lengthword_floor.py with mypyc into a directory.

    python tools/build_floor.py OUTDIR

Run by ``nox -s bench`` with the benchmark venv's Python (which needs mypy and
librt); the floor adapter imports the module from OUTDIR (``CQLCODEC_FLOOR_DIR``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "benchmarks" / "native" / "lengthword_floor.py"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    work = out / "build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copy2(SOURCE, work / SOURCE.name)
    env = dict(os.environ, MYPYC_OPT_LEVEL=os.environ.get("MYPYC_OPT_LEVEL", "3"))
    subprocess.run([sys.executable, "-m", "mypyc", SOURCE.name], cwd=work, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    built = sorted(work.glob("lengthword_floor.*.so"))
    if not built:
        print(f"mypyc made no extension module in {work}", file=sys.stderr)
        return 1
    for path in built:
        shutil.copy2(path, out / path.name)
    for helper in work.glob("*__mypyc*.so"):
        shutil.copy2(helper, out / helper.name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
