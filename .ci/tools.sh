#!/usr/bin/env bash
# Prints the bin folder of a virtual environment holding the tools pinned in .ci/tools.txt, creating it
# (or bringing it up to date) first. Kept outside the checkout so that no project file depends on it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${REQGATE_TOOLS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/reqgate-tools}"
stamp="$venv/.tools.txt"
if ! cmp -s "$here/tools.txt" "$stamp" 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q -r "$here/tools.txt" >&2
    cp "$here/tools.txt" "$stamp"
fi
echo "$venv/bin"
