"""One document -> `Cluster`, `Disabled` or `Failed`; and the rules that span documents.

`classify()` merges the settings' defaults and profile under a document and walks it top-down:
identity here (`_head`), then each feature's reader in turn (`_parts`: `clusterConfig` in
`roles`, `properties` in `properties`, `connectors` in `connectors`...); `assemble.build()` makes
the Cluster from those parts. `classify_all()` adds what only the whole set can tell (a clusterId
claimed twice: `claims`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from trinogen.model.access import access_control
from trinogen.model.assemble import Head, Parts, build
from trinogen.model.checker import MAPS, Checker, field_path, show
from trinogen.model.claims import settle_clusters
from trinogen.model.connectors import Binding, connectors
from trinogen.model.fault_tolerance import fault_tolerance
from trinogen.model.file_paths import check_file_paths, mounted_files
from trinogen.model.files import AttachedFiles, attached_files
from trinogen.model.kinds import Parts as KindParts
from trinogen.model.kinds import check_private
from trinogen.model.library import NO_LIBRARY, Library
from trinogen.model.names import reserved
from trinogen.model.operation import operation
from trinogen.model.properties import Props, properties, server_properties
from trinogen.model.raw import claimed_by, document_label, settled
from trinogen.model.raw_document import RawDocument
from trinogen.model.roles import Sizing, check_memory, cluster_config
from trinogen.model.rules import (
    CLUSTER_ID,
    LABEL_VALUE,
    MAX_CLUSTER_ID,
    MAX_INT,
    TOP_FIELDS,
    TRINO_VERSION,
)
from trinogen.model.server_secrets import ServerBinding
from trinogen.model.spooling import SpoolingProtocol, spooling
from trinogen.model.spooling import check_private as check_spooling_private
from trinogen.model.trino import TrinoCheck, log_lines
from trinogen.model.types import Cluster, Connector, Failed, Identity, Outcome
from trinogen.model.workload import workload
from trinogen.secrets import SecretUse
from trinogen.settings import Settings

if TYPE_CHECKING:  # annotations only: the kind's module loads for a document that picks one
    from trinogen.kinds.authentication.document import AuthParts


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Maps merge key by key; lists and scalars in `over` replace; None removes the key."""
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, MAPS) and isinstance(out.get(key), MAPS):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def classify(raw: RawDocument, settings: Settings, library: Library = NO_LIBRARY) -> Outcome:
    """Validate one document (defaults and profile merged underneath it); `library` holds the
    shared catalogs its connectors may reference."""
    label = document_label(raw)
    done = settled(raw, label)
    if done is not None:
        return done
    cid = claimed_by(label)
    c = Checker(label, settings.validation.unknown_fields, settings.validation.max_problems)
    cluster = c.run(lambda: _cluster(_merged(raw.body, settings, c), raw.doc_id, settings, c,
                                     library))
    if c.problems or cluster is None:
        if not c.problems:  # pragma: no cover - _cluster returns None only with problems
            c.error("", "invalid document")
        return Failed(raw.doc_id, cid, c.listed())
    return cluster


def classify_all(raws: Iterable[RawDocument], settings: Settings,
                 library: Library = NO_LIBRARY,
                 own: Callable[[RawDocument], Outcome] | None = None,
                 held: Mapping[str, str] | None = None) -> list[Outcome]:
    """Classify every document, then settle the clusterIds several enabled documents claim.

    `own` judges one document on its own (default: `classify`; the render cache's remembers
    failures): every rule that spans documents comes after it, so its outcome never depends on
    another document. `held` maps a clusterId to the document _id the GitOps repository holds it
    for (None: not read): that document keeps it, the others fail (`model.claims`); when none is
    held, all fail, never a silent pick. A disabled document claims nothing.
    """
    raws = list(raws)
    outcomes = [classify(raw, settings, library) if own is None else own(raw) for raw in raws]
    return settle_clusters(outcomes, raws, held)


def _merged(body: Mapping[str, Any], settings: Settings, c: Checker) -> Mapping[str, Any]:
    merged: Mapping[str, Any] = deep_merge(settings.defaults, {})
    profile = body.get("profile")
    if profile is not None:
        if type(profile) is not str or profile not in settings.profiles:
            known = ", ".join(sorted(settings.profiles)) or "none are configured"
            c.error("profile", f"{show(profile)} is not a known profile ({known})")
        else:
            merged = deep_merge(merged, settings.profiles[profile])
    return deep_merge(merged, body)


