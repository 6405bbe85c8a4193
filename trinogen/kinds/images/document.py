"""`image: "<name>"`: a document (or its profile) picks an image option; the option's digest for
the document's trinoVersion is looked up, and a version the option does not pin fails here.

Pure: the option is the settings', the document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.kinds.images.options import image_values, pinned_region_flags, version_problem
from trinogen.model.checker import Checker
from trinogen.settings import Settings

if TYPE_CHECKING:
    from trinogen.kinds.images.options import ImageOption

FIELD = "image"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Image:
    """The cluster's Trino image and the flags trinogen writes because of it."""

    repository: str
    digest: str | None = None
    pull_policy: str | None = None
    pull_secrets: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()  # the JDK-8329528 pair when the chart leaves it out
    config: Lines = ()
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: ImageOption, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Image | None:
    """The cluster's image, or None when the option does not pin its version (reported)."""
    raw = d.get("trinoVersion")
    version = str(raw) if type(raw) in (int, str) else ""
    if not version.isdigit():
        return None  # reported at trinoVersion
    wrong = version_problem(option, version)
    if wrong:
        c.error(FIELD, wrong)
        return None
    image = image_values(option, version, s.chart.image_repository)["image"]
    return Image(image["repository"], image.get("digest"), image.get("pullPolicy"),
                 option.pull_secrets, pinned_region_flags(image, version))
