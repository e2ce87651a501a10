"""deploy/k8s, checked without a cluster (none runs here): the base and every overlay rendered with `kubectl
kustomize` (Debian's kubernetes-client, which .ci/run installs), every object validated offline against the
Kubernetes 1.30 schemas (kubernetes-validate), and their ports, probes, variables, sizes and grace period checked
against `vnpu serve` and its settings. tests/test_k8s_run.py runs what they describe."""

from __future__ import annotations

import copy
import json
import math
import re
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from client.routing import parse_devices
from server.api.settings import Settings
from server.cli import build_parser
from server.k8s import statefulset_devices
from tests.test_deploy import CLIENT_VARIABLES, SETTING_VARIABLES, instruction

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "k8s"
KUSTOMIZATIONS = ("base", "overlays/dev", "overlays/production")
SCHEMAS = "1.30"
PROCESS_MEMORY = 512 << 20  # what the manifests add for the Python process beside the arenas and /dev/shm
GRACE_MARGIN = 5  # seconds the manifests allow beyond the daemon's worst shutdown (2 x VNPU_SHUTDOWN_DEADLINE)
_QUANTITY = {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "M": 10**6, "G": 10**9}


def quantity(text: str) -> int:
    """A Kubernetes memory quantity ('3584Mi', '1Gi', '512M') in bytes."""
    match = re.fullmatch(r"(\d+)([KMGT]i|[kMG]|)", str(text))
    assert match, f"not a memory quantity this test reads: {text!r}"
    return int(match.group(1)) * _QUANTITY[match.group(2)]


