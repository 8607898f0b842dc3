"""Compare the driver's test runs of ``tools/driver_suite.sh``: driver's class against cqlcodec's.

Reads ``v<protocol>-driver.xml`` and ``v<protocol>-cqlcodec.xml`` and/or
``v<protocol>-install.xml`` (pytest junit files) from the folder given, prints the
passed/failed/skipped counts of each run and the tests whose outcome differs from the
driver's-class run, and exits 1 when a test passes with the driver's class and not with
cqlcodec's class or with ``install()``, or when there is nothing to compare (a run missing,
or one that ran no test).
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

OUTCOMES = ("passed", "failed", "skipped")


def outcomes(junit: Path) -> dict[str, str]:
    """Each test id of a junit file with its outcome: passed, failed (or error) or skipped."""
    found: dict[str, str] = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None or case.find("error") is not None:
            found[test_id] = "failed"
        elif case.find("skipped") is not None:
            found[test_id] = "skipped"
        else:
            found[test_id] = "passed"
    return found


def counts(found: dict[str, str]) -> str:
    """The outcome counts of one run, as one line."""
    values = list(found.values())
    return ", ".join(f"{values.count(outcome)} {outcome}" for outcome in OUTCOMES)


NAMES = {"cqlcodec": "cqlcodec's class", "install": "install()"}


def compare(folder: Path) -> int:
    """Print the comparison of every protocol in ``folder``; the number of regressions."""
    regressions = 0
    driver_files = sorted(folder.glob("v*-driver.xml"))
    if not driver_files:  # a run that stopped before its tests (a plugin or import error)
        print(f"no run with the driver's class in {folder}: nothing compared (see the logs)")
        return 1
    for driver_file in driver_files:
        protocol = driver_file.name.split("-")[0]
        others = [folder / f"{protocol}-{run}.xml" for run in NAMES]
        present = [other for other in others if other.exists()]
        if not present:
            print(f"{protocol}: no {' or '.join(other.name for other in others)}")
            regressions += 1
            continue
        driver = outcomes(driver_file)
        print(f"protocol {protocol}: driver's class:   {counts(driver)}")
        for other_file in present:
            name = NAMES[other_file.stem.split("-", 1)[1]]
            other = outcomes(other_file)
            if not driver or not other:
                print(f"{protocol}: a run without any test (see its log): nothing compared")
                regressions += 1
                continue
            print(f"protocol {protocol}: {name + ':':17} {counts(other)}")
            for test_id in sorted(driver.keys() | other.keys()):
                before, after = driver.get(test_id, "absent"), other.get(test_id, "absent")
                if before != after:
                    print(f"  {test_id}: {before} with the driver's class, {after} with {name}")
                    regressions += before == "passed"
    print(f"{regressions} tests pass with the driver's class and not with cqlcodec's"
          " (its class or install())")
    return regressions


if __name__ == "__main__":
    sys.exit(1 if compare(Path(sys.argv[1])) else 0)
