"""The desired tree: what the GitOps repository should hold for the documents read.

One path, in small steps:

    select what the render cache cannot serve -> classify -> resolve secrets -> render -> record

The render cache wraps that path (`trinogen.served`): it answers the documents whose files are
already in the repository, and records what this run rendered; with no cache every document
takes the path. A per-cluster failure becomes a `Failed`, never an exception.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import NamedTuple

from trinogen import model
from trinogen.ahead import Ahead, Item, Rendered, judge_all, render_files, secret_paths
from trinogen.cache import value_digest
from trinogen.errors import ConfigError, Problem, SecretProblem
from trinogen.model import (
    Classified,
    Cluster,
    Disabled,
    Failed,
    RawDocument,
    declares_stopped,
    field_path,
    settled,
)
from trinogen.model.checker import capped
from trinogen.model.library import NO_LIBRARY, Library, references
from trinogen.model.secret_values import VALUE_CHECKS
from trinogen.model.substitution import trino_substitution
from trinogen.plan import DesiredFile
from trinogen.ports import FanOut, ReaderFactory, RenderCacheStore, SecretReader
from trinogen.redact import value_tagger
from trinogen.render import Renderer, helm_escape, prop_key, prop_value
from trinogen.secrets import SecretData, SecretUse
from trinogen.served import Judge, Made, Pending, Served
from trinogen.settings import Settings

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
VAULT_PARALLEL_READS = 8
PROGRESS_EVERY = 200  # clusters rendered between two progress reports


def no_progress(stage: str, done: int, total: int) -> None:
    return None


@dataclass
class Desired:
    """What the repository should hold for the documents read."""

    docs: dict[str, str] = field(default_factory=dict)  # rendered cluster -> document _id
    files: dict[str, dict[str, DesiredFile]] = field(default_factory=dict)  # cluster -> path -> file
    failed: list[Failed] = field(default_factory=list)
    disabled: list[Disabled] = field(default_factory=list)
    extra: dict[str, DesiredFile] = field(default_factory=dict)  # the app-of-apps
    vault_requests: int = 0
    cache_hits: int = 0
    secret_texts: set[str] = field(default_factory=set)  # inline mode: values to mask
    secret_keys: set[str] = field(default_factory=set)  # inline mode: properties holding secrets
    warnings: list[Problem] = field(default_factory=list)
    stopped: set[str] = field(default_factory=set)  # clusters whose compute is stopped
    library_read: bool = False  # the catalog library was read: every catalog document judged
    # Served from the cache for a rollout's held wave: blob ids of what they would render to,
    # with no content (the rollout step keeps git's files for them).
    pending: set[str] = field(default_factory=set)

    def render_hash(self, cluster_id: str) -> str:
        h = hashlib.sha256()
        for path, file in sorted(self.files.get(cluster_id, {}).items()):
            h.update(f"{path}\0{file.blob}\n".encode())
        return h.hexdigest()[:16]

    def render_hashes(self) -> dict[str, str]:
        return {cid: self.render_hash(cid) for cid in self.files}


@dataclass(frozen=True)
class Secrets:
    """What this run read from Vault: data and problems by secret path."""

    data: dict[str, SecretData] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # path -> why it cannot be used
    requests: int = 0

    @property
    def versions(self) -> dict[str, int | None]:
        return {p: d.version for p, d in self.data.items()}


class Context(NamedTuple):
    """Everything the desired-tree stage takes besides the documents: one run's settings, its
    adapters and what the run already read, received whole (a new need is a field here, not
    one more parameter on the main path). A NamedTuple: cheaper to create at import than a
    frozen dataclass, which every run, a no-op too, would pay (docs/benchmarks.md)."""

    settings: Settings
    renderer: Renderer
    reader_factory: ReaderFactory | None = None  # Vault, built only when a document needs it
    inline: bool = False  # secrets.mode inline, opted in (pipeline.inline_mode)
    progress: Progress = no_progress
    cache: RenderCacheStore | None = None  # the render cache; its hits need `tree`
    tree: Mapping[str, str] | None = None  # the repository's tree (path -> blob id)
    library: Library = NO_LIBRARY  # the catalog library, when the documents read use it
    # Each contested clusterId -> the document _id the repository holds it for (None: the
    # repository was not read, as in `render`).
    held: Mapping[str, str] | None = None
    # The clusters a rollout holds this run (their cached entry answers: not rendered); None
    # without waves.
    pending: Pending | None = None
    # Classify and render of a large sync on other cores (`trinogen.pool`); None: all here.
    fan_out: FanOut | None = None


def build_desired(ctx: Context, raws: list[RawDocument]) -> Desired:
    """Validate, resolve and render; every per-cluster failure becomes a Failed, never raised.
    With a render cache and the repository's tree, documents whose rendered files are already
    in the repository (same document bytes, same templates and settings, same secret versions)
    are neither validated nor rendered again. `raws` is emptied once judged (issue 22: the
    documents make room for the files); a caller that reads them afterwards passes a copy."""
    settings, renderer, library, held = ctx.settings, ctx.renderer, ctx.library, ctx.held
    inline, cache, tree = ctx.inline, ctx.cache, ctx.tree
    # Without a library read, no document references one: keys stay those of the bytes alone.
    served = Served.select(raws[:], renderer.fingerprint, cache, tree, inline=inline,
                           dependencies=None if library is NO_LIBRARY
                           else _shared_catalogs(settings, library), pending=ctx.pending)
    # Before any Vault read: the workers fork without a secret and render none that uses one.
    ahead = Ahead.of(ctx.fan_out, served.misses, settings, library, renderer, inline=inline,
                     keep=ctx.pending is not None)  # with waves, the rollout step reads them
    clusters, classified = _classify(served.misses, settings, library, served.judge(
        ahead.judge(lambda raw: model.classify(raw, settings, library))), held, ahead.contested)
    ahead.outcomes.clear()  # judged: the clusters are held by `clusters` alone (render_all)
    for judged in (raws, served.misses):  # and no document that took the path is read again
        judged.clear()
    # Each invalid catalog document once, then its users (each naming it).
    desired = Desired(disabled=classified.disabled, failed=[*library.failed, *classified.failed],
                      library_read=library is not NO_LIBRARY)
    secrets = read_secrets(sorted(secret_paths(clusters) | served.secret_paths()), settings,
                           ctx.reader_factory, inline=inline)
    desired.vault_requests = secrets.requests
    # A hit whose secrets rotated (or vanished) takes the path again.
    more, rotated = _classify(served.drop_stale(secrets.versions, secrets.errors), settings,
                              library, held=held)
    clusters += more
    desired.failed += rotated.failed
    _add_served(desired, served, settings)
    desired.pending = served.pending() if ctx.pending is not None else set()  # waves only
    ahead.with_secrets(ctx.fan_out, clusters, secrets.data, renderer, inline=inline,
                       ready=lambda c: not secret_problems(c, secrets))
    made = render_all(desired, clusters, secrets, renderer, inline=inline,
                      progress=ctx.progress, ahead=ahead)
    desired.stopped.update(m.cluster_id for m in made
                           if m.stopped and m.cluster_id in desired.files)  # rendered fine
    served.record(_rendered(desired, made), secrets.versions)
    if inline:
        _collect_masks(desired, clusters, secrets)
    desired.extra = served.root_app(renderer.render_root_app)
    return desired


def _classify(
    raws: list[RawDocument], settings: Settings, library: Library, own: Judge | None = None,
    held: Mapping[str, str] | None = None, contested: Mapping[str, list[int]] | None = None,
) -> tuple[list[Item], Classified]:
    """Validate what the cache could not serve (`own`: the cache's judge of one document;
    `held`: clusterId -> the document _id the repository holds it for, for contested ones;
    `contested`: `Ahead.contested`): the clusters (rendered ahead: `Made`) in order, the rest.
    Disabled documents are settled from their raw bodies (they claim no clusterId), so when
    nothing else is left, as in a sync where nothing changed, the validator is not even
    imported (`trinogen.model` loads it on first use)."""
    disabled = []
    for raw in raws:
        outcome = settled(raw)
        if not isinstance(outcome, Disabled):
            return judge_all(raws, own or (lambda r: model.classify(r, settings, library)),
                             held, contested)
        disabled.append(outcome)
    return [], Classified.of(disabled)


def _shared_catalogs(
    settings: Settings, library: Library
) -> Callable[[Mapping[str, object]], bytes | None]:
    """The digest of the documents of the shared catalogs a document may use, for its
    render-cache key: hashed once per set of names, beside each document's own digest, rather
    than each using document encoded again with its catalogs (issue 22)."""
    digests: dict[tuple[str, ...], bytes] = {}

    def catalogs(body: Mapping[str, object]) -> bytes | None:
        names = tuple(sorted(references(body, settings.defaults, settings.profiles)))
        if not names:
            return None
        if names not in digests:
            sources = [[n, list(library.sources.get(n, ()))] for n in names]
            digests[names] = value_digest({"catalogs": sources}) or b""
        return digests[names]

    return catalogs


def _add_served(desired: Desired, served: Served, settings: Settings) -> None:
    """The files the cache answered for, exactly as the repository holds them."""
    for entry in served.entries():
        desired.docs[entry.cluster_id] = entry.doc_id
        desired.files[entry.cluster_id] = {p: DesiredFile(b, None) for p, b in entry.files.items()}
        desired.warnings.extend(Problem(*w) for w in entry.warnings)
    desired.cache_hits = len(served.hits)
    desired.stopped.update(entry.cluster_id for raw, _, entry in served.hits.values()
                           if declares_stopped(raw.head, settings))


def _rendered(desired: Desired, made: Iterable[Made]) -> Iterator[tuple[Made, dict[str, str]]]:
    """Each cluster rendered in this run with its files' blob ids (lazily: only a cache asks)."""
    for c in made:
        if desired.docs.get(c.cluster_id) == c.doc_id:
            yield c, {p: f.blob for p, f in desired.files[c.cluster_id].items()}