def _cluster(d: Mapping[str, Any], doc_id: str, s: Settings, c: Checker,
             library: Library = NO_LIBRARY) -> Cluster | None:
    c.fields(d, "", TOP_FIELDS)
    head = _head(d, s, c)
    if s.tenants or s.profile_requirements:  # else every document may pick every option
        from trinogen.model.tenancy import scope

        scope(d, head.owner, s, c)
    parts = _parts(d, head, TrinoCheck.of(head.version, s.validation, c), s, c, library)
    if c.problems:
        return None
    return build(doc_id, head, parts, c.listed_warnings())


def _head(d: Mapping[str, Any], s: Settings, c: Checker) -> Head:
    """clusterId, owner and trinoVersion (and `enabled`'s type), in this order."""
    cluster_id = _cluster_id(d.get("clusterId"), s, c)
    owner = c.string(
        d.get("owner"), "owner", pattern=LABEL_VALUE, max_len=63,
        rule="use letters, digits, '-', '_' and '.', start and end with a letter or digit, at "
        "most 63 characters (it becomes a Kubernetes label)",
    )
    c.boolean(d.get("enabled"), "enabled")
    version = _trino_version(d.get("trinoVersion"), s.validation.min_trino_version, c)
    return Head(cluster_id, owner, version)


def _parts(d: Mapping[str, Any], head: Head, trino: TrinoCheck, s: Settings, c: Checker,
           library: Library) -> Parts:
    """Every feature's reader in turn (the order is the order of the problems reported)."""
    cluster_id, owner = head.cluster_id, head.owner
    cc = c.mapping(d.get("clusterConfig"), "clusterConfig")
    binding = Binding(cluster_id, owner, s.secrets, s)
    bind = ServerBinding(binding)  # placeholders in server properties (issue 13)
    props = properties(d.get("properties"), "properties", c, required=False, bind=bind)
    sizing = cluster_config(cc, props, trino, c, bind)
    destination = _destination(d.get("destination"), s, c)
    found = connectors(d.get("connectors"), binding, trino, c, library)
    server = server_properties(props, trino, c)
    ft = fault_tolerance(d.get("faultTolerance"), props, s, Identity(cluster_id, owner), c)
    spool = spooling(d.get("spooling"), s.options("storage"), Identity(cluster_id, owner),
                     head.version, c)
    files = attached_files(d.get("files"), cluster_id, binding, c)
    # Every feature's mounts count: a property naming a file must name a mounted one.
    check_file_paths(props, {"coordinator": sizing.coordinator, "worker": sizing.worker},
                     found or (), mounted_files(files.mounts, files.config_maps,
                                                files.file_secrets), c)
    uses = _Uses(bind, found, files)  # listed only if a check below reads it
    auth = _authentication(d.get("authentication"), head, s, c, (props, sizing), uses)
    check_spooling_private(s.options("storage"), Identity(cluster_id, owner), uses, c)
    log = log_lines(trino.log_levels(d.get("logLevels")))
    check_memory(sizing, c)
    access, opa = access_control(d.get("accessControl"), s, c)
    picked = workload(d, cluster_id, owner, s, c, opa)
    check_private(picked.kinds, uses, c)
    _check_option_lines(props, sizing, spool, picked.kinds, c)
    op = operation(d, s, c, autoscaled=sizing.autoscaling is not None,
                   grace=sizing.grace_period_seconds, drain=sizing.drain_seconds,
                   cluster_id=cluster_id)
    return Parts(bind=bind, sizing=sizing, server=server, found=found, fault_tolerance=ft,
                 spooling=spool,
                 files=files, auth=auth, log=log, access=access, workload=picked, operation=op,
                 destination=destination, profile=d.get("profile"))


def _authentication(value: Any, head: Head, s: Settings, c: Checker,
                    written: tuple[Props, Sizing], uses: Iterable[tuple[str, SecretUse]]
                    ) -> AuthParts | None:
    """The authentication option the document picked, and what it owns that the document may
    not set or read; the kind's module is imported only for a document that picks one."""
    if value is None:
        return None
    from trinogen.kinds.authentication import document as auth

    picked = auth.authentication(value, s, head.cluster_id, head.owner, c)
    if picked is not None:
        auth.check_owned(value, _server_keys(*written), c)
        auth.check_private(picked, uses, c)
    return picked


def _check_option_lines(props: Props, sizing: Sizing, spool: SpoolingProtocol | None,
                        kinds: KindParts, c: Checker) -> None:
    """A key that a picked field's option writes is the option's: the document's own line of it
    would be a second line of one key in config.properties (`protocol.spooling.enabled=false`
    beside the spooling pick's `true`), and Trino keeps one of them."""
    owner = {key: "spooling" for key, _ in (spool.config if spool is not None else ())}
    for kind, part in kinds:
        for key, _ in (*part.config, *part.coordinator, *getattr(part, "worker", ())):
            owner.setdefault(key, f"the {kind} option it picked")
    if not owner:
        return  # no picked option writes a line (the document's keys are not listed)
    for key, path in _server_keys(props, sizing):
        if key in owner:
            c.error(path, f"{key} is written by trinogen from the document's {owner[key]}; "
                    "remove it")


