"""The chart's `ingress:` values of a cluster's Ingress (templates/values/ingress.yaml.j2).

Pure: the host, class, TLS Secret name and annotations were checked to be DNS names and
label-like text when the document was read (`document.fill`), so nothing here needs escaping.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.ingress.document import Ingress
from trinogen.settings import Settings


def values(part: Ingress, s: Settings) -> dict[str, Any]:
    """The template variable `ingress`."""
    del s  # the option holds everything
    return {
        "className": part.class_name,
        "annotations": dict(part.annotations),
        "hosts": [{"host": part.host, "paths": [{"path": part.path, "pathType": part.path_type}]}],
        "tls": [{"secretName": part.tls_secret, "hosts": [part.host]}] if part.tls_secret else [],
    }