@cache
def rendered(kustomization: str) -> tuple[dict[str, Any], ...]:
    """The objects `kubectl kustomize` makes of deploy/k8s/<kustomization>."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl is missing: install Debian's kubernetes-client (.ci/run does)")
    done = subprocess.run([kubectl, "kustomize", str(K8S / kustomization)], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return tuple(yaml.safe_load_all(done.stdout))


def objects(kustomization: str) -> dict[str, dict[str, Any]]:
    """Its objects by kind (each kind appears once)."""
    found = rendered(kustomization)
    by_kind = {o["kind"]: copy.deepcopy(o) for o in found}
    assert len(by_kind) == len(found), [o["kind"] for o in found]
    return by_kind


def job() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((K8S / "job-example.yaml").read_text())
    return data


def pod(kustomization: str) -> dict[str, Any]:
    spec: dict[str, Any] = objects(kustomization)["StatefulSet"]["spec"]["template"]
    return spec


def daemon_container(kustomization: str) -> dict[str, Any]:
    (container,) = pod(kustomization)["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def volume(kustomization: str, name: str) -> dict[str, Any]:
    (found,) = [v for v in pod(kustomization)["spec"]["volumes"] if v["name"] == name]
    assert isinstance(found, dict)
    return found


def pod_variables(kustomization: str, tokens_file: Path, operator_token: str = "operator-secret") -> dict[str, str]:
    """The daemon's VNPU_* variables as the pod gets them: the ConfigMap, then the container's own, with the
    Secret's values (its tokens file at a local path instead of the Secret's mount)."""
    env = dict(objects(kustomization)["ConfigMap"]["data"])
    secret = {"operator-token": operator_token}
    for item in daemon_container(kustomization)["env"]:
        env[item["name"]] = item["value"] if "value" in item else secret[item["valueFrom"]["secretKeyRef"]["key"]]
    return env | {"VNPU_TOKENS_FILE": str(tokens_file)}


def settings_of(kustomization: str, tokens_file: Path) -> Settings:
    return Settings.from_env(pod_variables(kustomization, tokens_file))


@pytest.fixture
def tokens_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens"
    path.write_text("jobs tenant-secret\n")
    return path


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_every_object_is_valid_kubernetes(kustomization: str) -> None:
    kinds = ["ConfigMap", "Service", "StatefulSet", "PodDisruptionBudget", "NetworkPolicy"]
    if kustomization == "overlays/production":
        kinds.append("ServiceMonitor")  # a CRD: not in the schemas, checked by test_the_service_monitor...
    assert sorted(objects(kustomization)) == sorted(kinds)
    for obj in rendered(kustomization):
        if obj["kind"] != "ServiceMonitor":
            kubernetes_validate.validate(obj, SCHEMAS, strict=True)
    if kustomization != "base":
        assert {o["metadata"].get("namespace") for o in rendered(kustomization)} == {"vnpu"}


def test_the_example_job_is_valid_kubernetes() -> None:
    kubernetes_validate.validate(job(), SCHEMAS, strict=True)


def test_the_validation_catches_mistakes() -> None:
    """The check above can fail: a misspelt field and a wrong type are both refused."""
    statefulset = objects("base")["StatefulSet"]
    statefulset["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {"httpGet": {"path": "/healthz"}}
    with pytest.raises(kubernetes_validate.ValidationError, match="readinesProbe"):
        kubernetes_validate.validate(statefulset, SCHEMAS, strict=True)
    statefulset = objects("base")["StatefulSet"]
    statefulset["spec"]["replicas"] = "4"
    with pytest.raises(kubernetes_validate.ValidationError, match="'4' is not of type 'integer'"):
        kubernetes_validate.validate(statefulset, SCHEMAS, strict=True)


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_command_ports_probes_and_variables_agree_with_serve(kustomization: str, tokens_file: Path) -> None:
    container, found = daemon_container(kustomization), objects(kustomization)
    assert container["command"] == json.loads(instruction("ENTRYPOINT")[0]) == ["vnpu", "serve"]
    assert build_parser().parse_args(container["command"][1:] + container.get("args", [])).command == "serve"
    config = found["ConfigMap"]["data"]
    names = set(config) | {e["name"] for e in container["env"]}
    assert names <= SETTING_VARIABLES, names - SETTING_VARIABLES
    assert not {"VNPU_TOKEN", "VNPU_OPERATOR_TOKEN"} & set(config)  # secrets come from the Secret only
    (operator,) = [e for e in container["env"] if e["name"] == "VNPU_OPERATOR_TOKEN"]
    assert operator["valueFrom"]["secretKeyRef"] == {"name": "vnpu-tokens", "key": "operator-token"}
    (tokens_env,) = [e["value"] for e in container["env"] if e["name"] == "VNPU_TOKENS_FILE"]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "tokens"]
    (item,) = volume(kustomization, "tokens")["secret"]["items"]
    assert tokens_env == f"{mount['mountPath']}/{item['path']}" and item["key"] == "tokens"
    assert volume(kustomization, "tokens")["secret"]["secretName"] == "vnpu-tokens"

    settings = settings_of(kustomization, tokens_file)
    assert settings.host == "0.0.0.0" and settings.tokens == {"tenant-secret": "jobs"}
    (port,) = container["ports"]
    assert port == {"name": "http", "containerPort": settings.port}
    (service_port,) = found["Service"]["spec"]["ports"]
    assert service_port == {"name": "http", "port": settings.port, "targetPort": "http"}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}, probe
    annotations = pod(kustomization)["metadata"]["annotations"]
    assert annotations == {"prometheus.io/scrape": "true", "prometheus.io/port": str(settings.port),
                           "prometheus.io/path": "/metrics"}  # fmt: skip


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_stable_names_and_selectors(kustomization: str) -> None:
    found = objects(kustomization)
    labels = pod(kustomization)["metadata"]["labels"]
    statefulset, service = found["StatefulSet"], found["Service"]
    assert statefulset["spec"]["serviceName"] == service["metadata"]["name"] == statefulset["metadata"]["name"]
    assert service["spec"]["clusterIP"] == "None"  # headless: one DNS name per pod
    assert service["spec"]["selector"] == labels == statefulset["spec"]["selector"]["matchLabels"]
    assert found["PodDisruptionBudget"]["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": labels}}
    policy = found["NetworkPolicy"]["spec"]
    assert policy["podSelector"] == {"matchLabels": labels} and policy["policyTypes"] == ["Ingress"]
    (rule,) = policy["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": "http"}]
    admitted = [peer["podSelector"]["matchLabels"] for peer in rule["from"]]
    assert admitted == [{"vnpu.io/client": "true"}, {"app.kubernetes.io/name": "prometheus"}]


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_memory_is_sized_from_the_settings(kustomization: str, tokens_file: Path) -> None:
    """request = limit = devices x memory (arenas) + /dev/shm (pinned host memory, a tmpfs) + the process."""
    settings, resources = settings_of(kustomization, tokens_file), daemon_container(kustomization)["resources"]
    shm = volume(kustomization, "shm")["emptyDir"]
    assert shm["medium"] == "Memory"
    assert {"name": "shm", "mountPath": "/dev/shm"} in daemon_container(kustomization)["volumeMounts"]
    wanted = settings.devices * settings.memory + quantity(shm["sizeLimit"]) + PROCESS_MEMORY
    assert quantity(resources["requests"]["memory"]) == quantity(resources["limits"]["memory"]) == wanted


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_the_grace_period_covers_the_shutdown_deadline(kustomization: str, tokens_file: Path) -> None:
    """SIGTERM: connections get VNPU_SHUTDOWN_DEADLINE s, then queued work as long again (test_k8s_run.py)."""
    deadline = settings_of(kustomization, tokens_file).shutdown_deadline
    grace = pod(kustomization)["spec"]["terminationGracePeriodSeconds"]
    assert grace == 2 * math.ceil(deadline) + GRACE_MARGIN


@pytest.mark.parametrize("kustomization", KUSTOMIZATIONS)
def test_the_daemon_runs_as_the_images_non_root_user(kustomization: str) -> None:
    spec, container = pod(kustomization)["spec"], daemon_container(kustomization)
    (useradd,) = [shlex.split(run) for run in instruction("RUN") if run.startswith("useradd")]
    uid = int(useradd[useradd.index("--uid") + 1])
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] == uid
    assert spec["automountServiceAccountToken"] is False and spec["enableServiceLinks"] is False
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                            "capabilities": {"drop": ["ALL"]}}  # fmt: skip


def test_the_service_monitor_scrapes_with_the_operator_token() -> None:
    found = objects("overlays/production")
    monitor, service = found["ServiceMonitor"], found["Service"]
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["selector"] == {"matchLabels": service["metadata"]["labels"]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]} and endpoint["path"] == "/metrics"
    (operator,) = [e for e in daemon_container("overlays/production")["env"] if e["name"] == "VNPU_OPERATOR_TOKEN"]
    assert endpoint["authorization"] == {"type": "Bearer", "credentials": operator["valueFrom"]["secretKeyRef"]}


def test_the_example_job_names_the_production_devices(tokens_file: Path) -> None:
    production = objects("overlays/production")
    settings = settings_of("overlays/production", tokens_file)
    replicas, namespace = production["StatefulSet"]["spec"]["replicas"], production["Service"]["metadata"]["namespace"]
    (container,) = job()["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert set(env) <= CLIENT_VARIABLES and env["VNPU_HOST_MEMORY"]["value"] == "remote"
    assert env["VNPU_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "vnpu-client", "key": "token"}
    expected = statefulset_devices("vnpu", replicas, settings.devices, namespace, settings.port)
    assert parse_devices(env["VNPU_DEVICES"]["value"]) == parse_devices(expected)
    assert len(parse_devices(expected)) == 4
    admitted = production["NetworkPolicy"]["spec"]["ingress"][0]["from"][0]["podSelector"]["matchLabels"]
    assert admitted.items() <= job()["spec"]["template"]["metadata"]["labels"].items()
