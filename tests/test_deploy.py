"""deploy/: the Dockerfile and Kubernetes manifests, checked against the Kubernetes schemas and
against trinogen itself (settings, console script, subcommands), without Docker or a cluster."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import shutil
import subprocess
import sys
import tomllib
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from trinogen.errors import ExitCode
from trinogen.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "kubernetes"
DOCKERFILE = DEPLOY / "Dockerfile"
# The Kubernetes version the manifests are validated for (CronJob timeZone, podFailurePolicy).
K8S_VERSION = "1.30"

# Environment variables that belong to other tools and are allowed in the workloads.
FOREIGN_ENV = {"GIT_SSH_COMMAND", "VAULT_ADDR", "VAULT_NAMESPACE", "VAULT_CACERT"}
# Names that carry credentials: their value must come from a Secret, never be literal.
SECRET_NAME = re.compile(r"URI|URL|PASSWORD|TOKEN|SECRET|KEY|CREDENTIAL", re.IGNORECASE)
SECRET_TEXT = [
    re.compile(r"://[^/\s:@]+:[^/\s@]+@"),  # user:password@ in a URL
    re.compile(r"PRIVATE KEY"),
    re.compile(r"\bhvs\.[A-Za-z0-9]{10,}"),  # Vault service token
]
PLACEHOLDER = "CHANGE-ME"


# --- helpers -------------------------------------------------------------------------------------


@functools.cache
def load_docs(path: Path) -> list[dict[str, Any]]:
    """Every non-empty YAML document in a file (parsed once; tests only read the result)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader) if d]


MANIFEST_FILES = sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")
APPLIED_FILES = [p for p in MANIFEST_FILES if ".example." not in p.name]


def manifests(files: list[Path] = APPLIED_FILES) -> list[dict[str, Any]]:
    return [doc for path in files for doc in load_docs(path)]


def one(kind: str) -> dict[str, Any]:
    found = [d for d in manifests() if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind} in {K8S}, found {len(found)}"
    return found[0]


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    if workload["kind"] == "CronJob":
        return workload["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return workload["spec"]["template"]["spec"]


def container(workload: dict[str, Any]) -> dict[str, Any]:
    containers = pod_spec(workload)["containers"]
    assert len(containers) == 1, "one trinogen container per pod"
    return containers[0]


def env_of(workload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in container(workload).get("env", [])}


def literal_env(workload: dict[str, Any]) -> dict[str, str]:
    return {k: e["value"] for k, e in env_of(workload).items() if "value" in e}


WORKLOADS = ["Deployment", "CronJob"]


def strings(node: Any) -> Iterator[str]:
    """Every string (keys and values) anywhere in a parsed YAML tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)
    elif isinstance(node, str):
        yield node


def setting_env_vars() -> dict[str, tuple[str, str]]:
    """TRINOGEN_<SECTION>_<KEY> for every key of every settings section, from the dataclasses."""
    # the TYPE_CHECKING-only names of settings.types (loaded only when a settings file uses them)
    hints = typing.get_type_hints(Settings, localns={"Tenant": object, "RolloutSettings": object})
    out: dict[str, tuple[str, str]] = {}
    for section in dataclasses.fields(Settings):
        cls = hints[section.name]
        if dataclasses.is_dataclass(cls):
            for f in dataclasses.fields(cls):
                out[f"TRINOGEN_{section.name.upper()}_{f.name.upper()}"] = (section.name, f.name)
    return out


def dockerfile_stages(text: str) -> list[list[tuple[str, str]]]:
    """The Dockerfile as stages of (INSTRUCTION, arguments), continuations joined, comments gone."""
    instructions: list[tuple[str, str]] = []
    current = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue  # Docker drops comment lines, also inside a continuation
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        name, _, args = current.partition(" ")
        instructions.append((name.upper(), args.strip()))
        current = ""
    stages: list[list[tuple[str, str]]] = []
    for instr in instructions:
        if instr[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(instr)
    return stages


def final_stage() -> list[tuple[str, str]]:
    return dockerfile_stages(DOCKERFILE.read_text(encoding="utf-8"))[-1]


def instruction(stage: list[tuple[str, str]], name: str) -> str:
    found = [args for instr, args in stage if instr == name]
    assert found, f"{DOCKERFILE}: the final stage has no {name}"
    return found[-1]


def exec_form(stage: list[tuple[str, str]], name: str) -> list[str]:
    """ENTRYPOINT/CMD in exec (JSON) form; shell form would not forward SIGTERM to trinogen."""
    args = instruction(stage, name)
    value = json.loads(args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), args
    return value


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def cli_group() -> Any:
    import typer.main

    from trinogen.cli import app

    return typer.main.get_command(app)


# --- Kubernetes schemas --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def k8s_validate() -> Any:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    from kubernetes_validate.utils import all_versions

    if not any(v.startswith(K8S_VERSION + ".") for v in all_versions()):
        pytest.skip(f"kubernetes-validate {kubernetes_validate.__version__} bundles no offline "
                    f"schemas for Kubernetes {K8S_VERSION} (has: {sorted(set(all_versions()))})")
    return kubernetes_validate


@pytest.mark.parametrize("path", MANIFEST_FILES, ids=lambda p: p.name)
def test_manifest_validates_against_kubernetes_schema(path: Path, k8s_validate: Any) -> None:
    """Every resource in deploy/kubernetes is valid for Kubernetes 1.30 under strict schemas."""
    docs = load_docs(path)
    assert docs, f"{path} holds no resources"
    for doc in docs:
        try:
            k8s_validate.validate(doc, K8S_VERSION, strict=True)
        except k8s_validate.ValidationError as e:
            where = ".".join(str(p) for p in e.path)
            name = f"{doc['kind']}/{doc['metadata']['name']}"
            pytest.fail(f"{path.name}: {name}: {where}: {e.message}")
        except k8s_validate.SchemaNotFoundError as e:
            pytest.fail(f"{path.name}: {e.message}")


def test_kustomization_lists_every_manifest_but_the_example() -> None:
    """kustomization.yaml applies every manifest except the placeholder Secrets."""
    kustomization = load_docs(K8S / "kustomization.yaml")[0]
    assert kustomization["kind"] == "Kustomization"
    assert sorted(kustomization["resources"]) == sorted(p.name for p in APPLIED_FILES)
    assert "namespace" not in kustomization, "the manifests stay namespace-agnostic"
    images = {i["name"] for i in kustomization.get("images", [])}
    for kind in WORKLOADS:
        assert container(one(kind))["image"].rsplit(":", 1)[0] in images


def test_kustomize_builds_without_secrets() -> None:
    """`kubectl kustomize` renders the directory, and the result contains no Secret."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed (its built-in kustomize checks kustomization.yaml)")
    out = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True,
                         timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    kinds = sorted(d["kind"] for d in yaml.safe_load_all(out.stdout) if d)
    assert kinds == sorted(d["kind"] for d in manifests())
    assert "Secret" not in kinds


