#!/usr/bin/env bash
# Regenerates tools/bench/peer/requirements.txt: vectorbt, quantstats,
# statsmodels and properscoring at the versions below and their whole
# dependency closure as pip resolves it for this machine's python3 (binary
# wheels only, all four resolved together so they share one numpy, scipy and
# pandas), each pinned by version and the SHA-256 of the wheel downloaded.
# statsmodels 0.15.0 and properscoring 0.1 accept the numpy/scipy/pandas that
# vectorbt and quantstats resolve to. Review the diff before committing.
set -euo pipefail
cd "$(dirname "$0")/../../.."
version=1.2.0
quantstats=0.0.86
statsmodels=0.15.0
properscoring=0.1
dl=target/bench-peer/dl
rm -rf "$dl" && mkdir -p "$dl"
python3 -m pip download --quiet --only-binary=:all: -d "$dl" "vectorbt==$version" "quantstats==$quantstats" \
  "statsmodels==$statsmodels" "properscoring==$properscoring"
python3 - "$dl" > tools/bench/peer/requirements.txt <<'PY'
import hashlib, os, sys
d = sys.argv[1]
print("# vectorbt, quantstats, statsmodels and properscoring with their whole")
print("# dependency closure for the peer comparison (tools/bench/peer/compare.py,")
print("# metrics.py, forecast_eval.py), pinned by version")
print("# and SHA-256; installed")
print("# with `pip install --require-hashes --only-binary=:all:`. The hashes are")
print("# those of the wheels pip picks for CPython 3.11 on manylinux x86_64")
print("# (this machine); regenerate with tools/bench/peer/lock.sh elsewhere.")
for f in sorted(os.listdir(d), key=str.lower):
    if f.endswith(".whl"):
        name, version = f.split("-")[:2]
        digest = hashlib.sha256(open(os.path.join(d, f), "rb").read()).hexdigest()
        print(f"{name.lower().replace('_', '-')}=={version} \\\n    --hash=sha256:{digest}")
PY