# --- secrets -------------------------------------------------------------------------------


def read_secrets(
    paths: list[str], settings: Settings, reader_factory: ReaderFactory | None, *,
    inline: bool = False,
) -> Secrets:
    """Read each distinct Vault path once.

    Vault being down or refusing the login raises (the whole run fails before any commit); a
    missing or forbidden path is returned as a problem that fails only the clusters using it.
    """
    if not paths or (not settings.secrets.check and not inline):
        return Secrets()
    if reader_factory is None:
        raise ConfigError("documents use secret placeholders but no Vault client is configured")
    reader = reader_factory()
    data: dict[str, SecretData] = {}
    errors: dict[str, str] = {}
    # Round trips dominate: a few reads in flight at once (each path is still read exactly once).
    with ThreadPoolExecutor(max_workers=min(VAULT_PARALLEL_READS, len(paths))) as pool:
        for path, read, error in pool.map(lambda p: _read_one(reader, p), paths):
            if read is not None:
                data[path] = read
            else:
                errors[path] = error or "unreadable"
    return Secrets(data, errors, int(reader.requests))


def _read_one(reader: SecretReader, path: str) -> tuple[str, SecretData | None, str | None]:
    try:
        return path, reader.read(path), None
    except SecretProblem as e:
        return path, None, str(e)