# --- workloads -----------------------------------------------------------------------------------


def test_watch_deployment_has_two_replicas_and_probes_on_the_health_port() -> None:
    """The watcher runs 2 replicas whose probes GET /healthz on TRINOGEN_WATCH_HEALTH_PORT."""
    deployment = one("Deployment")
    c = container(deployment)
    env = literal_env(deployment)
    assert deployment["spec"]["replicas"] == 2
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    health = int(env["TRINOGEN_WATCH_HEALTH_PORT"])
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        get = c[probe]["httpGet"]
        assert get["path"] == "/healthz", probe
        port = get["port"]
        assert (ports[port] if isinstance(port, str) else port) == health, probe
    metrics = int(env["TRINOGEN_WATCH_METRICS_PORT"])
    assert metrics in ports.values()
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(metrics)


@pytest.mark.parametrize("kind", WORKLOADS)
def test_workload_runs_non_root_with_limits_and_a_read_only_root(kind: str) -> None:
    """Each pod runs as the image's non-root UID, locked down, with resources and emptyDirs."""
    workload = one(kind)
    spec = pod_spec(workload)
    c = container(workload)
    pod_sec, sec = spec["securityContext"], c["securityContext"]
    user, _, group = instruction(final_stage(), "USER").partition(":")
    assert pod_sec["runAsNonRoot"] is True
    assert (pod_sec["runAsUser"], pod_sec["runAsGroup"]) == (int(user), int(group or user))
    assert pod_sec["runAsUser"] != 0
    assert pod_sec["seccompProfile"]["type"] == "RuntimeDefault"
    assert sec["readOnlyRootFilesystem"] is True
    assert sec["allowPrivilegeEscalation"] is False
    assert sec["capabilities"]["drop"] == ["ALL"]
    assert sec.get("privileged", False) is False and sec.get("runAsUser", 1) != 0
    for part in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(c["resources"][part]), f"{kind} resources.{part}"
    empty_dirs = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
    writable = {m["mountPath"] for m in c["volumeMounts"] if m["name"] in empty_dirs}
    # The working copy's lock file lives next to it, so its parent must be writable too.
    workdir = Path(literal_env(workload)["TRINOGEN_GIT_WORKDIR"])
    assert "/tmp" in writable
    assert str(workdir.parent) in writable


