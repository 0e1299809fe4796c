"""The deployment manifests in deploy/ are valid and say what serving a class needs.

Offline: deploy/compose.yaml is checked against the Compose specification's JSON schema, kept here as
tests/serve/compose-spec.json (schema/compose-spec.json of github.com/compose-spec/compose-spec, main
at 170098b, 2026-06-23, file last changed 2025-10-28; Apache-2.0; copied 2026-12-02). deploy/k8s/*.yaml
are checked with kubernetes-validate, which ships the Kubernetes API schemas (strict: unknown fields fail).
Each check is also run on a deliberately broken copy, which it must reject.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE_SCHEMA = Path(__file__).with_name("compose-spec.json")
#: The Kubernetes version the manifests are checked against (a release still widely run).
K8S_VERSION = "1.30"
HEALTH = "/_stcore/health"
APP_PORT = 8501
K8S_FILES = ("deployment.yaml", "service.yaml", "ingress.yaml", "hpa.yaml")
K8S_FILES += ("redis-deployment.yaml", "redis-service.yaml")  # the class answers' store (issue 26)
#: The image's one name: the README builds it, compose builds and runs it, Kubernetes runs it.
IMAGE = "attention-lesson"


# ---------------------------------------------------------------- Compose


def _interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's `${VAR}` / `${VAR:-default}` / `${VAR-default}` substitution, applied to every string."""
    if isinstance(value, dict):
        return {k: _interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def sub(m: re.Match[str]) -> str:
        name, op, default = m.group(1), m.group(2), m.group(3) or ""
        if op == ":-":
            return env.get(name) or default
        if op == "-":
            return env.get(name, default)
        return env.get(name, "")

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}", sub, value)


def _compose_errors(doc: dict) -> list[str]:
    # The file says draft-07 (as "https://json-schema.org/draft-07/schema", a URI jsonschema does not map).
    schema = json.loads(COMPOSE_SCHEMA.read_text())
    validator = jsonschema.Draft7Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def _replicas(doc: dict) -> int:
    """The app's replica count as Compose reads it: an integer, after interpolation."""
    value = doc["services"]["app"]["deploy"]["replicas"]
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"replicas must be an integer, not {value!r}")
    return int(value)  # ValueError for "two"


@pytest.fixture(scope="module")
def compose() -> dict:
    return _interpolate(yaml.safe_load((DEPLOY / "compose.yaml").read_text()), env={})