def secret_problems(cluster: Cluster, secrets: Secrets) -> list[Problem]:
    """The cluster's placeholders whose Vault path failed or lacks the key."""
    if not secrets.data and not secrets.errors:
        return []  # nothing was read (reference checks off)
    problems = []
    for where, use in _uses_with_fields(cluster):
        message = _secret_problem(use, secrets, in_file=where.startswith("Secret "))
        if message:
            problems.append(Problem(cluster.cluster_id, where, message))
    for s in cluster.server_secrets:  # values Trino itself checks at startup
        data = secrets.data.get(s.use.ref.secret_path)
        check = VALUE_CHECKS.get(s.key)
        if check is None or data is None or s.use.ref.key not in data.values:
            continue  # no rule, or reported above
        wrong = check(data.values[s.use.ref.key].reveal())  # never quoted: it is a secret
        if wrong:
            problems.append(Problem(cluster.cluster_id, s.path, f"placeholder "
                                    f"{s.use.placeholder.text}: {wrong}"))
    return problems


def _secret_problem(use: SecretUse, secrets: Secrets, *, in_file: bool) -> str | None:
    path = use.ref.secret_path
    if path in secrets.errors:
        return f"placeholder {use.placeholder.text}: {secrets.errors[path]}"
    if use.ref.key not in secrets.data[path].values:
        return (f"placeholder {use.placeholder.text}: Vault secret {path} has no key "
                f"{use.ref.key!r} (or its value is not a string)")
    # A property's value is substituted again by the connector's own configuration (Trino 476,
    # tests/test_trino_real_substitution.py): the Vault value is judged like a document's text.
    found = None if in_file else trino_substitution(secrets.data[path].values[use.ref.key].reveal())
    if found is not None:  # the message never quotes the value: it is a secret
        return (f"placeholder {use.placeholder.text}: the value of Vault secret {path} key "
                f"{use.ref.key!r} holds Trino's secret substitution (${{<provider>:...}}), "
                "which Trino would resolve from the pods' environment; store the value itself")
    return None