def test_pdb_keeps_one_watcher() -> None:
    """The PodDisruptionBudget selects the watcher pods and keeps fewer than all of them."""
    pdb, deployment = one("PodDisruptionBudget"), one("Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert 1 <= pdb["spec"]["minAvailable"] < deployment["spec"]["replicas"]


def test_cronjob_runs_sync_with_the_watcher_image_and_config() -> None:
    """The CronJob runs `sync --output json`, never overlapping, with the watcher's image."""
    cronjob, deployment = one("CronJob"), one("Deployment")
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    assert container(cronjob)["args"] == ["sync", "--output", "json"]
    assert container(cronjob)["image"] == container(deployment)["image"]
    # Failures a retry cannot fix end the Job at once; an unavailable service is retried.
    (fail_job,) = [r for r in cronjob["spec"]["jobTemplate"]["spec"]["podFailurePolicy"]["rules"]
                   if r["action"] == "FailJob"]
    assert set(fail_job["onExitCodes"]["values"]) == {
        ExitCode.CLUSTERS_FAILED, ExitCode.USAGE, ExitCode.REFUSED}
    for name in ("TRINOGEN_CONFIG", "TRINOGEN_MONGODB_URI", "GIT_SSH_COMMAND"):
        assert env_of(cronjob)[name] == env_of(deployment)[name], name


@pytest.mark.parametrize("kind", WORKLOADS)
def test_workload_command_is_a_real_trinogen_subcommand(kind: str) -> None:
    """The args a workload passes to the image's entry point parse as a trinogen command."""
    args = container(one(kind))["args"]
    group = cli_group()
    assert args[0] in group.commands, f"{kind} runs unknown command {args[0]!r}"
    ctx = group.commands[args[0]].make_context(args[0], list(args[1:]))  # raises on unknown options
    assert ctx.params.get("output", "text") in ("text", "json")


# --- configuration and credentials ---------------------------------------------------------------


@pytest.mark.parametrize("kind", WORKLOADS)
def test_env_names_are_trinogen_settings(kind: str) -> None:
    """Every TRINOGEN_* variable a workload sets is a settings key, and its value reaches it."""
    known = setting_env_vars()
    for name, entry in env_of(one(kind)).items():
        if not name.startswith("TRINOGEN_"):
            assert name in FOREIGN_ENV, f"{kind} sets {name}, which nothing reads"
            continue
        if name == "TRINOGEN_CONFIG":
            continue
        assert name in known, f"{kind} sets {name}, which is no trinogen setting"
        value = entry.get("value", "placeholder-from-secret")
        section, key = known[name]
        assert str(getattr(getattr(load_settings(environ={name: value}), section), key)) == value


@pytest.mark.parametrize("kind", WORKLOADS)
def test_configmap_config_loads_with_the_workload_env(kind: str, tmp_path: Path) -> None:
    """The ConfigMap's file, mounted where TRINOGEN_CONFIG points, loads with the workload's env."""
    workload, configmap = one(kind), one("ConfigMap")
    env = literal_env(workload)
    mounts = {m["name"]: m["mountPath"] for m in container(workload)["volumeMounts"]}
    volume = next(v for v in pod_spec(workload)["volumes"]
                  if v.get("configMap", {}).get("name") == configmap["metadata"]["name"])
    (key,) = configmap["data"]
    assert env["TRINOGEN_CONFIG"] == f"{mounts[volume['name']]}/{key}"
    text = configmap["data"][key]
    assert "uri" not in (yaml.safe_load(text).get("mongodb") or {}), "the URI comes from a Secret"
    (tmp_path / key).write_text(text, encoding="utf-8")
    secret_env = {k: "mongodb://from-secret.invalid:27017" for k, e in env_of(workload).items()
                  if "valueFrom" in e}
    s = load_settings(environ={**env, **secret_env, "TRINOGEN_CONFIG": str(tmp_path / key)})
    assert s.mongodb.uri == "mongodb://from-secret.invalid:27017"
    assert s.git.remote and s.git.remote.startswith("ssh://")
    assert s.git.workdir == env["TRINOGEN_GIT_WORKDIR"]
    assert s.secrets.mode == "external-secrets" and s.secrets.check
    assert (s.vault.auth_method, s.vault.kubernetes_role) == ("kubernetes", "trinogen")
    assert s.vault.kubernetes_jwt_file == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert pod_spec(workload)["serviceAccountName"] == one("ServiceAccount")["metadata"]["name"]
    assert pod_spec(workload).get("automountServiceAccountToken", True) is True
    if kind == "Deployment":
        assert (s.watch.health_port, s.watch.metrics_port) == (8080, 9102)


def test_manifests_hold_no_literal_secrets() -> None:
    """Credentials come only through Secrets; no Secret, password or key is applied."""
    for path in APPLIED_FILES:
        for doc in load_docs(path):
            assert doc["kind"] != "Secret", f"{path.name}: a Secret belongs in the example only"
            for text in strings(doc):
                for pattern in SECRET_TEXT:
                    assert not pattern.search(text), f"{path.name}: {pattern.pattern!r} in {text!r}"
    for kind in WORKLOADS:
        c = container(one(kind))
        for name, entry in env_of(one(kind)).items():
            if SECRET_NAME.search(name):
                assert "secretKeyRef" in entry.get("valueFrom", {}), f"{kind}: {name} is literal"
        for source in c.get("envFrom", []):
            assert set(source) <= {"secretRef", "configMapRef", "prefix"}


def test_example_secrets_are_placeholders_for_what_the_workloads_use() -> None:
    """Example holds only CHANGE-ME values, under each Secret name and key the workloads read."""
    examples = [p for p in MANIFEST_FILES if ".example." in p.name]
    assert examples, "deploy/kubernetes needs an example Secret manifest"
    secrets: dict[str, set[str]] = {}
    for doc in manifests(examples):
        assert doc["kind"] == "Secret"
        values = {**doc.get("stringData", {}), **doc.get("data", {})}
        assert values and all(PLACEHOLDER in v for v in values.values()), doc["metadata"]["name"]
        secrets[doc["metadata"]["name"]] = set(values)
    used: set[tuple[str, str]] = set()
    for kind in WORKLOADS:
        workload = one(kind)
        for entry in env_of(workload).values():
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref:
                used.add((ref["name"], ref["key"]))
        mounts = {m["name"]: m["mountPath"] for m in container(workload)["volumeMounts"]}
        commands = " ".join(literal_env(workload).values())
        for volume in pod_spec(workload)["volumes"]:
            if "secret" in volume:
                files = re.findall(re.escape(mounts[volume["name"]]) + r"/([\w.-]+)", commands)
                assert files, f"{kind}: nothing reads Secret volume {volume['name']}"
                used |= {(volume["secret"]["secretName"], f) for f in files}
    for name, key in used:
        assert key in secrets.get(name, set()), f"the example lacks Secret {name} key {key}"
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    for name, key in used:
        assert f"`{name}`" in readme and f"`{key}`" in readme, f"deploy/README.md: {name}/{key}"


# --- Dockerfile ----------------------------------------------------------------------------------


def test_dockerfile_entrypoint_is_the_console_script() -> None:
    """ENTRYPOINT is exactly the `trinogen` console script that pyproject declares."""
    scripts = pyproject()["project"]["scripts"]
    assert exec_form(final_stage(), "ENTRYPOINT") == ["trinogen"]
    assert scripts["trinogen"] == "trinogen.cli:main"


def test_dockerfile_default_cmd_runs_with_the_console_script() -> None:
    """The image's default CMD, given to the installed `trinogen` script, exits 0 and lists the
    commands the manifests run."""
    cmd = exec_form(final_stage(), "CMD")
    script = Path(sys.executable).parent / "trinogen"
    if not script.exists():
        pytest.skip(f"the console script is not installed next to {sys.executable}")
    out = subprocess.run([str(script), *cmd], capture_output=True, text=True, timeout=60,
                         check=False, env={"PATH": str(script.parent), "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr
    for kind in WORKLOADS:
        assert re.search(rf"\b{container(one(kind))['args'][0]}\b", out.stdout)


def test_dockerfile_installs_the_wheel_with_the_extras_the_manifests_need() -> None:
    """The image installs the project's wheel with the extras the manifests need, git and ssh."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    stages = dockerfile_stages(text)
    assert len(stages) >= 2, "multi-stage: build tools stay out of the runtime image"
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim$", text, re.MULTILINE)
    runs = " ".join(args for stage in stages for instr, args in stage if instr == "RUN")
    assert re.search(r"pip wheel\b[^&;]*\s\.(\s|$)", runs), "builds the wheel from the context"
    install = re.search(r'pip install\s+"?(?P<target>[^\s"\[]+)\[(?P<extras>[^\]]+)\]', runs)
    assert install, "installs trinogen with extras"
    target = install["target"]
    if target != ".":
        var = re.fullmatch(r"\$\{?(\w+)\}?", target)
        assert var and re.search(rf"{var[1]}=\$\(ls [^)]*trinogen-\*\.whl\)", runs), target
    extras = {e.strip() for e in install["extras"].split(",")}
    assert extras <= set(pyproject()["project"]["optional-dependencies"])
    if any("TRINOGEN_WATCH_METRICS_PORT" in env_of(one(k)) for k in WORKLOADS):
        assert "metrics" in extras
    runtime_runs = " ".join(args for instr, args in final_stage() if instr == "RUN")
    assert re.search(r"apt-get install\b.*\bgit\b.*\bopenssh-client\b", runtime_runs)
    assert any(instr == "COPY" and "--from=build" in args for instr, args in final_stage())
    assert re.fullmatch(r"[1-9]\d*:[1-9]\d*", instruction(final_stage(), "USER"))


def test_dockerignore_admits_what_the_dockerfile_copies() -> None:
    """Every path the build stage COPYs from the context is re-included by the allow-list."""
    ignore = DEPLOY / "Dockerfile.dockerignore"
    lines = [ln.strip() for ln in ignore.read_text(encoding="utf-8").splitlines()]
    patterns = [ln for ln in lines if ln and not ln.startswith("#")]
    assert patterns[0] == "*", "an allow-list keeps .git, .demo and venvs out of the context"
    allowed = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    for stage in dockerfile_stages(DOCKERFILE.read_text(encoding="utf-8")):
        for instr, args in stage:
            if instr == "COPY" and "--from=" not in args:
                *sources, _dest = args.split()
                for src in sources:
                    assert src.rstrip("/") in allowed, f"COPY {src} is excluded by {ignore.name}"


def test_readme_documents_the_build_and_the_image_commands() -> None:
    """deploy/README.md builds with deploy/Dockerfile from the repo root and runs real commands."""
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    assert re.search(r"docker build -f deploy/Dockerfile -t \S+ \.$", readme, re.MULTILINE)
    image = container(one("Deployment"))["image"]
    runs = [m[1] for line in readme.splitlines() if not re.search(r"docker (build|push)", line)
            for m in re.finditer(rf"{re.escape(image)} (\S+)", line)]
    assert runs, f"deploy/README.md shows no `docker run {image} <command>`"
    for command in runs:
        assert command in cli_group().commands, command


# --- read-only access to Argo CD (argocd-read/) ----------------------------------------------------

ARGO_READ = K8S / "argocd-read"


def argo_read() -> dict[str, dict[str, Any]]:
    return {d["kind"]: d for d in load_docs(ARGO_READ / "role.yaml")}


def test_argocd_read_role_grants_only_reading_applications_in_argocds_namespace() -> None:
    """The Role allows get/list/watch on applications.argoproj.io and nothing else, in the
    namespace the default settings read Argo CD from."""
    role = argo_read()["Role"]
    assert role["metadata"]["namespace"] == Settings().argocd.namespace
    assert role["rules"] == [{"apiGroups": ["argoproj.io"], "resources": ["applications"],
                              "verbs": ["get", "list", "watch"]}]


def test_argocd_read_binding_names_the_role_and_trinogens_service_account() -> None:
    """The RoleBinding binds that Role to the ServiceAccount the workloads run as."""
    docs = argo_read()
    binding, role = docs["RoleBinding"], docs["Role"]
    assert binding["metadata"]["namespace"] == role["metadata"]["namespace"]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": role["metadata"]["name"]}
    (subject,) = binding["subjects"]
    assert subject["kind"] == "ServiceAccount"
    assert subject["name"] == one("ServiceAccount")["metadata"]["name"]
    for kind in WORKLOADS:
        assert pod_spec(one(kind))["serviceAccountName"] == subject["name"]


def test_argocd_read_kustomization_applies_the_role_in_argocds_namespace() -> None:
    """argocd-read/ is its own kustomization (its objects live in Argo CD's namespace)."""
    kustomization = load_docs(ARGO_READ / "kustomization.yaml")[0]
    assert kustomization["resources"] == ["role.yaml"]
    assert kustomization["namespace"] == argo_read()["Role"]["metadata"]["namespace"]


@pytest.mark.parametrize("kind", ["Role", "RoleBinding"])
def test_argocd_read_validates_against_kubernetes_schema(kind: str, k8s_validate: Any) -> None:
    """The Role and RoleBinding are valid for Kubernetes 1.30 under strict schemas."""
    k8s_validate.validate(argo_read()[kind], K8S_VERSION, strict=True)
