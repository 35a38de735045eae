#!/usr/bin/env bash
# `make conformance`: schemathesis, every check, against every non-admin
# operation of the OpenAPI document the server generates (issue 12; the
# admin routes and /metrics are excluded).
#
# What it does, in order:
#   1. a venv under target/conformance-venv with schemathesis pinned by
#      version and SHA-256 (requirements.txt, pip --require-hashes);
#   2. a fresh SQLite database in a temporary directory: the demo universe,
#      today's grading run (so /api/ranking has something to rank), one
#      Premium user for the Bearer routes and one for the session routes,
#      both with quotas that fuzzing cannot exhaust;
#   3. `forecast serve` on a free port, a real session through
#      POST /auth/login;
#   4. `st run` twice: every operation except POST /auth/logout, then
#      POST /auth/logout with a session of its own (a successful logout
#      ends the session it is called with, so fuzzing it first would turn
#      every later session request into a 401 and hide them) together with
#      GET /api/openapi.json (left out of a run that does not name it);
#   5. the server is stopped however the script ends (trap).
# It exits non-zero on any failure. Expects `make build` to have run (the
# Makefile target depends on it); FORECAST_BIN overrides the binary.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/tools/conformance"
bin="${FORECAST_BIN:-$root/target/release/forecast}"
venv="$root/target/conformance-venv"
python="${PYTHON:-python3}"

# --- 1. schemathesis, pinned -------------------------------------------------
# The stamp records which requirements the venv was built from, so an edit
# of requirements.txt rebuilds it and an unchanged one costs nothing.
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$venv/bin/st" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    --require-hashes --no-deps -r "$here/requirements.txt"
  echo "$want" >"$stamp"
fi
"$venv/bin/st" --version

[ -x "$bin" ] || { echo "no $bin: run 'make build' first" >&2; exit 1; }

# --- 2. a fresh database -----------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/forecast-conformance.XXXXXX")"
server_pid=""
cleanup() {
  local status=$?
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -f "$work/server.log" ]; then
    echo "--- last lines of the server log ($work/server.log) ---" >&2
    tail -n 40 "$work/server.log" >&2 || true
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT INT TERM

export DATABASE_URL="sqlite://$work/forecast.db"
# Generous limits: the run is about the contract, not about quotas. The
# matcher's per-session limit is a server setting; the Bearer quotas are
# the users' own (set-limits below).
export FORECAST_MATCH_PER_MINUTE=1000000
# Fuzzing sends thousands of anonymous and session requests from one
# address: lift the per-client limit too.
export FORECAST_CLIENT_PER_MINUTE=1000000000
# Compiled uploads are not kept in the user's cache folder.
export FORECAST_MODULE_CACHE=off
# Webhook endpoints on loopback (the hooks use a port nothing listens at).
export FORECAST_WEBHOOK_ALLOW_PRIVATE=on
export RUST_LOG="${RUST_LOG:-warn}"
unset FORECAST_ORIGIN FORECAST_LLM_URL FORECAST_ADDR
# The admin API and /metrics (behind the same token, plain text) stay out
# of the run (excluded below); the token only lets this script read
# /api/health?debug=1.
export FORECAST_ADMIN_TOKEN="conformance-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"

# A small universe (`demo load --small`): the demo's 2,600 assets take
# minutes to grade and a whole-universe backtest takes seconds to half a
# minute on two cores, far past a fuzzing budget. Every category stays
# represented, with the tickers the document's examples name and the
# short histories (under 300 rows) the engine refuses; the rest is stored
# inactive, as the demo's delisted assets are (404 on their routes).
"$bin" demo load --small >"$work/setup.log" 2>&1
# Today's grading run, complete before the server starts: the server then
# has nothing left to grade and /api/ranking answers from a full snapshot.
"$bin" grade >>"$work/setup.log" 2>&1

bearer_email="conformance-bearer@forecast.test"
session_email="conformance-session@forecast.test"
password="conformance-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
for email in "$bearer_email" "$session_email"; do
  printf '%s\n' "$password" | "$bin" user add --email "$email" --tier premium --password-stdin >>"$work/setup.log"
  "$bin" user set-limits --email "$email" --per-minute 4000000000 --per-day 4000000000 >>"$work/setup.log"
