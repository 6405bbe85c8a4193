"""`images:` options: where a cluster's Trino image comes from (issue 21, item 6).

    images:
      mirror:
        repository: registry.example.com/trino/trino   # default: chart.image_repository
        digests:                                      # optional: pin each Trino version
          "476": sha256:0f1e...                       #   (64 hex digits)
        pull_policy: IfNotPresent                     # default: the chart's (IfNotPresent)
        pull_secrets: [registry-credentials]          # Secrets in each cluster's namespace

The document's `trinoVersion` stays the image's tag and the registry's version: with `digests`
the option pins every version it allows, and a version it does not list fails the document
(the image would otherwise run another Trino than the one its properties were checked against).

The chart adds two JVM flags for JDK-8329528 only for the stock image (`trinodb/trino`, no
digest) newer than 447; every Trino above 447 needs them (its own recommended jvm.config has
them), so for any other image trinogen writes them itself (`pinned_region_flags`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trinogen.errors import ConfigError
from trinogen.settings.options import metadata

FIELDS = ("repository", "digests", "pull_policy", "pull_secrets")
PULL_POLICIES = ("IfNotPresent", "Always", "Never")
STOCK_REPOSITORY = "trinodb/trino"  # the chart's own image (values.yaml image.repository)
# distribution/reference's grammar: an optional registry host (with a port) and path components
# of lowercase letters and digits joined by '.', '_', '__' or dashes; no tag or digest.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_LABEL = r"[A-Za-z0-9](?:[-A-Za-z0-9]*[A-Za-z0-9])?"
_HOST = rf"{_LABEL}(?:\.{_LABEL})*(?::[0-9]+)?"
_REPOSITORY = re.compile(rf"(?:{_HOST}/)?{_COMPONENT}(?:/{_COMPONENT})*")
_DIGEST = re.compile(r"sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128}")
_VERSION = re.compile(r"[1-9][0-9]{2,3}")
# The flags of JDK-8329528 the chart writes for its stock image newer than 447.
PINNED_REGION_FLAGS = ("-XX:+UnlockDiagnosticVMOptions", "-XX:G1NumCollectionsKeepPinned=10000000")
PINNED_SINCE = 448


@dataclass(frozen=True)
class ImageOption:
    repository: str | None = None  # None: the settings' chart.image_repository
    digests: tuple[tuple[str, str], ...] = ()  # (Trino version, digest), sorted
    pull_policy: str | None = None  # None: the chart's
    pull_secrets: tuple[str, ...] = ()


def parse(where: str, raw: Mapping[str, Any]) -> ImageOption:
    """One entry of `images:`; ConfigError names `images.<name>.<field>`."""
    metadata.known_fields(where, raw, FIELDS)
    repository = metadata.text(where, raw, "repository")
    if repository is not None and (len(repository) > 255 or not _REPOSITORY.fullmatch(repository)):
        raise ConfigError(f"{where}.repository: {repository!r} is not an image repository "
                          "([registry/]path of lowercase components, without a tag or digest: "
                          "the tag is the document's trinoVersion)")
    pull_policy = raw.get("pull_policy")
    if pull_policy is not None and pull_policy not in PULL_POLICIES:
        raise ConfigError(f"{where}.pull_policy: {pull_policy!r}; choose one of: "
                          f"{', '.join(PULL_POLICIES)}")
    return ImageOption(repository, _digests(f"{where}.digests", raw.get("digests")), pull_policy,
                       _secrets(f"{where}.pull_secrets", raw.get("pull_secrets")))


def _digests(where: str, raw: Any) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping) or not raw:
        raise ConfigError(f"{where} must be a mapping of Trino versions to image digests")
    out = [_digest(where, version, digest) for version, digest in raw.items()]
    if len({v for v, _ in out}) != len(out):  # 476 and "476"
        raise ConfigError(f"{where}: a Trino version is listed twice")
    return tuple(sorted(out))


def _digest(where: str, version: Any, digest: Any) -> tuple[str, str]:
    text = str(version) if type(version) in (int, str) else ""
    if not _VERSION.fullmatch(text):
        raise ConfigError(f"{where}: {version!r} is not a Trino version (such as \"476\")")
    if type(digest) is not str or not _DIGEST.fullmatch(digest):
        raise ConfigError(f"{where}.{text}: {digest!r} is not an image digest "
                          "(sha256: and 64 lowercase hex digits)")
    return text, digest


def _secrets(where: str, raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(type(n) is str for n in raw):
        raise ConfigError(f"{where} must be a list of Secret names")
    for name in raw:
        wrong = metadata.object_name(name)
        if wrong:
            raise ConfigError(f"{where}: {name!r}: {wrong}")
    if len(set(raw)) != len(raw):
        raise ConfigError(f"{where}: a Secret is named twice")
    return tuple(raw)


def digest_for(option: ImageOption, version: str) -> str | None:
    """The digest the option pins `version` to; None when it pins none."""
    return dict(option.digests).get(version)


def version_problem(option: ImageOption, version: str) -> str | None:
    """Why a cluster of this Trino version cannot use the option, or None."""
    if option.digests and digest_for(option, version) is None:
        pinned = ", ".join(v for v, _ in option.digests)
        return (f"the image option pins Trino versions {pinned} by digest, not {version}: "
                "ask the platform to add a digest for it, or pick another version")
    return None


def image_values(option: ImageOption, version: str, default_repository: str) -> dict[str, Any]:
    """The chart's `image` (and `imagePullSecrets`) for one cluster of `version`."""
    image: dict[str, Any] = {"repository": option.repository or default_repository,
                             "tag": version}
    digest = digest_for(option, version)
    if digest is not None:
        image["digest"] = digest  # the chart then writes repository@digest
    if option.pull_policy is not None:
        image["pullPolicy"] = option.pull_policy
    values: dict[str, Any] = {"image": image}
    if option.pull_secrets:
        values["imagePullSecrets"] = [{"name": n} for n in option.pull_secrets]
    return values


def pinned_region_flags(image: Mapping[str, Any], version: str) -> tuple[str, ...]:
    """The JDK-8329528 flags trinogen must write itself: those the chart leaves out for an image
    that is not its stock one (chart's configmap-*.yaml), for a Trino that needs them."""
    stock = (image.get("repository") == STOCK_REPOSITORY and not image.get("digest")
             and not image.get("registry") and not image.get("useRepositoryAsSoleImageReference"))
    if stock or not version.isdigit() or int(version) < PINNED_SINCE:
        return ()
    return PINNED_REGION_FLAGS
