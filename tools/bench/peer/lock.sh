#!/usr/bin/env bash
# Regenerates tools/bench/peer/requirements.txt: vectorbt and quantstats at
# the versions below and their whole dependency closure as pip resolves it for this
# machine's python3 (binary wheels only), each pinned by version and the
# SHA-256 of the wheel downloaded. Review the diff before committing.
set -euo pipefail
cd "$(dirname "$0")/../../.."
version=1.2.0
quantstats=0.0.86
dl=target/bench-peer/dl
rm -rf "$dl" && mkdir -p "$dl"
python3 -m pip download --quiet --only-binary=:all: -d "$dl" "vectorbt==$version" "quantstats==$quantstats"
python3 - "$dl" > tools/bench/peer/requirements.txt <<'PY'
import hashlib, os, sys
d = sys.argv[1]
print("# vectorbt and quantstats with their whole dependency closure for the peer")
print("# comparison (tools/bench/peer/compare.py, metrics.py), pinned by version")
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
