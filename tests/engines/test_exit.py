"""A process that read a table with cqlcodec.dask on a 2-process LocalCluster and then
ran a Ray Data job exits cleanly (exit code 0) once its work is done.

The crash of issue 31 (b4a0c61): distributed's scheduler keeps the tasks it sent, with
their arguments (the table template, Arrow arrays exported by cqlcodec), until the
interpreter exits. When the last garbage collection freed them after cqlcodec's modules,
pyarrow called a ctypes release callback that no longer worked (SIGSEGV, or SIGABRT on
"ArrowArrayRelease did not cleanup release callback"). Whether the scheduler's objects
went after cqlcodec's modules depended on the collection order; here a module imported
before cqlcodec holds the read, so they always do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("distributed")
pytest.importorskip("ray")

from integration.data import KEYSPACE  # noqa: E402

from .conftest import cluster_options  # noqa: E402

SEQUENCE = textwrap.dedent("""
    import sys

    import distributed
    import ray

    import cqlcodec.dask

    if __name__ == "__main__":
        connect = {connect!r}
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        read = cqlcodec.dask.read_table(connect, "{table}", columns=["k"])
        distributed.cqlcodec_read = read  # freed at exit after cqlcodec's modules
        frame = read.compute()
        print("dask rows", len(frame), flush=True)
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        print("ray rows", len(ray.data.range(1000).to_pandas()), flush=True)
        ray.shutdown()
""")


def test_dask_then_a_ray_job_then_a_clean_exit(session: Any, tmp_path: Any) -> None:
    script = tmp_path / "dask_then_ray.py"
    script.write_text(SEQUENCE.format(connect=cluster_options(), table=f"{KEYSPACE}.bulk"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    done = subprocess.run([sys.executable, "-X", "faulthandler", str(script)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert "ray rows 1000" in done.stdout, done.stderr[-3000:]
    assert done.returncode == 0, f"exit code {done.returncode}\n{done.stderr[-3000:]}"
