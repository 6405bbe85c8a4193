"""Cluster -> {path: bytes} through the templates. Pure: the same input gives the same bytes.

The renderer is handed its template sources (`Templates`) and, optionally, where compiled
templates are kept; without them it asks `trinogen.render.templates` (the edge) on first use.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from trinogen import __version__
from trinogen.errors import Problem
from trinogen.model import Cluster, FileConfigMap, FileSecret
from trinogen.render.environment import make_environment, template_error
from trinogen.render.escape import Safe, helm_escape
from trinogen.render.headers import header, root_app_header, shared_catalog_line
from trinogen.render.kinds import kind_manifests, kind_values, legacy_values, role_files
from trinogen.render.limits import check_objects, object_problems
from trinogen.render.names import chart_worker_name
from trinogen.render.objects import Written
from trinogen.render.operation import values_context
from trinogen.render.pod_security import security_contexts, security_values
from trinogen.render.projects import Project, render_projects
from trinogen.render.selfcheck import RenderError, check_yaml
from trinogen.render.templates import (
    BytecodeCacheFactory,
    Templates,
    bytecode_cache,
    load_templates,
)
from trinogen.render.texts import ServerTexts, final_properties, server_texts
from trinogen.render.workload import exporter_config, workload_values
from trinogen.secrets import Resolved, SecretUse, checksum
from trinogen.settings import Settings
from trinogen.trino.registry import registry_digest
from trinogen.trino.session import data_digest as session_data_digest

VALUES = "values.yaml"
SECRETS_DIR = "secrets"  # ExternalSecrets (sync wave -1)
MANIFESTS_DIR = "manifests"  # other plain manifests deployed with the chart (PDBs, ConfigMaps)
# Each directory under a cluster's folder that holds files becomes one Application source.
EXTRA_DIRS = (SECRETS_DIR, MANIFESTS_DIR)
EXTERNAL_SECRET = "externalsecret.yaml"
CHART_DEFAULT_CATALOGS = ("tpch", "tpcds")  # catalogs the chart's values.yaml declares
# Bumped when the renderer writes other bytes for the same inputs, so the render cache does not
# keep serving files of the old form. 1: catalog copies of a shared catalog name its library
# document (issue 19: who holds a catalog name). 2: a spread constraint's added selector leaves
# out its matchLabelKeys (issue 20: the API server refused the Pods).
OUTPUT_REVISION = 2
# The settings sections that shape the output (the render cache's fingerprint covers them).
_OUTPUT_SECTIONS = ("mongodb", "output", "chart", "argocd", "git", "secrets", "validation",
                    "pods", "monitoring")


class Renderer:
    """Compiles the templates once; renders any number of clusters."""

    def __init__(
        self, settings: Settings, templates: Templates | None = None, *,
        bytecode_dir: Path | None = None, bytecode: BytecodeCacheFactory | None = None,
    ) -> None:
        self.settings = settings
        self._given = templates
        # Where compiled templates are kept between runs (trinogen's cache), if anywhere.
        self.bytecode_dir = bytecode_dir
        if bytecode is None and bytecode_dir is not None:
            bytecode = bytecode_cache(bytecode_dir)
        self._bytecode = bytecode
        self._compiled: dict[str, Any] = {}

    @cached_property
    def templates(self) -> Templates:
        """The sources: as given, else read (once) from the directories the settings name."""
        return self._given if self._given is not None else load_templates(self.settings.output)

    @cached_property
    def _env(self) -> Any:
        return make_environment(self.templates, self._bytecode)

    @cached_property
    def fingerprint(self) -> str:
        """A hash of everything besides the document that decides the output (for caches)."""
        h = hashlib.sha256(self.templates.identity())  # no Jinja needed: a no-op run imports none
        relevant: dict[str, Any] = {k: dataclasses.asdict(getattr(self.settings, k))
                                    for k in _OUTPUT_SECTIONS}
        relevant["defaults"] = self.settings.defaults
        relevant["profiles"] = self.settings.profiles
        relevant["named"] = self.settings.named  # parsed options: frozen values, stable repr
        if self.settings.tenants or self.settings.profile_requirements:  # who may pick what
            relevant["tenants"] = {n: t.identity() for n, t in sorted(self.settings.tenants.items())}
            relevant["profile_requirements"] = self.settings.profile_requirements
        h.update(json.dumps(relevant, sort_keys=True, default=str).encode())
        h.update(f"{__version__}/{OUTPUT_REVISION}".encode())
        h.update(registry_digest() + session_data_digest())  # new Trino data: re-validate all
        return h.hexdigest()

    def template(self, name: str) -> Any:
        # Looked up once: Jinja would otherwise ask the loader whether it changed on every call.
        if name not in self._compiled:
            self._compiled[name] = self._env.get_template(name)
        return self._compiled[name]

    def render_cluster(self, cluster: Cluster, resolved: Resolved, *, inline: bool = False) -> dict[str, bytes]:
        """All files of one cluster, keyed by their path in the GitOps repository."""
        import jinja2

        try:
            files = self._cluster_files(cluster, resolved, inline)
        except jinja2.TemplateError as e:
            raise RenderError(template_error(e)) from e
        check_yaml({p: c for p, c in files.items() if p.endswith(".yaml")})
        return files

    def written(self, cluster: Cluster, resolved: Resolved, inline: bool) -> Written:
        """The texts the cluster's objects will hold: catalogs, properties lines, annotations."""
        versions = {p: d.version for p, d in resolved.items()}
        return Written(self._catalogs(cluster, resolved, inline),
                       server_texts(cluster, resolved, inline), resolved,
                       pod_annotations(cluster, versions), _env_uses(cluster, inline),
                       exporter_config(self.settings), kind_manifests(cluster, self.settings))

    def object_problems(self, cluster: Cluster) -> list[Problem]:
        """What rendering would refuse for Kubernetes' limits and names, without Vault
        (`validate`): placeholders as their ${ENV:...} references, Secrets' sizes unknown."""
        import jinja2

        try:
            written = self.written(cluster, {}, False)
        except jinja2.TemplateError as e:
            raise RenderError(template_error(e)) from e
        return object_problems(cluster, self.settings.chart.name, written)

    def _cluster_files(self, cluster: Cluster, resolved: Resolved, inline: bool) -> dict[str, bytes]:
        s = self.settings
        base = f"{s.output.clusters_dir.rstrip('/')}/{cluster.cluster_id}"  # git paths: '/'-joined
        head = header(s, cluster.cluster_id, cluster.doc_id)
        versions = {p: d.version for p, d in resolved.items()}
        w = self.written(cluster, resolved, inline)
        check_objects(cluster, s.chart.name, w)  # Kubernetes' limits and names (LimitError)
        uses, bodies, texts = w.env_uses, w.catalogs, w.texts
        secret_name = f"{cluster.cluster_id}-trino-secrets" if uses else None
        files = {f"{base}/catalog/{name}.properties": _bytes(f"{head}\n{origin}{body}")
                 for name, body, origin in self._catalog_copies(cluster, bodies)}
        values_path = f"{base}/{VALUES}"
        files[values_path] = self._values(cluster, head, bodies, w.pod_annotations,
                                          secret_name, texts)
        files.update(self._secret_files(cluster, head, base, secret_name, _env_data(uses, versions),
                                        versions))
        files.update(self._manifest_files(cluster, head, base, w))
        app_path = f"{s.output.applications_dir.rstrip('/')}/{cluster.cluster_id}.yaml"
        files[app_path] = self._application(cluster, head, values_path, _extra_paths(base, files))
        return files

    def _secret_files(self, cluster: Cluster, head: str, base: str, secret_name: str | None,
                      env_data: list[dict[str, Any]], versions: Mapping[str, int | None]
                      ) -> dict[str, bytes]:
        """The ExternalSecrets: the environment's (when any value is not inlined), each file's."""
        files: dict[str, bytes] = {}
        if secret_name:
            files[f"{base}/{SECRETS_DIR}/{EXTERNAL_SECRET}"] = self._external_secret(
                cluster, head, secret_name, env_data)
        for fs in cluster.file_secrets:
            files[f"{base}/{SECRETS_DIR}/{fs.name}.yaml"] = self._external_secret(
                cluster, head, fs.name, _file_data(fs, versions))
        return files

    def _manifest_files(self, cluster: Cluster, head: str, base: str, w: Written
                        ) -> dict[str, bytes]:
        """Plain manifests: the files' ConfigMaps, the option kinds' objects."""
        # Features that add manifests put them under one of EXTRA_DIRS here.
        files = {f"{base}/{MANIFESTS_DIR}/{cm.name}.yaml": self._config_map(cluster, head, cm)
                 for cm in cluster.file_config_maps}
        for _, m in w.manifests:  # a disruption option's PDBs, a network policy's...
            files[f"{base}/{MANIFESTS_DIR}/{m.file}"] = _bytes(self.template(m.template).render(
                header=Safe(head), cluster=cluster, **m.variables))
        return files

    def _catalog_copies(self, cluster: Cluster, bodies: Mapping[str, str]
                        ) -> Iterable[tuple[str, str, str]]:
        """(name, text, origin line) of each reviewable copy; the origin line names the library
        document a shared catalog came from (empty for a document's own catalog)."""
        shared = {c.name: c.shared for c in cluster.connectors if c.shared is not None}
        for name, body in bodies.items():
            origin = shared.get(name)
            line = shared_catalog_line(self.settings, *origin) + "\n" if origin else ""
            yield name, body, line

    def _catalogs(self, cluster: Cluster, resolved: Resolved, inline: bool) -> dict[str, str]:
        """Each connector's catalog text (its .properties file without the header)."""
        tpl = self.template("catalog.properties.j2")
        return {conn.name: tpl.render(properties=final_properties(conn, resolved, inline))
                for conn in cluster.connectors}

    def _values(
        self, cluster: Cluster, head: str, bodies: Mapping[str, str],
        annotations: Mapping[str, str], secret_name: str | None, texts: ServerTexts,
    ) -> bytes:
        s = self.settings
        kinds = kind_values(cluster, s)
        context = {
            "header": Safe(head),
            "cluster": cluster,
            "chart": s.chart,
            "settings": s,
            "catalogs": {
                **{name: None for name in CHART_DEFAULT_CATALOGS},
                **{n: helm_escape(b) for n, b in bodies.items()},
            },
            "config_properties": texts.config,
            "node_properties": texts.node,
            "log_properties": texts.log,
            "coordinator_extra_config": "\n".join(texts.coordinator),
            "worker_extra_config": "\n".join(texts.worker),
            "pod_annotations": annotations,
            "secret_name": secret_name,
            "exchange_properties": texts.exchange,
            "config_mounts": _mounts(cluster, secret=False),
            "secret_mounts": _mounts(cluster, secret=True),
            "security_contexts": security_contexts(s.pods.security),
            "security_values": Safe(security_values(s.pods.security)),
            "access_control": cluster.access,
            **workload_values(cluster, s),
            **kinds,
            **role_files(kinds, texts.spooling),
            **legacy_values(kinds, cluster.authentication),
            **values_context(cluster),
        }
        return _bytes(self.template("values.yaml.j2").render(context))

    def _external_secret(
        self, cluster: Cluster, head: str, secret_name: str, data: list[dict[str, Any]]
    ) -> bytes:
        return _bytes(self.template("externalsecret.yaml.j2").render(
            header=Safe(head), cluster=cluster, secret_name=secret_name,
            secrets=self.settings.secrets, data=data,
        ))

    def _config_map(self, cluster: Cluster, head: str, cm: FileConfigMap) -> bytes:
        return _bytes(self.template("configmap.yaml.j2").render(
            header=Safe(head), cluster=cluster, name=cm.name, files=cm.files))

    def _application(
        self, cluster: Cluster, head: str, values_path: str, extra_paths: list[str]
    ) -> bytes:
        s = self.settings
        # Argo CD takes a server XOR a name: a document's choice replaces the default pair.
        if cluster.destination_name or cluster.destination_server:
            destination = (cluster.destination_name, cluster.destination_server)
        else:
            destination = (s.argocd.destination_name, s.argocd.destination_server)
        return _bytes(self.template("application.yaml.j2").render(
            header=Safe(head),
            cluster=cluster,
            app_name=s.argocd.app_name_prefix + cluster.cluster_id,
            project=self._project(cluster),
            argocd=s.argocd,
            chart=s.chart,
            repo_url=s.repo_url,
            target_revision=s.target_revision,
            values_file=f"$values/{values_path}",
            extra_paths=extra_paths,
            # What templates written before `extra_paths` read (a templates_dir may hold one).
            secrets_path=next((p for p in extra_paths if p.endswith(f"/{SECRETS_DIR}")), None),
            destination_name=destination[0],
            destination_server=destination[1],
            worker_deployment=chart_worker_name(cluster.cluster_id, s.chart.name),
        ))

    def _project(self, cluster: Cluster) -> str:
        """argocd.project, or with argocd.tenant_projects the project of the owner's tenant."""
        if not self.settings.argocd.tenant_projects:
            return self.settings.argocd.project
        tenant = self.settings.tenant(cluster.owner)
        if tenant is None:
            raise RenderError(f"owner {cluster.owner!r} is not a tenant of the settings, and "
                              "argocd.tenant_projects puts each Application in its tenant's project")
        return tenant.project

    def render_projects(self, projects: Mapping[str, Project]) -> dict[str, bytes]:
        """The tenants' AppProject files (argocd.tenant_projects), by path."""
        return _checked(lambda: render_projects(self.settings, self.template("appproject.yaml.j2"),
                                                projects))

    def render_root_app(self) -> dict[str, bytes]:
        """The app-of-apps Application for the applications directory (when configured)."""
        s = self.settings
        if not s.output.root_app:
            return {}
        return _checked(lambda: {s.output.root_app: _bytes(self.template(
            "root-application.yaml.j2").render(
                header=Safe(root_app_header(s)), argocd=s.argocd, repo_url=s.repo_url,
                target_revision=s.target_revision, path=s.output.applications_dir))})


