"""The deployment files say what the README promises: `kubectl apply -f deploy/k8s/` applies no Secret, every
pod runs as a non-root user without privileges, a StatefulSet is governed by a headless Service, and the
image runs as a numeric user with its dependencies installed from the lock file before the code.
(.ci/deploy-lint.sh checks the same files against the Kubernetes and Compose schemas and with hadolint.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def applied() -> list[dict[str, Any]]:
    """What `kubectl apply -f deploy/k8s/` applies: every document of every .yaml/.yml/.json file there."""
    files = sorted(p for p in K8S.iterdir() if p.suffix in (".yaml", ".yml", ".json"))
    return [doc for path in files for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def pod_specs() -> list[tuple[str, dict[str, Any]]]:
    return [(doc["metadata"]["name"], doc["spec"]["template"]["spec"]) for doc in applied()
            if doc["kind"] in ("Deployment", "StatefulSet")]


def test_applying_the_folder_applies_no_secret() -> None:
    kinds = {doc["kind"] for doc in applied()}
    assert "Secret" not in kinds and {"Deployment", "StatefulSet", "Service"} <= kinds


@pytest.mark.parametrize(("name", "spec"), pod_specs(), ids=[name for name, _ in pod_specs()])
def test_pods_run_unprivileged(name: str, spec: dict[str, Any]) -> None:
    pod = spec["securityContext"]
    assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0
    mounted = {volume["name"] for volume in spec.get("volumes", [])}
    for container in spec["containers"]:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"]["drop"] == ["ALL"]
        assert context["readOnlyRootFilesystem"] is True
        # A read-only root needs somewhere to write: /tmp at least, from a volume the pod declares.
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
        assert "/tmp" in mounts and set(mounts.values()) <= mounted | {
            t["metadata"]["name"] for doc in applied() if doc["metadata"]["name"] == name
            for t in doc["spec"].get("volumeClaimTemplates", [])}


def test_reqgate_pods_can_write_where_the_image_writes() -> None:
    data_dir = re.search(r"REQGATE_DATA_DIR=(\S+)", DOCKERFILE.read_text()).group(1)
    for name, spec in pod_specs():
        if name.startswith("reqgate-") and name != "reqgate-postgres":
            (container,) = spec["containers"]
            assert data_dir in {m["mountPath"] for m in container["volumeMounts"]}, name
            assert spec["securityContext"]["runAsUser"] == image_user()


def test_statefulsets_are_governed_by_headless_services() -> None:
    services = {doc["metadata"]["name"]: doc["spec"] for doc in applied() if doc["kind"] == "Service"}
    for doc in applied():
        if doc["kind"] == "StatefulSet":
            governing = services[doc["spec"]["serviceName"]]
            assert governing.get("clusterIP") == "None", doc["metadata"]["name"]
            assert governing["selector"] == doc["spec"]["selector"]["matchLabels"]


def image_user() -> int:
    users = re.findall(r"^USER\s+(\S+)", DOCKERFILE.read_text(), re.MULTILINE)
    assert users, "the image must not run as root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit(), "a numeric USER, so that runAsNonRoot can check it"
    return int(uid)


def test_image_installs_the_lock_file_before_the_code_and_runs_as_a_numeric_user() -> None:
    final = DOCKERFILE.read_text().rsplit("\nFROM ", 1)[1]
    lock = final.index("requirements.lock")
    wheel = final.index("COPY --from=build")
    assert lock < wheel and "--require-hashes" in final[lock:wheel]
    assert image_user() >= 1000
    (healthcheck,) = re.findall(r"^HEALTHCHECK .*?CMD (.*)$", final.replace("\\\n", " "), re.MULTILINE)
    assert healthcheck.strip().startswith("["), "exec form: no shell in between"
