"""The chart's `image` additions and `imagePullSecrets` of a cluster's image option
(templates/values/images.yaml.j2), and the pinned-region flags values.yaml.j2 writes first in
each role's additionalJVMConfig. Pure: names and digests were checked by `options.parse`.
"""

from __future__ import annotations

from typing import Any

from trinogen.kinds.images.document import Image
from trinogen.settings import Settings


def values(part: Image, s: Settings) -> dict[str, Any]:
    """The template variable `images`."""
    del s  # the part holds everything
    return {"repository": part.repository, "digest": part.digest,
            "pullPolicy": part.pull_policy,
            "pullSecrets": [{"name": n} for n in part.pull_secrets],
            "jvm": list(part.pinned)}