def _checked(render: Callable[[], dict[str, bytes]]) -> dict[str, bytes]:
    """Files of no single cluster, rendered and parsed back (a template error names its line)."""
    import jinja2

    try:
        files = render()
    except jinja2.TemplateError as e:
        raise RenderError(template_error(e)) from e
    check_yaml(files)
    return files


def pod_annotations(cluster: Cluster, versions: Mapping[str, int | None]) -> dict[str, str]:
    """The checksums whose change rolls the pods: Vault values read, files attached."""
    rolled = cluster.vault_uses  # a rotation of any of them rolls the pods
    annotations = {"trinogen.io/secrets-checksum": checksum(rolled, versions)} if rolled else {}
    if cluster.file_config_maps or any(fs.decoding for fs in cluster.file_secrets):
        annotations["trinogen.io/files-checksum"] = files_checksum(cluster)
    return annotations


def _extra_paths(base: str, files: Mapping[str, bytes]) -> list[str]:
    """The EXTRA_DIRS that hold a file: each becomes one directory source of the Application."""
    prefix = f"{base}/"
    used = set()  # the first directory of each path under base (one pass over the files)
    for path in files:
        if path.startswith(prefix):
            top, sep, _ = path[len(prefix):].partition("/")
            if sep:
                used.add(top)
    return [f"{base}/{d}" for d in EXTRA_DIRS if d in used]