done
key="$("$bin" key create --email "$bearer_email" --name conformance | tail -n 1)"
case "$key" in svc_*) ;; *) echo "key create printed no key" >&2; exit 1 ;; esac

# --- 3. the server -----------------------------------------------------------
"$bin" serve --addr 127.0.0.1:0 >"$work/server.log" 2>&1 &
server_pid=$!
base=""
for _ in $(seq 1 300); do
  base="$(grep -o 'listening on http://[0-9.:]*' "$work/server.log" | head -n 1 | sed 's/^listening on //')" || true
  [ -n "$base" ] && curl -fsS "$base/api/health" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "the server exited" >&2; exit 1; }
  sleep 0.2
done
[ -n "$base" ] || { echo "the server did not start" >&2; exit 1; }
# The server's own origin is its default web origin (FORECAST_ORIGIN unset).
origin="$base"

# Grading completed above; should the server have started another run
# (a new UTC day began in between), wait for it rather than fuzz a
# half-filled ranking.
graded=""
for _ in $(seq 1 600); do
  graded="$(curl -fsS -H "Authorization: Bearer $FORECAST_ADMIN_TOKEN" "$base/api/health?debug=1" | "$venv/bin/python" -c '
import json, sys
g = json.load(sys.stdin)["debug"]["grading"]
last = g["last_run"]
print("yes" if last and last["status"] == "done" and g["active_run"] == last["id"] else "")')"
  [ -n "$graded" ] && break
  sleep 1
done
[ -n "$graded" ] || { echo "grading did not finish" >&2; exit 1; }

# A real session cookie, the way a browser gets one.
login() {
  curl -fsS -o /dev/null -D - -H "Origin: $origin" -H 'Content-Type: application/json' \
    --data "{\"email\":\"$session_email\",\"password\":\"$password\"}" "$base/auth/login" |
    tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: fe_session=\([^;]*\).*/\1/p' | head -n 1
}
# Two sessions, both made now: fuzzing POST /auth/login feeds the e-mail it
# learns from /auth/me back to it, which soon meets the sign-in limit (10
# attempts per e-mail per 5 minutes, answered 429 as documented).
session="$(login)"
logout_session="$(login)"
[ -n "$session" ] && [ -n "$logout_session" ] || { echo "POST /auth/login gave no fe_session cookie" >&2; exit 1; }

# --- 4. schemathesis ---------------------------------------------------------
export FORECAST_CONFORMANCE_KEY="$key"
export FORECAST_CONFORMANCE_SESSION="$session"
export FORECAST_CONFORMANCE_BASE="$base"
# Webhook endpoints point at a loopback port nothing listens at: one the
# kernel gave out for port 0 and that was released at once.
closed_port="$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
export FORECAST_CONFORMANCE_WEBHOOK_URL="http://127.0.0.1:$closed_port/conformance"
export SCHEMATHESIS_HOOKS="$here/hooks.py"
# Hypothesis' own caches go under target/, and no bytecode of hooks.py
# into the work tree.
export HYPOTHESIS_STORAGE_DIRECTORY="$root/target/conformance-hypothesis"
export PYTHONDONTWRITEBYTECODE=1
cd "$root"
st=("$venv/bin/st" --config-file "$here/schemathesis.toml" run "$base/api/openapi.json"
  --checks all
  --exclude-path-regex '^/api/admin/|^/metrics$'
  -H "Origin: $origin"
  --report junit)

start=$(date +%s)
status=0
# Strategy uploads are a WebAssembly component's bytes, which JSON Schema
# cannot describe nor the generator make: tests/it/strategy_uploads.rs and
# tests/it/bundles.rs cover them (bad bodies included).
"${st[@]}" --report-dir "$root/target/conformance-report/main" --exclude-operation-id logout \
  --exclude-operation-id uploadStrategy --exclude-operation-id webUploadStrategy || status=$?
# Logout with a session of its own (see the header), and the document's
# own operation, which Schemathesis leaves out unless it is named.
FORECAST_CONFORMANCE_SESSION="$logout_session" "${st[@]}" --report-dir "$root/target/conformance-report/last" \
  --include-operation-id logout --include-operation-id openapi || status=$?
echo "conformance: schemathesis finished in $(( $(date +%s) - start ))s (exit $status)"
exit "$status"
