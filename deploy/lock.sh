#!/usr/bin/env bash
# Regenerates deploy/requirements.lock, the pinned and hashed runtime dependencies the image installs,
# from pyproject.toml's [project.dependencies]. Run it after changing a dependency:
#
#   deploy/lock.sh              # keeps the pins already in the lock file, adds or drops what changed
#   deploy/lock.sh --upgrade    # moves every pin to the newest release the ranges allow
#
# uv resolves for the image's interpreter (CPython 3.11 on x86_64 glibc Linux) whatever machine runs this,
# so the result depends only on pyproject.toml, the previous lock file and the package index.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="$(.ci/tools.sh)"
"$tools/uv" pip compile pyproject.toml \
    --python-version 3.11 --python-platform x86_64-manylinux_2_28 \
    --generate-hashes --no-config --quiet \
    --custom-compile-command "deploy/lock.sh" \
    --output-file deploy/requirements.lock "$@"