def test_compose_schema_is_the_spec():
    schema = json.loads(COMPOSE_SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    assert schema["$id"] == "compose_spec.json"
    assert "services" in schema["properties"]


def test_compose_valid(compose):
    assert _compose_errors(compose) == []
    # Uninterpolated too: the schema admits `${...}` strings where Compose interpolates.
    assert _compose_errors(yaml.safe_load((DEPLOY / "compose.yaml").read_text())) == []


def test_compose_replicas_default_and_override():
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert _replicas(_interpolate(raw, env={})) == 2
    assert _replicas(_interpolate(raw, env={"REPLICAS": "5"})) == 5
    assert _replicas(_interpolate(raw, env={"REPLICAS": ""})) == 2  # `:-` also covers empty


@pytest.mark.parametrize(
    ("path", "bad"),
    [
        (("services", "app", "healthcheck", "intervall"), "15s"),  # misspelt key
        (("services", "proxy", "depends_on", "app", "condition"), "service_ready"),  # not in the enum
        (("services", "proxy", "ports"), "8080:8080"),  # a string, not a list
        (("services", "app", "deploy", "replicas"), ["two"]),
    ],
)
def test_compose_schema_rejects_broken_copy(compose, path, bad):
    broken = copy.deepcopy(compose)
    node = broken
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = bad
    assert _compose_errors(broken), f"schema accepted {path} = {bad!r}"


def test_compose_replicas_must_be_a_number(compose):
    # The schema takes any string for replicas (it may be `${VAR}`); Compose rejects "two" when it reads it.
    broken = copy.deepcopy(compose)
    broken["services"]["app"]["deploy"]["replicas"] = "two"
    with pytest.raises(ValueError, match="two"):
        _replicas(broken)


def test_compose_app(compose):
    app = compose["services"]["app"]
    assert app["build"]["context"] == ".."
    assert (DEPLOY / app["build"]["context"] / app["build"].get("dockerfile", "Dockerfile")).is_file()
    assert "ports" not in app  # only the proxy is published
    assert app["restart"] == "unless-stopped"
    test = app["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python", "-c"]  # the slim image has no curl
    assert f"http://127.0.0.1:{APP_PORT}{HEALTH}" in test[3]
    compile(test[3], "healthcheck", "exec")  # the one-liner is valid Python
    assert f"EXPOSE {APP_PORT}" in (ROOT / "Dockerfile").read_text()


def _check_proxy(compose: dict) -> None:
    proxy = compose["services"]["proxy"]
    assert re.fullmatch(r"haproxy:\d+\.\d+(\.\d+)?", proxy["image"])  # pinned, not :latest
    assert proxy["ports"] == ["8080:8080"]
    mounts = {}
    for volume in proxy["volumes"]:
        source, target, mode = volume.split(":")
        mounts[source] = target
        assert mode == "ro"
    assert mounts.get("./haproxy.cfg") == "/usr/local/etc/haproxy/haproxy.cfg"
    assert mounts.get("./haproxy.compose.cfg") == "/usr/local/etc/haproxy/haproxy.compose.cfg"
    command = proxy["command"]
    command = command.split() if isinstance(command, str) else command
    # Both files, shared config first: the compose one continues its last section.
    assert command == ["haproxy", "-f", mounts["./haproxy.cfg"], "-f", mounts["./haproxy.compose.cfg"]]
    assert proxy["depends_on"]["app"]["condition"] == "service_healthy"
    assert proxy["restart"]


def test_compose_proxy(compose):
    _check_proxy(compose)
    for source in ("./haproxy.cfg", "./haproxy.compose.cfg"):
        broken = copy.deepcopy(compose)
        broken["services"]["proxy"]["volumes"] = [
            v for v in broken["services"]["proxy"]["volumes"] if not v.startswith(source + ":")
        ]
        with pytest.raises(AssertionError):
            _check_proxy(broken)


def test_haproxy_compose_cfg():
    lines = (DEPLOY / "haproxy.compose.cfg").read_text().splitlines()
    assert lines[0].startswith("#")
    # HAProxy ends a section at the end of its file: this one opens the backend that haproxy.cfg's
    # defaults configure, and lists the replicas Docker's DNS finds.
    assert lines[1] == "backend streamlit"
    assert lines[2].split()[:3] == ["server-template", "app", "1-8"]
    assert f"app:{APP_PORT}" in lines[2]
    assert "resolvers docker" in lines[2]
    assert lines[3] == "resolvers docker"
    assert "nameserver dns1 127.0.0.11:53" in lines[4]  # Docker's embedded DNS


def test_haproxy_compose_cfg_is_valid(haproxy):
    # The compose proxy's two files, read as compose reads them (haproxy.cfg first), are a valid
    # configuration for the HAProxy `make serve` runs (Debian 12: 2.6); compose.yaml says so.
    check = subprocess.run(
        [haproxy, "-c", "-f", str(DEPLOY / "haproxy.cfg"), "-f", str(DEPLOY / "haproxy.compose.cfg")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "WARNING" not in check.stdout + check.stderr


def test_haproxy_cfg_leaves_the_backend_to_the_servers_file():
    sections = [
        line.strip()
        for line in (DEPLOY / "haproxy.cfg").read_text().splitlines()
        if line and not line[0].isspace() and not line.startswith("#")
    ]
    assert "defaults" in sections
    assert not any(s.startswith("backend") for s in sections), "haproxy.compose.cfg opens the backend"


# ---------------------------------------------------------------- Kubernetes


def _k8s(name: str) -> dict:
    return yaml.safe_load((K8S / name).read_text())


def _container(deployment: dict) -> dict:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


@pytest.mark.parametrize("name", K8S_FILES)
def test_k8s_valid(name):
    kubernetes_validate.validate(_k8s(name), K8S_VERSION, strict=True)


def _break_replicas(d: dict) -> None:
    d["spec"]["replicas"] = "two"


def _break_probe_port(d: dict) -> None:
    del _container(d)["readinessProbe"]["httpGet"]["port"]


def _break_unknown_field(d: dict) -> None:
    _container(d)["livenessProbe"]["httpGet"]["pathh"] = HEALTH


def _break_service_port(d: dict) -> None:
    d["spec"]["ports"][0]["port"] = "eighty"


def _break_hpa_min(d: dict) -> None:
    d["spec"]["minReplicas"] = "2"


@pytest.mark.parametrize(
    ("name", "breaker"),
    [
        ("deployment.yaml", _break_replicas),
        ("deployment.yaml", _break_probe_port),
        ("deployment.yaml", _break_unknown_field),
        ("service.yaml", _break_service_port),
        ("hpa.yaml", _break_hpa_min),
    ],
)
def test_k8s_rejects_broken_copy(name, breaker):
    broken = _k8s(name)
    breaker(broken)
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSION, strict=True)


def test_kustomization_lists_every_manifest():
    kustomization = _k8s("kustomization.yaml")
    assert kustomization["kind"] == "Kustomization"
    assert sorted(kustomization["resources"]) == sorted(K8S_FILES)
    on_disk = {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert on_disk == set(K8S_FILES)


def _check_deployment(deployment: dict) -> None:
    assert deployment["metadata"]["name"] == "attention-app"
    assert deployment["spec"]["replicas"] == 2
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = _container(deployment)
    assert container["image"] == f"{IMAGE}:latest"
    ports = {p.get("name", p["containerPort"]): p["containerPort"] for p in container["ports"]}
    assert APP_PORT in ports.values()
    for probe in ("readinessProbe", "livenessProbe"):
        get = container[probe]["httpGet"]
        assert get.get("path") == HEALTH, probe
        assert ports.get(get["port"], get["port"]) == APP_PORT, probe
    assert container["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "1", "memory": "1536Mi"},
    }
    selector = deployment["spec"]["selector"]["matchLabels"]
    assert selector.items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


def test_deployment():
    _check_deployment(_k8s("deployment.yaml"))


@pytest.mark.parametrize("probe", ["readinessProbe", "livenessProbe"])
def test_probe_without_health_path_is_caught(probe):
    # A probe with no path is valid Kubernetes (it GETs /): the schema passes it, _check_deployment must not.
    deployment = _k8s("deployment.yaml")
    del _container(deployment)[probe]["httpGet"]["path"]
    kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)
    with pytest.raises(AssertionError, match=probe):
        _check_deployment(deployment)


def test_service_routes_to_the_pods():
    service, deployment = _k8s("service.yaml"), _k8s("deployment.yaml")
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()
    (port,) = service["spec"]["ports"]
    assert (port["port"], port["targetPort"]) == (80, APP_PORT)
    assert service["spec"]["sessionAffinity"] == "ClientIP"


NGINX = "nginx.ingress.kubernetes.io/"


def _check_ingress(ingress: dict, service: dict) -> None:
    notes = ingress["metadata"].get("annotations", {})
    assert notes.get(NGINX + "affinity") == "cookie"
    assert notes.get(NGINX + "affinity-mode") == "persistent"
    assert notes.get(NGINX + "session-cookie-name")
    assert int(notes.get(NGINX + "proxy-read-timeout", 60)) >= 3600  # websockets idle between reruns
    assert int(notes.get(NGINX + "proxy-send-timeout", 60)) >= 3600
    upload_mb = int(_production_env()["STREAMLIT_SERVER_MAX_UPLOAD_SIZE"])
    assert (
        notes.get(NGINX + "proxy-body-size") == f"{upload_mb + 1}m"
    )  # the upload and its multipart envelope
    assert ingress["spec"]["ingressClassName"] == "nginx"
    backends = [p["backend"]["service"] for r in ingress["spec"]["rules"] for p in r["http"]["paths"]]
    assert backends
    service_ports = {key for p in service["spec"]["ports"] for key in (p.get("name"), p["port"])}
    for backend in backends:
        assert backend["name"] == service["metadata"]["name"]
        assert backend["port"].get("name", backend["port"].get("number")) in service_ports


def test_ingress_sticky_and_websocket_friendly():
    _check_ingress(_k8s("ingress.yaml"), _k8s("service.yaml"))


STICKY_AND_WEBSOCKET = (
    "affinity",
    "affinity-mode",
    "session-cookie-name",
    "proxy-read-timeout",
    "proxy-send-timeout",
)


@pytest.mark.parametrize("annotation", STICKY_AND_WEBSOCKET)
def test_ingress_without_annotation_is_caught(annotation):
    ingress = _k8s("ingress.yaml")
    del ingress["metadata"]["annotations"][NGINX + annotation]
    kubernetes_validate.validate(ingress, K8S_VERSION, strict=True)  # still valid Kubernetes
    with pytest.raises(AssertionError):
        _check_ingress(ingress, _k8s("service.yaml"))


def _check_hpa(hpa: dict, deployment: dict) -> None:
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"]) == (deployment["apiVersion"], deployment["kind"])
    assert target["name"] == deployment["metadata"]["name"]
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 10)
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"] == {"type": "Utilization", "averageUtilization": 70}
    assert hpa["spec"]["minReplicas"] <= deployment["spec"]["replicas"] <= hpa["spec"]["maxReplicas"]


def test_hpa_targets_the_deployment():
    hpa, deployment = _k8s("hpa.yaml"), _k8s("deployment.yaml")
    _check_hpa(hpa, deployment)
    hpa["spec"]["scaleTargetRef"]["name"] = "attention"
    kubernetes_validate.validate(hpa, K8S_VERSION, strict=True)
    with pytest.raises(AssertionError):
        _check_hpa(hpa, deployment)


def _production_env() -> dict[str, str]:
    """deploy/streamlit-production.toml as Streamlit's environment variables (STREAMLIT_SECTION_OPTION)."""
    import tomllib

    settings = tomllib.loads((DEPLOY / "streamlit-production.toml").read_text())
    env = {}
    for section, options in settings.items():
        if section == "logger":
            continue  # log level and banner: not a serving setting
        for option, value in options.items():
            name = "STREAMLIT_" + section.upper() + "_" + re.sub(r"(?<!^)(?=[A-Z])", "_", option).upper()
            env[name] = str(value).lower() if isinstance(value, bool) else str(value)
    return env


def test_containers_run_with_the_production_settings(compose):
    wanted = _production_env()
    assert wanted["STREAMLIT_CLIENT_SHOW_ERROR_DETAILS"] == "none"
    env = dict(compose["services"]["app"]["environment"])
    env.pop("REDIS_URL")  # the class answers' store (test_*_redis below)
    assert env == wanted
    container = _container(_k8s("deployment.yaml"))
    env = {e["name"]: e["value"] for e in container["env"]}
    env.pop("REDIS_URL")
    assert env == wanted


# ---------------------------------------------------------------- the class answers' Redis (issue 26)

REDIS_PORT = 6379


def _redis_url_target(url: str) -> tuple[str, int]:
    """(host, port) of ``redis://host:port/0``."""
    m = re.fullmatch(r"redis://([a-z0-9-]+):(\d+)/0", url)
    assert m, f"not a redis://host:port/0 URL: {url!r}"
    return m.group(1), int(m.group(2))


def _check_redis_args(args: list[str]) -> None:
    """Nothing on disk (the pages refill a restarted Redis), memory bounded, only expiring keys evicted."""
    joined = " ".join(a if a else "''" for a in args)
    assert "--save ''" in joined
    assert "--appendonly no" in joined
    assert "--maxmemory-policy volatile-ttl" in joined
    assert "--maxmemory" in args


def _check_compose_redis(compose: dict) -> None:
    services = compose["services"]
    host, port = _redis_url_target(services["app"]["environment"]["REDIS_URL"])
    assert host in services, f"REDIS_URL names {host!r}, which is no service"
    redis = services[host]
    assert re.fullmatch(r"redis:\d+\.\d+\.\d+(-alpine)?", redis["image"])  # pinned, not :latest
    assert str(port) in [str(p) for p in redis["expose"]]
    assert "ports" not in redis  # only the app reaches it
    command = redis["command"]
    assert command[0] == "redis-server"
    _check_redis_args(command[1:])
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert services["app"]["depends_on"][host]["condition"] == "service_healthy"


def test_compose_redis(compose):
    _check_compose_redis(compose)
    broken = copy.deepcopy(compose)
    broken["services"]["app"]["environment"]["REDIS_URL"] = "redis://cache:6379/0"
    with pytest.raises(AssertionError, match="no service"):
        _check_compose_redis(broken)
    broken = copy.deepcopy(compose)
    broken["services"]["redis"]["image"] = "redis:latest"
    with pytest.raises(AssertionError):
        _check_compose_redis(broken)


def _check_k8s_redis(deployment: dict, redis: dict, service: dict) -> None:
    env = {e["name"]: e["value"] for e in _container(deployment)["env"]}
    host, port = _redis_url_target(env["REDIS_URL"])
    assert host == service["metadata"]["name"], f"REDIS_URL names {host!r}, not the Service"
    (service_port,) = service["spec"]["ports"]
    assert service_port["port"] == port
    assert service["spec"]["selector"].items() <= redis["spec"]["template"]["metadata"]["labels"].items()
    container = _container(redis)
    named = {p.get("name"): p["containerPort"] for p in container["ports"]}
    assert named.get(service_port["targetPort"], service_port["targetPort"]) == REDIS_PORT
    assert re.fullmatch(r"redis:\d+\.\d+\.\d+(-alpine)?", container["image"])
    _check_redis_args(container["args"])
    assert redis["spec"]["replicas"] == 1
    assert redis["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True
    assert container["resources"]["limits"]["memory"]


def test_k8s_redis():
    deployment, service = _k8s("deployment.yaml"), _k8s("redis-service.yaml")
    redis = _k8s("redis-deployment.yaml")
    _check_k8s_redis(deployment, redis, service)
    wrong = copy.deepcopy(deployment)
    for e in _container(wrong)["env"]:
        if e["name"] == "REDIS_URL":
            e["value"] = "redis://redis:6379/0"
    kubernetes_validate.validate(wrong, K8S_VERSION, strict=True)  # valid Kubernetes, wrong address
    with pytest.raises(AssertionError, match="not the Service"):
        _check_k8s_redis(wrong, redis, service)
    persistent = copy.deepcopy(redis)
    _container(persistent)["args"] = ["--appendonly", "yes"]
    with pytest.raises(AssertionError):
        _check_k8s_redis(deployment, persistent, service)


# ---------------------------------------------------------------- one image name


def _image_name(reference: str) -> str:
    """The name in an image reference: ``reg.example:5000/attention-lesson:1.0`` -> ``attention-lesson``."""
    return reference.split("@")[0].rsplit("/", 1)[-1].split(":")[0]


def _docker_run_image(line: str) -> str:
    """The image of a ``docker run ...`` command line (the first word that is no option or option value)."""
    words = line.split("docker run", 1)[1].split("#")[0].split()
    takes_value = {"-p", "--publish", "-e", "--env", "--name", "-v", "--volume"}
    i = 0
    while words[i].startswith("-"):
        i += 2 if words[i] in takes_value else 1
    return words[i]


def _image_names(readme: str, dockerfile: str, compose: dict, deployment: dict, kustomization: dict) -> dict:
    """Where the image is named -> the set of names said there."""
    names = {
        "README docker build": re.findall(r"docker build -t (\S+)", readme),
        "README docker run": [_docker_run_image(x) for x in readme.splitlines() if "docker run" in x],
        "README docker tag/push": re.findall(r"docker (?:tag|push) (\S+)(?: (\S+))?", readme),
        "README cluster loads": re.findall(r"(?:docker-image|image load) (\S+?)`", readme),
        "README kustomize": re.findall(r"set image (\S+)=(\S+)\)?", readme),
        "Dockerfile": re.findall(r"docker build -t (\S+)", dockerfile),
        "compose.yaml": [compose["services"]["app"]["image"]],
        "deployment.yaml": [_container(deployment)["image"]],
        "kustomization.yaml images": [entry["name"] for entry in kustomization.get("images", [])],
    }
    flat = {}
    for where, found in names.items():
        refs = [r for item in found for r in (item if isinstance(item, tuple) else (item,)) if r]
        flat[where] = {_image_name(r) for r in refs}
    return flat


def _check_one_image_name(names: dict) -> None:
    missing = [where for where, found in names.items() if not found]
    assert missing == [], f"no image named in {missing}"
    assert {where: found for where, found in names.items() if found != {IMAGE}} == {}


def _image_sources() -> tuple[str, str, dict, dict, dict]:
    compose = _interpolate(yaml.safe_load((DEPLOY / "compose.yaml").read_text()), env={})
    readme, dockerfile = (ROOT / "README.md").read_text(), (ROOT / "Dockerfile").read_text()
    return readme, dockerfile, compose, _k8s("deployment.yaml"), _k8s("kustomization.yaml")


def test_one_image_name_everywhere():
    _check_one_image_name(_image_names(*_image_sources()))
    assert _image_name("registry.example:5000/attention-lesson:1.0") == "attention-lesson"
    assert _docker_run_image("docker run --rm -p 8501:8501 attention-lesson   # open") == "attention-lesson"


def test_a_second_image_name_is_caught():
    readme, dockerfile, compose, deployment, kustomization = _image_sources()
    _container(deployment)["image"] = "attention-kernel-app:latest"  # the name it had before
    with pytest.raises(AssertionError, match=r"deployment\.yaml"):
        _check_one_image_name(_image_names(readme, dockerfile, compose, deployment, kustomization))
    del kustomization["images"]  # the override kustomize needs to reach the Deployment's image
    with pytest.raises(AssertionError, match="kustomization"):
        _check_one_image_name(
            _image_names(readme, dockerfile, compose, _k8s("deployment.yaml"), kustomization)
        )
