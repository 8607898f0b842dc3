"""Run Python code in a child process that imports the same cqlcodec build as this one.

Used where a crash (segfault, C stack overflow) must be observed rather than
suffered, and where resident memory must be measured in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

_BOOT = ("import sys, json, os; sys.path[:] = json.loads(os.environ['CQLCODEC_CHILD_PATH']); "
         "exec(compile(os.environ['CQLCODEC_CHILD_CODE'], '<child>', 'exec'))")


def run_python(code: str, timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child Python with this process's ``sys.path`` (and so its build)."""
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    env["CQLCODEC_CHILD_PATH"] = json.dumps([tests_dir] + [p for p in sys.path if p != tests_dir])
    env["CQLCODEC_CHILD_CODE"] = code
    env["PYTHONFAULTHANDLER"] = "1"
    return subprocess.run([sys.executable, "-c", _BOOT], env=env, capture_output=True,
                          text=True, timeout=timeout, cwd=tests_dir)


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    """A readable account of how a child ended."""
    how = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
           else f"exit status {proc.returncode}")
    return f"child {how}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-3000:]}"
