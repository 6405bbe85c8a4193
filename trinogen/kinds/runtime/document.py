"""`runtime: "<name>"`: a document (or its profile) picks a runtime option; its environment
values are filled with the cluster's clusterId and owner.

Pure: the option is the settings', the document only names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trinogen.model.checker import Checker
from trinogen.settings import Settings
from trinogen.settings.options import metadata

if TYPE_CHECKING:
    from trinogen.kinds.runtime.options import RuntimeOption

FIELD = "runtime"
Lines = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Runtime:
    env: Lines = ()  # (name, value) filled, sorted by name
    coordinator_jvm: tuple[str, ...] = ()  # each role's extra flags, in order
    worker_jvm: tuple[str, ...] = ()
    config: Lines = ()
    coordinator: Lines = ()
    files: Lines = ()


def fill(option: RuntimeOption, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
         c: Checker) -> Runtime:
    """The option for this cluster: patterns filled (they hold only {cluster} and {owner})."""
    env = tuple((n, metadata.fill(v, cluster_id, owner)) for n, v in option.env)
    return Runtime(env, option.flags("coordinator"), option.flags("worker"))