def _uses_with_fields(cluster: Cluster) -> Iterable[tuple[str, SecretUse]]:
    for conn in cluster.connectors:
        for key, segments in conn.properties:
            for seg in segments:
                if isinstance(seg, SecretUse):
                    yield field_path(f"connectors[\"{conn.name}\"]", "properties", key), seg
    for s in cluster.server_secrets:
        yield s.path, s.use
    # Secrets of files (attached files, keystores): named by the Secret and key they fill, since
    # the document field that holds each placeholder is the feature's own.
    for fs in cluster.file_secrets:
        for key, use in fs.files:
            yield f"Secret {fs.name}, key {key}", use
    for use in cluster.exchange.secret_uses if cluster.exchange else ():
        yield "faultTolerance.exchange", use


def _collect_masks(desired: Desired, clusters: Iterable[Item], secrets: Secrets) -> None:
    """Inline mode: the values, and the properties holding them, that diffs must hide."""
    for data in secrets.data.values():
        desired.secret_texts.update(v.reveal() for v in data.values.values())
    for c in clusters:  # inline, a worker sends each cluster it rendered whole, not a Made
        desired.secret_keys.update(_secret_keys(c) if isinstance(c, Cluster) else ())


def _secret_keys(c: Cluster) -> set[str]:
    """The keys of the properties holding a secret: the catalogs' and the exchange manager's."""
    exchange = c.exchange.properties if c.exchange else ()  # values.yaml list lines
    lines = [*(line for conn in c.connectors for line in conn.properties), *exchange]
    return {k for k, segs in lines if any(isinstance(s, SecretUse) for s in segs)}


# --- rendering -----------------------------------------------------------------------------


def render_all(
    desired: Desired, clusters: list[Item], secrets: Secrets, renderer: Renderer, *,
    inline: bool, progress: Progress, ahead: Ahead | None = None,
) -> list[Made]:
    """Render every cluster into `desired`; a cluster that cannot be rendered becomes Failed.
    A cluster `ahead` rendered on another core (it uses no secret) is taken from there (what a
    worker rendered arrives as a `Made`, its files in `ahead`).
    `clusters` is emptied (but inline: the masks need them): each is let go once rendered,
    what the run needs of it kept as a `Made` (issue 22: the peak held them and the files)."""
    total, made, queue = len(clusters), [], deque(clusters)
    ahead = ahead or Ahead()
    render: Callable[[Cluster], Rendered] = lambda c: _render_one(c, secrets, renderer, inline)
    if not inline:
        clusters.clear()
    for i in range(1, total + 1):
        cluster = queue.popleft()
        made.append(cluster if isinstance(cluster, Made) else Made.of(cluster))
        desired.warnings.extend(cluster.warnings)
        rendered = ahead.take_or(cluster, render)
        if isinstance(rendered, Failed):
            desired.failed.append(rendered)
            continue
        desired.docs[cluster.cluster_id] = cluster.doc_id
        desired.files[cluster.cluster_id] = rendered
        if i % PROGRESS_EVERY == 0 or i == total:
            progress("render", i, total)
    return made


def _render_one(cluster: Cluster, secrets: Secrets, renderer: Renderer, inline: bool) -> Rendered:
    problems = secret_problems(cluster, secrets)
    if problems:
        return Failed(cluster.doc_id, cluster.cluster_id, capped(
            problems, renderer.settings.validation.max_problems), "secrets")
    return render_files(cluster, secrets.data, renderer, inline)


def masker(desired: Desired, *, inline: bool = False) -> Callable[[str], str]:
    """Hides inline secret values in a diff, in every form they take in a rendered file."""
    # As is, Properties-escaped, and Helm-escaped inside values.yaml's catalogs ({{ -> {{"{{"}}).
    forms = sorted({f for s in desired.secret_texts if s
                    for f in (s, prop_value(s), helm_escape(prop_value(s)))},
                   key=len, reverse=True)
    # Whole lines of secret-bearing properties too: the old side of a diff holds values from
    # before a rotation, which this run never read.
    names = "|".join(re.escape(prop_key(k)) for k in sorted(desired.secret_keys))
    # (also as values.yaml list items: additionalExchangeManagerProperties' `- "key=value"`)
    line = re.compile(rf"^(\s*(?:-\s+\"?)?(?:{names})=).*$", re.MULTILINE) if names else None
    # In inline mode the old side may hold a secret this run no longer knows of (a document
    # stopped using the placeholder): every catalog property value is shown as a tag instead.
    tag = value_tagger() if inline else None
    if not forms and line is None and tag is None:
        return lambda text: text

    def mask(text: str) -> str:
        for form in forms:
            text = text.replace(form, "***")
        text = line.sub(r"\g<1>***", text) if line is not None else text
        return tag(text) if tag is not None else text

    return mask
