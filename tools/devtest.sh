#!/usr/bin/env bash
# Developer loop: run pytest against the interpreted or a freshly compiled build
# of the working tree, without touching the tree itself.
#   tools/devtest.sh pure     [pytest args...]
#   tools/devtest.sh compiled [pytest args...]   (builds in a private copy under $TMPDIR)
# PYTHON defaults to python3 (3.11+: -P keeps the source tree off sys.path); it needs
# mypy==2.4.1, librt, pytest, hypothesis.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: devtest.sh pure|compiled [pytest args]}; shift
py=${PYTHON:-python3}
case "$mode" in
  pure)
    export PYTHONPATH="$here"
    ;;
  compiled)
    work=${DEVTEST_DIR:-${TMPDIR:-/tmp}/cqlcodec-devbuild-${USER:-$(id -u)}-$$}
    rm -rf "$work"; mkdir -p "$work"
    cp -r "$here/cqlcodec" "$here/setup.py" "$here/pyproject.toml" "$here/README.md" "$here/LICENSE" "$work/"
    [ -d "$here/stubs" ] && cp -r "$here/stubs" "$work/"
    (cd "$work" && CQLCODEC_COMPILE=1 MYPYC_OPT_LEVEL=${MYPYC_OPT_LEVEL:-1} \
        "$py" setup.py -q build_ext --inplace >"$work/build.log" 2>&1) \
      || { tail -40 "$work/build.log"; exit 1; }
    export PYTHONPATH="$work"
    ;;
  *) echo "mode must be pure or compiled" >&2; exit 2 ;;
esac
cd "$here"
CQLCODEC_EXPECT=$mode exec "$py" -P -m pytest -p no:cacheprovider "$@"
