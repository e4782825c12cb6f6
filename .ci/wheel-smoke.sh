#!/usr/bin/env bash
# Installs ReqGate as a user does and runs it from elsewhere: builds the wheel from the files the image
# copies, installs it with the lock file into a fresh virtual environment outside the checkout, then from
# another directory runs `reqgate --help`, an offline review of an example, and `reqgate serve` until
# /readyz answers 200 and a signed GitHub webhook (`reqgate replay` of examples/) is answered 202.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
step() { printf 'wheel-smoke: %s\n' "$*"; }

# Only what deploy/Dockerfile copies: a file the package needs from anywhere else fails here.
mkdir -p "$work/src"
(cd "$repo" && cp -R pyproject.toml README.md bot handlers pipeline config prompts "$work/src/")
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
step "building the wheel"
python3 -m pip wheel -q --no-deps --wheel-dir "$work/dist" "$work/src" 2>&1 | grep -v "^WARNING: Location" || true
wheel="$(ls "$work"/dist/reqgate-*.whl)"
python3 - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
tops = sorted({name.split("/", 1)[0] for name in names})
stray = [top for top in tops if top != "reqgate" and not top.endswith(".dist-info")]
assert not stray, f"the wheel installs more than the reqgate package at the top of site-packages: {stray}"
for needed in ("reqgate/config/defaults.yml", "reqgate/config/reqgate.schema.json", "reqgate/prompts/structure.md"):
    assert needed in names, f"{needed} is missing from the wheel"
print(f"wheel-smoke: {len(names)} files, top level {tops}")
PY

step "installing it with deploy/requirements.lock into a fresh virtual environment"
python3 -m venv "$work/venv"
pip_quiet() { "$work/venv/bin/pip" "$@" 2>&1 | grep -v "^WARNING: Location" || true; }
pip_quiet install -q --require-hashes -r "$repo/deploy/requirements.lock"
pip_quiet install -q --no-deps "$wheel"
"$work/venv/bin/pip" check
reqgate="$work/venv/bin/reqgate"

mkdir -p "$work/elsewhere"
cd "$work/elsewhere"
cp "$repo/examples/good-story.md" "$repo/examples/github-issues-opened.json" .
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL
export REQGATE_CACHE_DIR="$work/cache"

step "reqgate --help"
"$reqgate" --help >"$work/help.txt"
grep -q "review" "$work/help.txt"

step "reqgate review good-story.md --offline"
status=0
"$reqgate" review good-story.md --offline >"$work/review.md" || status=$?
if [ "$status" -gt 1 ]; then
    echo "wheel-smoke: the offline review exited $status" >&2
    exit 1
fi
grep -q "ReqGate" "$work/review.md"

step "reqgate serve to /readyz 200 and a signed webhook answered 202"
port="$("$work/venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export REQGATE_DATA_DIR="$work/data" REQGATE_GITHUB_WEBHOOK_SECRET="wheel-smoke-secret"
# No GitHub is reachable here: the review fails later and is retried, the acknowledgement does not wait on it.
export REQGATE_GITHUB_TOKEN="wheel-smoke-token" REQGATE_GITHUB_API_URL="http://127.0.0.1:9"
"$reqgate" serve --host 127.0.0.1 --port "$port" >"$work/serve.log" 2>&1 &
server_pid=$!
"$work/venv/bin/python" - "$port" "$server_pid" <<'PY' || { tail -n 40 "$work/serve.log" >&2; exit 1; }
import os, sys, time, urllib.error, urllib.request
port, pid = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 90
while True:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            if answer.status == 200:
                break
    except (urllib.error.URLError, OSError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("wheel-smoke: reqgate serve exited before it was ready")
    if time.monotonic() > deadline:
        sys.exit("wheel-smoke: /readyz did not answer 200 within 90 s")
    time.sleep(0.2)
PY
"$reqgate" replay github-issues-opened.json --event issues --url "http://127.0.0.1:$port/webhooks/github" \
    >"$work/replay.txt"
head -n 1 "$work/replay.txt"
grep -q "^202 " "$work/replay.txt"
kill "$server_pid"
# uvicorn shuts down gracefully on SIGTERM and then re-raises it: 143 (128 + 15) is the clean exit.
status=0
wait "$server_pid" || status=$?
server_pid=""
if [ "$status" -ne 0 ] && [ "$status" -ne 143 ]; then
    echo "wheel-smoke: reqgate serve exited $status on SIGTERM" >&2
    tail -n 40 "$work/serve.log" >&2
    exit 1
fi
if grep -v '^{' "$work/serve.log" | grep -q .; then
    echo "wheel-smoke: reqgate serve wrote lines that are not JSON:" >&2
    grep -v '^{' "$work/serve.log" | head -n 20 >&2
    exit 1
fi
step "ok"
