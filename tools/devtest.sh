#!/usr/bin/env bash
# Developer loop: run pytest against the interpreted or a freshly compiled build
# of the working tree, without touching the tree itself.
#   tools/devtest.sh pure     [pytest args...]
#   tools/devtest.sh compiled [pytest args...]   (builds in a private copy under $TMPDIR)
#   tools/devtest.sh build                       (only builds that copy, at $DEVTEST_DIR if set; prints its path)
# PYTHON defaults to python3 (3.11+: -P keeps the source tree off sys.path); it needs
# mypy==2.4.1, librt, pytest, hypothesis.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: devtest.sh pure|compiled [pytest args]}; shift
py=${PYTHON:-python3}
build_compiled() { # compile a copy of the tree into $work
  rm -rf "$work"; mkdir -p "$work"
  cp -r "$here/cqlcodec" "$here/setup.py" "$here/pyproject.toml" "$here/README.md" "$here/LICENSE" "$work/"
  [ -d "$here/stubs" ] && cp -r "$here/stubs" "$work/"
  (cd "$work" && CQLCODEC_COMPILE=1 MYPYC_OPT_LEVEL=${MYPYC_OPT_LEVEL:-1} \
      "$py" setup.py -q build_ext --inplace >"$work/build.log" 2>&1) \
    || { tail -40 "$work/build.log"; exit 1; }
}
work=${DEVTEST_DIR:-${TMPDIR:-/tmp}/cqlcodec-devbuild-${USER:-$(id -u)}-$$}
case "$mode" in
  pure)
    export PYTHONPATH="$here"
    ;;
  compiled)
    build_compiled
    export PYTHONPATH="$work"
    ;;
  build)
    build_compiled
    echo "$work"
    exit 0
    ;;
  *) echo "mode must be pure, compiled or build" >&2; exit 2 ;;
esac
cd "$here"
CQLCODEC_EXPECT=$mode exec "$py" -P -m pytest -p no:cacheprovider "$@"
