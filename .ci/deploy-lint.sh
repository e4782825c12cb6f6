#!/usr/bin/env bash
# The deployment files as the tools that consume them would read them, offline: hadolint on the Dockerfile
# (any finding fails, info included), every Kubernetes manifest against the API schemas (strict: unknown
# fields fail) and the Compose file against the Compose specification's schema.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="$(.ci/tools.sh)"
echo "deploy-lint: hadolint deploy/Dockerfile"
"$tools/hadolint" --failure-threshold info deploy/Dockerfile
echo "deploy-lint: kubernetes-validate deploy/k8s/ and the example Secret"
"$tools/kubernetes-validate" --strict --quiet deploy/k8s/*.yaml deploy/k8s-secret.example.yaml
echo "deploy-lint: compose-spec schema on deploy/docker-compose.yml"
"$tools/check-jsonschema" --builtin-schema vendor.compose-spec deploy/docker-compose.yml
