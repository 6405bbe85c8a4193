"""`ingress:` options: how a cluster's coordinator is exposed (issue 14, item 6).

    ingress:
      public:
        host: "{cluster}.trino.example.com"   # starts with {cluster}.; {owner} may be used
        class_name: nginx                      # optional: the cluster's default class otherwise
        tls_secret: "{cluster}-ingress-tls"    # optional: no TLS section without it
        annotations: {cert-manager.io/cluster-issuer: letsencrypt}
        path: /                                # default
        path_type: Prefix                      # default; or Exact, ImplementationSpecific

The host is per cluster (two clusters on one host would fight over it), so the pattern must
start with `{cluster}.`: the first label of every host is its cluster's id; the host and the TLS Secret name must be DNS names once a document's values
are in (checked again per document).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import metadata

FIELDS = ("host", "class_name", "tls_secret", "annotations", "path", "path_type")
PATH_TYPES = ("Prefix", "Exact", "ImplementationSpecific")
_PATH = re.compile(r"/[-A-Za-z0-9._~/]*")
# What Kubernetes refuses in a Prefix or Exact path (%2f cannot occur: `%` is not in _PATH).
_NOT_IN_PATH = ("//", "/./", "/../")
_NOT_AT_END = ("/..", "/.")


@dataclass(frozen=True)
class IngressOption:
    host: str  # a pattern with {cluster}
    class_name: str | None = None
    tls_secret: str | None = None  # a pattern
    annotations: tuple[tuple[str, str], ...] = ()
    path: str = "/"
    path_type: str = "Prefix"


def parse(where: str, raw: Mapping[str, Any]) -> IngressOption:
    """One entry of `ingress:`; ConfigError names `ingress.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    host = metadata.check_pattern(f"{where}.host", raw.get("host"))
    if not host.startswith("{cluster}.") or host.count("{cluster}") != 1:
        # A clusterId is one DNS label, so hosts starting with it differ between any two
        # clusters, whichever options they pick ("a-{cluster}" and "{cluster}" would both give
        # a-b.example.com to clusters "b" and "a-b": one could take the other's traffic).
        raise ConfigError(f"{where}.host: {host!r} must start with \"{{cluster}}.\" (and name "
                          "it once): each cluster needs a host no other cluster can get")
    _dns(f"{where}.host", host, metadata.dns_subdomain)
    class_name = metadata.text(where, raw, "class_name")
    if class_name is not None:
        _dns(f"{where}.class_name", class_name, metadata.object_name)
    tls = metadata.text(where, raw, "tls_secret")
    if tls is not None:
        # The chart runs secretName through Helm's tpl: a Secret name holds no braces.
        _dns(f"{where}.tls_secret", metadata.check_pattern(f"{where}.tls_secret", tls),
             metadata.object_name)
    path = metadata.text(where, raw, "path", "/") or "/"
    path_type = raw.get("path_type", "Prefix")
    if path_type not in PATH_TYPES:
        raise ConfigError(f"{where}.path_type: {path_type!r}; choose one of: "
                          f"{', '.join(PATH_TYPES)}")
    _path(f"{where}.path", path, path_type)
    annotations = metadata.pairs(f"{where}.annotations", raw.get("annotations"), labels=False)
    return IngressOption(host, class_name, tls, annotations, path, path_type)


def _dns(where: str, pattern: str, rule: Callable[[str], str | None]) -> None:
    wrong = rule(metadata.fill(pattern, **metadata.SAMPLE))
    if wrong:
        raise ConfigError(f"{where}: {pattern!r} is not a DNS name: {wrong}")


def _path(where: str, path: str, path_type: str) -> None:
    """An absolute path of the characters the chart can write unquoted; with Prefix or Exact,
    none of the segments the API server refuses (networking/v1 validation of HTTPIngressPath)."""
    if not _PATH.fullmatch(path):  # the chart writes it unquoted into the Ingress
        raise ConfigError(f"{where}: {path!r} must be an absolute URL path of letters, "
                          "digits and -._~/")
    if path_type == "ImplementationSpecific":
        return
    wrong = [s for s in _NOT_IN_PATH if s in path] + [s for s in _NOT_AT_END if path.endswith(s)]
    if wrong:
        raise ConfigError(f"{where}: {path!r} holds {wrong[0]!r}, which Kubernetes refuses in an "
                          f"Ingress path of type {path_type} (use ImplementationSpecific, or a "
                          "path without empty or dot segments)")
