"""The generated models are those of the current OpenAPI snapshot
(web/openapi.json, itself kept current by the `web` integration test)."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path

import pytest

import forecast_client
from forecast_client import Client

PACKAGE = Path(__file__).resolve().parents[1]
SCRIPT = PACKAGE / "scripts" / "generate_models.py"
COMMITTED = PACKAGE / "src" / "forecast_client" / "models.py"
SPEC = PACKAGE.parents[1] / "web" / "openapi.json"


def _generator():
    spec = importlib.util.spec_from_file_location("generate_models", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_models_match_the_openapi_snapshot(tmp_path):
    out = tmp_path / "models.py"
    _generator().generate(SPEC, out)
    assert out.read_bytes() == COMMITTED.read_bytes(), (
        "clients/python/src/forecast_client/models.py differs from what web/openapi.json generates: "
        "run `make python-client-types` and commit the result"
    )


def test_a_changed_document_is_drift(tmp_path):
    # The comparison above notices a change: one new field in the document
    # generates different bytes.
    doc = json.loads(SPEC.read_text())
    doc["components"]["schemas"]["EquityPoint"]["properties"]["drift_probe"] = {"type": "number"}
    changed = tmp_path / "openapi.json"
    changed.write_text(json.dumps(doc))
    out = tmp_path / "models.py"
    _generator().generate(changed, out)
    assert out.read_bytes() != COMMITTED.read_bytes()
    assert "drift_probe" in out.read_text()


def test_installed_package_carries_the_committed_models():
    installed = Path(forecast_client.models.__file__)
    assert installed.read_bytes() == COMMITTED.read_bytes()


@pytest.mark.parametrize(
    "method, paths",
    [
        ("verdict", ["/api/analysis/{ticker}/verdict"]),
        ("analysis", ["/api/analysis/{ticker}"]),
        ("ranking", ["/api/ranking"]),
        ("track_record", ["/api/track-record/{ticker}", "/api/track-record"]),
    ],
)
def test_client_parameters_are_the_documents(method, paths):
    # Every keyword a method sends is a query parameter of its operation in
    # the document: the hand-written layer invents none. (A parameter the
    # API adds later is reachable through `Client.request` until a keyword
    # is added for it.)
    doc = json.loads(SPEC.read_text())
    declared = {p["name"] for path in paths for p in doc["paths"][path]["get"].get("parameters", []) if p["in"] == "query"}
    sig = inspect.signature(getattr(Client, method))
    keywords = {n for n, p in sig.parameters.items() if p.kind == p.KEYWORD_ONLY}
    assert keywords, method
    assert keywords <= declared, keywords - declared


def test_generator_version_is_the_pinned_one():
    req = (PACKAGE / "requirements-dev.txt").read_text()
    assert f"datamodel-code-generator=={_generator().GENERATOR_VERSION} " in req
