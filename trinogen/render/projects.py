"""The tenants' Argo CD AppProjects (argocd.tenant_projects), derived from the Applications.

A project allows exactly what the Applications naming it use: their sources' repositories, and
each one's destination (server or name, and its `trino-<clusterId>` namespace). Deriving it from
the Application files themselves, rather than from the documents of one run, keeps it right for
every Application the repository holds: rendered now, kept because its document failed, or
outside a targeted run. Pure: Application texts in, project files out.

A project file sits beside the Applications, `<applications_dir>/appproject.<name>.yaml`: the
app-of-apps (a directory source of that folder) applies it, one sync wave before them. The '.'
keeps it from ever being a cluster's Application (a clusterId is a DNS label).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from trinogen.render.escape import Safe
from trinogen.render.headers import project_header
from trinogen.settings import Settings

PREFIX = "appproject."
# What CreateNamespace=true creates: the one cluster-scoped kind a project lets through.
CLUSTER_KINDS = (("", "Namespace"),)
# Every kind the chart renders for the documents trinogen writes, and trinogen's own manifests
# (tests/test_render_projects.py renders every feature through the real chart and fails on a
# kind missing here, and on a kind here that nothing renders).
NAMESPACE_KINDS = (
    ("", "ConfigMap"),
    ("", "Service"),
    ("", "ServiceAccount"),
    ("apps", "Deployment"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("external-secrets.io", "ExternalSecret"),
    ("keda.sh", "ScaledObject"),
    ("monitoring.coreos.com", "ServiceMonitor"),
    ("networking.k8s.io", "Ingress"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("policy", "PodDisruptionBudget"),
)


# Tuples: a frozen dataclass costs every run (a no-op too) ~3 M instructions to create.
class Destination(NamedTuple):
    namespace: str
    server: str | None = None
    name: str | None = None


class AppUse(NamedTuple):
    """What one Application needs from its project."""

    project: str
    destination: Destination
    repos: tuple[str, ...]

    def flat(self) -> tuple[Any, ...]:
        """Plain values, as the render cache keeps them (marshal)."""
        d = self.destination
        return (self.project, d.namespace, d.server, d.name, *self.repos)

    @classmethod
    def of_flat(cls, flat: tuple[Any, ...]) -> AppUse:
        project, namespace, server, name, *repos = flat
        return cls(project, Destination(namespace, server, name), tuple(repos))


def project_path(applications_dir: str, name: str) -> str:
    return f"{applications_dir.rstrip('/')}/{PREFIX}{name}.yaml"


def project_of(applications_dir: str, path: str) -> str | None:
    """The project a path names when it is a project file, else None."""
    head = f"{applications_dir.rstrip('/')}/{PREFIX}"
    if path.startswith(head) and path.endswith(".yaml"):
        name = path[len(head):-len(".yaml")]
        return name if name and "/" not in name else None
    return None


def app_use(content: bytes) -> AppUse | None:
    """An Application file's project, destination and repositories; None when it has none."""
    import yaml

    try:
        doc = yaml.load(content, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    spec = doc.get("spec") if isinstance(doc, dict) else None
    dest = spec.get("destination") if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or not isinstance(dest, dict):
        return None
    project, namespace = spec.get("project"), dest.get("namespace")
    if not isinstance(project, str) or not isinstance(namespace, str):
        return None
    return AppUse(project, Destination(namespace, _text(dest.get("server")),
                                       _text(dest.get("name"))), _repos(spec))


def _repos(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The repositories of an Application's source or sources."""
    sources = [spec.get("source"), *(spec.get("sources") or [])]
    return tuple(str(s["repoURL"]) for s in sources if isinstance(s, dict) and "repoURL" in s)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class Project(NamedTuple):  # the sets grow in place
    destinations: set[Destination]
    repos: set[str]


def projects_of(uses: Iterable[AppUse], owned: set[str]) -> dict[str, Project]:
    """The projects in `owned` that some Application names, each allowing what they use."""
    out: dict[str, Project] = {}
    for use in uses:
        if use.project in owned:
            p = out.setdefault(use.project, Project(set(), set()))
            p.destinations.add(use.destination)
            p.repos.update(use.repos)
    return out


def _order(d: Destination) -> tuple[str, str, str]:
    return d.namespace, d.server or "", d.name or ""


def render_projects(settings: Settings, template: Any,
                    projects: Mapping[str, Project]) -> dict[str, bytes]:
    """Each project's file, keyed by its path (`template` is appproject.yaml.j2, compiled)."""
    out: dict[str, bytes] = {}
    for name, p in sorted(projects.items()):
        text = template.render(
            header=Safe(project_header(settings, name)), name=name, argocd=settings.argocd,
            description=f"trinogen: the Trino clusters of project {name}",
            source_repos=sorted(p.repos), destinations=sorted(p.destinations, key=_order),
            cluster_kinds=CLUSTER_KINDS, namespace_kinds=NAMESPACE_KINDS)
        out[project_path(settings.output.applications_dir, name)] = text.encode("utf-8")
    return out
