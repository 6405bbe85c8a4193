"""What each module of an option kind provides (`trinogen.kinds`): typed, checked by mypy.

A kind's modules are imported by name (`importlib`), so these Protocols are how the callers
type them: `named.parser` for `options`, `model.kinds` for `document`, `render.kinds` for
`values` (and its `manifests`, when it has them). Annotations and one plain tuple (`Manifest`):
nothing here runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from trinogen.model import Cluster
    from trinogen.model.checker import Checker
    from trinogen.settings import Settings

Lines = tuple[tuple[str, str], ...]


class Part(Protocol):
    """A kind's value for one cluster (what `document.fill` returns), and what it adds to Trino.

    `config` lines join both roles' config.properties (the chart's additionalConfigProperties),
    `coordinator` lines the coordinator's only (coordinatorExtraConfig); both are merged with the
    document's own lines by `model.assemble`. `files` are (name, text) of files the chart puts
    beside config.properties on the coordinator (coordinator.additionalConfigFiles, in
    /etc/trino: a resource-groups JSON, an event listener's .properties); their names are the
    kind's own, never a document's, and not one the chart writes itself. A kind that adds none
    returns ().

    Two optional attributes (read with getattr, absent from every kind that needs neither):
    `worker`, lines of the workers' config.properties only (workerExtraConfig), and `secrets`,
    the `ServerSecret`s behind the `${ENV:...}` references in the kind's lines and files (they
    join the cluster's env Secret, and a document placeholder naming one is refused).
    """

    @property
    def config(self) -> Lines: ...

    @property
    def coordinator(self) -> Lines: ...

    @property
    def files(self) -> Lines: ...


class OptionsModule(Protocol):
    """`trinogen.kinds.<kind>.options`: what the platform names (the settings layer)."""

    def parse(self, where: str, raw: Mapping[str, Any]) -> Any:
        """One entry `<kind>.<name>` of the settings file -> a frozen option, or ConfigError
        naming `<where>.<field>`."""


class DocumentModule(Protocol):
    """`trinogen.kinds.<kind>.document`: what a document may write (the model layer)."""

    FIELD: str  # the document's top-level field that picks an option by name

    def fill(self, option: Any, cluster_id: str, owner: str, d: Mapping[str, Any], s: Settings,
             c: Checker) -> Part | None:
        """The picked option made this cluster's value (patterns filled, checked); None when a
        problem was recorded on `c` (errors name the document field)."""


class SelfPickingModule(DocumentModule, Protocol):
    """The `document` module of a kind in `trinogen.kinds.SELF_PICKED`: it picks for itself."""

    def pick(self, value: Any, d: Mapping[str, Any], s: Settings, c: Checker) -> Any:
        """What the cluster picked from the field's `value` and the merged document `d` (the
        option `fill` is given), None for nothing; problems on `c`."""


class ValuesModule(Protocol):
    """`trinogen.kinds.<kind>.values`: what the cluster's value adds to the chart's values."""

    def values(self, part: Any, s: Settings) -> Any:
        """The template variable `<kind>` that templates/values/<kind>.yaml.j2 writes (plain
        values; anything the chart runs through Helm's tpl escaped here)."""


class Manifest(NamedTuple):
    """A Kubernetes object of a kind's own, a file under the cluster's `manifests/` (deployed by
    its Application): a PodDisruptionBudget, a NetworkPolicy."""

    file: str  # its name under manifests/ (`pdb-worker.yaml`); the kind's own, never a document's
    template: str  # the template that writes it (in render.templates.TEMPLATE_NAMES)
    variables: Mapping[str, Any]  # the template's, besides `header` and `cluster`
    kind: str  # the object's kind and name, listed for the object checks (render/objects.py)
    name: str


class ManifestsModule(Protocol):
    """A kind's `values` module that also writes objects of its own (optional: `render.kinds`
    asks only the modules that define it)."""

    def manifests(self, part: Any, cluster: Cluster, s: Settings) -> tuple[Manifest, ...]:
        """The cluster's objects of this kind, in the order they are written."""
