#!/usr/bin/env bash
# The `postgres` test suite against a real, throwaway PostgreSQL server.
#
#   .ci/postgres.sh [extra pytest arguments]
#
# Installs PostgreSQL from Debian when initdb is missing, creates a cluster in a temporary directory owned
# by an unprivileged user (initdb refuses root), starts it on a free 127.0.0.1 port, runs
# `pytest -m postgres` with REQGATE_TEST_PG_URL pointing at it, and removes the cluster on exit.
# With `--serve` instead of pytest arguments it only starts the server, prints the URL and waits (for a
# developer's shell or the throughput benchmark); Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

find_bin() {
    local name=$1
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
    # Debian keeps the server binaries out of PATH, under /usr/lib/postgresql/<major>/bin.
    local found
    found=$(ls -1d /usr/lib/postgresql/*/bin/"$name" 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$found" ] && echo "$found"
}

if [ -z "$(find_bin initdb)" ]; then
    echo "postgres.sh: installing PostgreSQL from Debian" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
fi
INITDB=$(find_bin initdb)
PG_CTL=$(find_bin pg_ctl)

# The cluster's owner: this user when not root; otherwise the Debian `postgres` account, or `nobody`.
RUN_AS=()
if [ "$(id -u)" -eq 0 ]; then
    OWNER=postgres
    getent passwd postgres >/dev/null || OWNER=nobody
    RUN_AS=(runuser -u "$OWNER" --)
fi

CLUSTER=$(mktemp -d /tmp/reqgate-pg.XXXXXX)
chmod 755 "$CLUSTER"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$CLUSTER/data" "$CLUSTER/run"
[ ${#RUN_AS[@]} -gt 0 ] && chown -R "$OWNER" "$CLUSTER"

stop_cluster() {
    "${RUN_AS[@]}" "$PG_CTL" -D "$CLUSTER/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$CLUSTER"
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

"${RUN_AS[@]}" "$INITDB" -D "$CLUSTER/data" -U reqgate --auth=trust -E UTF8 --locale=C.UTF-8 >"$CLUSTER/initdb.log" 2>&1 \
    || { cat "$CLUSTER/initdb.log" >&2; exit 1; }
# Enough connections for the tests that start a dozen processes at once (each with DBOS's pools);
# fsync off: a throwaway cluster, and the suite's wall time matters more than surviving a power cut.
"${RUN_AS[@]}" "$PG_CTL" -D "$CLUSTER/data" -l "$CLUSTER/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $PORT -k $CLUSTER/run -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
    start >/dev/null || { cat "$CLUSTER/server.log" >&2; exit 1; }

export REQGATE_TEST_PG_URL="postgresql://reqgate@127.0.0.1:$PORT/postgres"
echo "postgres.sh: PostgreSQL at $REQGATE_TEST_PG_URL" >&2

if [ "${1:-}" = "--serve" ]; then
    echo "$REQGATE_TEST_PG_URL"
    while true; do sleep 3600 & wait $!; done  # wait: a signal runs the trap at once
fi

PYTHON=python3
[ -x .venv/bin/python ] && PYTHON=.venv/bin/python
"$PYTHON" -m pytest -m postgres -p no:cacheprovider "$@"