def _env_uses(cluster: Cluster, inline: bool) -> tuple[SecretUse, ...]:
    """What the env Secret carries. Inline mode writes only catalog values into the files:
    server properties keep `${ENV:...}` (their lines sit in values.yaml, where a diff could not
    hide a value), as Secrets of files keep their ExternalSecrets."""
    if not inline:
        return cluster.secret_uses
    found = {s.use.env: s.use for s in cluster.server_secrets}
    return tuple(found[env] for env in sorted(found))


def _env_data(uses: Iterable[SecretUse], versions: Mapping[str, int | None]) -> list[dict[str, Any]]:
    """The env Secret's entries: one environment variable per placeholder."""
    return [_entry(u.env, u, versions) for u in uses]


def _file_data(fs: FileSecret, versions: Mapping[str, int | None]) -> list[dict[str, Any]]:
    """A file Secret's entries: one key (a file name) per Vault value."""
    decoding = dict(fs.decoding)
    return [_entry(key, u, versions, decoding.get(key)) for key, u in fs.files]


def _entry(key: str, u: SecretUse, versions: Mapping[str, int | None],
           decoding: str | None = None) -> dict[str, Any]:
    return {"env": key, "key": u.ref.secret_path, "property": u.ref.key,
            "version": versions.get(u.ref.secret_path), "decoding": decoding}


