"""Names the platform owns are never a cluster's (issue 19): a clusterId is refused when a name
trinogen derives from it outside the cluster's own namespace would be one of the platform's.

Outside its namespace a cluster has two names: its Argo CD Application
(`argocd.app_name_prefix` + clusterId, in `argocd.namespace`, next to the app-of-apps) and the
namespace `trino-<clusterId>` on its destination. Everything else it gets (the Helm release, its
Services, Secrets, ConfigMaps, ServiceAccount) lives inside that namespace, and its files live
under the output roots, which the settings keep apart from the app-of-apps' file. Pure.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from trinogen.model.types import namespace_of
from trinogen.settings import ArgoSettings


def derived_names(cluster_id: str, argocd: ArgoSettings) -> tuple[tuple[str, str], ...]:
    """(what, name) of each name of the cluster that lives outside its own namespace."""
    return (("Application", argocd.app_name_prefix + cluster_id),
            ("namespace", namespace_of(cluster_id)))


def reserved(cluster_id: str, argocd: ArgoSettings) -> str | None:
    """Why `cluster_id` cannot be a cluster's (a message that follows the value), or None."""
    (_, app), (_, namespace) = derived_names(cluster_id, argocd)
    if app == argocd.root_app_name:
        return (f"would name its Application {app} in {argocd.namespace}, the app-of-apps' own "
                "name (argocd.root_app_name): Argo CD would replace the app-of-apps with this "
                "cluster; choose another clusterId")
    if namespace == argocd.namespace:
        return (f"would deploy into the namespace {namespace}, where Argo CD keeps its "
                "Applications (argocd.namespace); choose another clusterId")
    for pattern in argocd.reserved_names:
        for what, name in derived_names(cluster_id, argocd):
            if fnmatchcase(name, pattern):
                return (f"would name its {what} {name}, which the platform reserves "
                        f"(argocd.reserved_names: {pattern}); choose another clusterId")
    return None