class _Uses:
    """`_document_uses`, listed on the first pass over it and kept: the checks that read it
    (an authentication pick's secrets, a spooling key, a kind's private secrets) return before
    it when the cluster has nothing of theirs, as a plain document has not."""

    def __init__(self, bind: ServerBinding, found: tuple[Connector, ...] | None,
                 files: AttachedFiles) -> None:
        self._from = (bind, found, files)
        self._listed: list[tuple[str, SecretUse]] | None = None

    def __iter__(self) -> Iterator[tuple[str, SecretUse]]:
        if self._listed is None:
            self._listed = _document_uses(*self._from)
        return iter(self._listed)


def _document_uses(bind: ServerBinding, found: tuple[Connector, ...] | None,
                   files: AttachedFiles) -> list[tuple[str, SecretUse]]:
    """Every placeholder the document itself wrote, with its field path (its secret files'
    too: a file mounts the value as surely as a property holds it)."""
    uses = [(s.path, s.use) for s in bind.found]
    uses.extend((f"files[{json.dumps(key)}].secret", use)
                for secret in files.file_secrets for key, use in secret.files)
    for conn in found or ():
        for key, segments in conn.properties:
            uses.extend((field_path(f"connectors[{json.dumps(conn.name)}]", "properties", key), seg)
                        for seg in segments if isinstance(seg, SecretUse))
    return uses


def _server_keys(props: Props, sizing: Sizing) -> list[tuple[str, str]]:
    """Every server property a document sets, with where (a role's: its properties field)."""
    keys = [(k, path) for k, (_, path) in props.items()]
    for name, role in (("coordinator", sizing.coordinator), ("worker", sizing.worker)):
        if role is not None:
            keys.extend((k, f"clusterConfig.{name}.properties") for k, _ in role.extra_properties)
    return keys


def _cluster_id(value: Any, s: Settings, c: Checker) -> str | None:
    cluster_id = _cluster_id_text(value, c)
    why = reserved(cluster_id, s.argocd) if cluster_id is not None else None
    if why is not None:  # a name the platform owns (model.names)
        c.error("clusterId", f"{show(cluster_id)} {why}")
        return None
    return cluster_id


def _cluster_id_text(value: Any, c: Checker) -> str | None:
    if type(value) is str and len(value) > MAX_CLUSTER_ID:  # named, as every message names it
        c.error("clusterId", f"{show(value)} is {len(value)} characters long; at most "
                f"{MAX_CLUSTER_ID} are allowed: the chart names the worker Service "
                "\"<clusterId>-trino-worker\", and Kubernetes limits Service names to 63 "
                "characters")
        return None
    return c.string(
        value, "clusterId", pattern=CLUSTER_ID, max_len=MAX_CLUSTER_ID,
        rule="use lowercase letters, digits and '-', start with a letter, end with a letter or "
        f"digit, at most {MAX_CLUSTER_ID} characters (it names the Helm release and the "
        "namespace trino-<clusterId>)",
    )


def _trino_version(value: Any, minimum: int, c: Checker) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_INT:
        value = str(value)
    text = c.string(value, "trinoVersion", pattern=TRINO_VERSION,
                    rule="write a Trino release number such as \"476\"")
    if text is None:
        return None
    if int(text) < minimum:
        c.error("trinoVersion", f"is {text}; the oldest Trino release supported here is "
                f"{minimum} (validation.min_trino_version)")
        return None
    return text


def _destination(value: Any, s: Settings, c: Checker) -> tuple[str | None, str | None]:
    d = c.mapping(value, "destination", required=False)
    if d is None:
        return None, None
    c.fields(d, "destination", {"name", "server"})
    name = c.string(d.get("name"), "destination.name", required=False, max_len=253)
    server = c.string(d.get("server"), "destination.server", required=False, max_len=2048)
    if (name is None) == (server is None):
        c.error("destination", "set exactly one of name or server (Argo CD accepts one)")
        return None, None
    chosen = name or server
    if chosen not in s.argocd.allowed_destinations:
        allowed = ", ".join(s.argocd.allowed_destinations) or "none are allowed"
        c.error(f"destination.{'name' if name else 'server'}",
                f"{show(chosen)} is not an allowed destination (argocd.allowed_destinations: {allowed})")
        return None, None
    return name, server