def files_checksum(cluster: Cluster) -> str:
    """A short hash of every attached text file (ConfigMap, name, content) and of how each
    secret file is decoded.

    Put into the pods' annotations: the chart rolls the pods on its own ConfigMaps only, and a
    file Trino reads at startup (core-site.xml) must reach the running servers. A secret file's
    value rolls them through the secrets checksum (its reference and version); its decoding,
    which changes the file's bytes as much, through this one.
    """
    h = hashlib.sha256()
    for cm in sorted(cluster.file_config_maps, key=lambda m: m.name):
        for key, content in cm.files:
            data = content.encode()
            h.update(f"text {cm.name}/{key} {len(data)}\n".encode() + data)
    for fs in sorted(cluster.file_secrets, key=lambda f: f.name):
        for key, strategy in fs.decoding:
            h.update(f"decoding {fs.name}/{key} {strategy}\n".encode())
    return h.hexdigest()[:16]


def _mounts(cluster: Cluster, secret: bool) -> list[dict[str, str]]:
    """The chart's configMounts (or secretMounts) entries."""
    out = []
    for m in cluster.mounts:
        if m.secret == secret:
            entry = {"name": m.name, "secretName" if secret else "configMap": m.source,
                     "path": m.path}
            if m.sub_path:
                entry["subPath"] = m.sub_path
            out.append(entry)
    return out


def _bytes(text: str) -> bytes:
    return text.encode("utf-8")
