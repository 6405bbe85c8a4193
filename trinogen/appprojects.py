"""The tenants' AppProjects in a plan (argocd.tenant_projects): written, updated and pruned.

A project allows what the Applications naming it need, read from the Application files: those
the repository holds now AND those the plan writes. The union matters while Argo CD applies
the commit, which it does not do at once:

- a pruned cluster's namespace stays in its project for the commit that prunes its
  Application: the resources finalizer deletes the cluster's objects through that project, and
  Argo CD cannot delete an Application whose project is gone (argoproj/argo-cd#4369); the next
  run, when that Application is no longer in git, drops the namespace;
- a project is pruned the same way, one run after the last Application naming it left git;
- an Application kept because its document failed, or outside a targeted run (`--cluster`,
  watch), is in the repository, so its project keeps allowing it.

Only projects trinogen owns are written: a declared tenant's, or one whose file it wrote before
(a tenant removed from the settings while its Applications remain). With projects off and none
in the repository, nothing is read and the plan is returned as it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.applications import Applications
from trinogen.errors import Problem
from trinogen.plan import CurrentFile, FileChange, Layout, Plan, blob_id
from trinogen.ports import RenderCacheStore
from trinogen.render import Renderer
from trinogen.render.projects import AppUse, app_use, project_of, project_path, projects_of
from trinogen.settings import Settings

RESERVED = "default"  # Argo CD's own project: never written


@dataclass(frozen=True)
class ProjectPlanner:
    """Adds the project files' changes to a plan made for one repository tree."""

    settings: Settings
    renderer: Renderer
    apps: Applications  # the run's read of its tree's Application files
    cache: RenderCacheStore | None = None

    @property
    def layout(self) -> Layout:
        return self.apps.layout

    def __call__(self, plan: Plan, tree: Mapping[str, str],
                 current: Mapping[str, CurrentFile]) -> Plan:
        ours = _project_files(self.layout, tree, current)
        owned = self._owned(ours.values())
        if not owned and not ours:
            return plan
        uses = self._uses(plan, tree, current)
        wanted = self.renderer.render_projects(projects_of((u for u in uses if u), owned))
        changes, problems = _diff(wanted, ours, current)
        if not changes and not problems:
            return plan
        return dataclasses.replace(plan, files=plan.files + tuple(changes),
                                   problems=plan.problems + tuple(problems))

    def _owned(self, written: Iterable[str]) -> set[str]:
        a = self.settings.argocd
        declared = {t.project for t in self.settings.tenants.values()} if a.tenant_projects else set()
        return (declared | set(written)) - {RESERVED, a.project}

    def _uses(self, plan: Plan, tree: Mapping[str, str],
              current: Mapping[str, CurrentFile]) -> list[AppUse | None]:
        """What every Application before and after the plan needs from its project."""
        before = {b for p, b in tree.items() if _is_app(self.layout, p) and _ours(current, p)}
        after = _written_apps(self.layout, plan)
        known = self.cache.apps if self.cache is not None else {}
        texts = self.apps.texts(before - set(known) - set(after))
        texts.update(after)
        uses = {b: _use(b, known, texts) for b in before | set(after)}
        if self.cache is not None:  # each Application is parsed once, not on every run
            self.cache.used_apps = {b: u.flat() for b, u in uses.items() if u is not None}
        return list(uses.values())


def _use(blob: str, known: Mapping[str, tuple[Any, ...]],
         texts: Mapping[str, bytes]) -> AppUse | None:
    return AppUse.of_flat(known[blob]) if blob in known else app_use(texts.get(blob, b""))


def _project_files(layout: Layout, tree: Mapping[str, str],
                   current: Mapping[str, CurrentFile]) -> dict[str, str]:
    """trinogen's project files in the tree: path -> project name."""
    head = project_path(layout.applications_dir, "")[:-len(".yaml")]
    # (a plain prefix test first: with projects off this scan is all a run pays)
    return {p: name for p in tree if p.startswith(head)
            and (name := project_of(layout.applications_dir, p)) and _ours(current, p)}


def _written_apps(layout: Layout, plan: Plan) -> dict[str, bytes]:
    """The Applications the plan adds or updates: blob id -> content."""
    return {blob_id(c.content): c.content for c in plan.files
            if c.content is not None and c.cluster is not None and _is_app(layout, c.path)}


def _is_app(layout: Layout, path: str) -> bool:
    """A cluster's Application file."""
    return path.startswith(layout.applications_dir + "/") and layout.cluster_of(path) is not None


def _app_uses(texts: Iterable[bytes]) -> list[AppUse]:
    return [u for t in texts if (u := app_use(t)) is not None]


def _ours(current: Mapping[str, CurrentFile], path: str) -> bool:
    found = current.get(path)
    return found is not None and found.header is not None


def _diff(wanted: Mapping[str, bytes], ours: Mapping[str, str],
          current: Mapping[str, CurrentFile]) -> tuple[list[FileChange], list[Problem]]:
    changes: list[FileChange] = []
    problems: list[Problem] = []
    for path, content in sorted(wanted.items()):
        found = current.get(path)
        if found is not None and found.header is None:
            problems.append(Problem("-", path, "exists and was not written by trinogen; not "
                                    "replaced (the project's Applications cannot sync until it "
                                    "allows them)"))
        elif found is None or found.blob != blob_id(content):
            changes.append(FileChange(path, "update" if found else "add", None, content))
    changes += [FileChange(p, "delete", None) for p in sorted(set(ours) - set(wanted))]
    return changes, problems


def rendered_projects(settings: Settings, renderer: Renderer, layout: Layout,
                      clusters: Mapping[str, Mapping[str, bytes]]) -> dict[str, bytes]:
    """`trinogen render` (no repository): the projects of the Applications rendered."""
    if not settings.argocd.tenant_projects:
        return {}
    uses = _app_uses(c for files in clusters.values() for p, c in files.items()
                     if _is_app(layout, p))
    owned = {t.project for t in settings.tenants.values()} - {RESERVED, settings.argocd.project}
    return renderer.render_projects(projects_of(uses, owned))
