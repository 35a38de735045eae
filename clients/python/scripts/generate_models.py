#!/usr/bin/env python3
"""Regenerates src/forecast_client/models.py from the OpenAPI snapshot.

The models come from web/openapi.json (the document `GET /api/openapi.json`
serves, kept current by the `web` integration test) through
datamodel-code-generator, pinned in requirements-dev.txt. The drift test
(tests/test_models_drift.py) runs this script into a temporary file and
compares bytes with the committed module.

    python scripts/generate_models.py            # rewrite the committed module
    python scripts/generate_models.py --out X    # write somewhere else
    python scripts/generate_models.py --spec Y   # from another document
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE_ROOT = HERE.parent
REPO_ROOT = PACKAGE_ROOT.parent.parent
SPEC = REPO_ROOT / "web" / "openapi.json"
OUT = PACKAGE_ROOT / "src" / "forecast_client" / "models.py"

# The generator and the version the committed module was made with; a
# different version may format differently, which the drift test would
# report as drift, so refuse early instead.
GENERATOR = "datamodel-code-generator"
GENERATOR_VERSION = "0.89.0"

HEADER = (
    "# Generated from web/openapi.json by datamodel-code-generator "
    f"{GENERATOR_VERSION}: do not edit.\n"
    "# Regenerate with `make python-client-types` (clients/python/scripts/generate_models.py)."
)

ARGS = [
    "--input-file-type", "openapi",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.10",
    "--disable-timestamp",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-annotated",
    "--field-constraints",
    "--use-double-quotes",
    "--use-field-description",
    # Additive server fields must not break an older client.
    "--extra-fields", "allow",
    "--formatters", "builtin",
    "--custom-file-header", HEADER,
]


def generate(spec: Path, out: Path) -> None:
    try:
        found = version(GENERATOR)
    except PackageNotFoundError:
        sys.exit(f"{GENERATOR} is not installed (pip install -r clients/python/requirements-dev.txt)")
    if found != GENERATOR_VERSION:
        sys.exit(f"{GENERATOR} {found} is installed; the models are made with {GENERATOR_VERSION}")
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "datamodel_code_generator", "--input", str(spec), "--output", str(out), *ARGS]
    subprocess.run(cmd, check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", type=Path, default=SPEC)
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    generate(a.spec, a.out)


if __name__ == "__main__":
    main()
