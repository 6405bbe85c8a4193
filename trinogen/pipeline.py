"""The one path every command takes: read -> validate -> resolve -> render -> plan -> apply.

`validate()`, `render()` and `sync()` are the commands' single calls; `watch` calls `sync()` with
targets. The adapters (source, working copy, Vault) are built by the caller and passed in.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trinogen.cache import Entry as CacheEntry
from trinogen.cache import RenderCache, document_key
from trinogen.errors import ConfigError, GitUnavailable, Problem, SafetyRefusal
from trinogen.model import (
    Classified,
    Cluster,
    Disabled,
    Failed,
    RawDocument,
    claimed_cluster_id,
    classify_all,
    enabled_claims,
    field_path,
)
from trinogen.plan import (
    CurrentFile,
    DesiredFile,
    Guards,
    Layout,
    Plan,
    commit_message,
    make_plan,
    unified_diff,
)
from trinogen.render import (
    HEAD_BYTES,
    FileHeader,
    Renderer,
    RenderError,
    helm_escape,
    parse_header,
    prop_key,
    prop_value,
)
from trinogen.secrets import Resolved, SecretData, SecretUse
from trinogen.settings import Settings

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
VAULT_PARALLEL_READS = 8
ReaderFactory = Callable[[], Any]  # () -> trinogen.vault.VaultReader


def _no_progress(stage: str, done: int, total: int) -> None:
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

    def render_hash(self, cluster_id: str) -> str:
        h = hashlib.sha256()
        for path, file in sorted(self.files.get(cluster_id, {}).items()):
            h.update(f"{path}\0{file.blob}\n".encode())
        return h.hexdigest()[:16]


def inline_mode(settings: Settings, cli_opt_in: bool) -> bool:
    """Inline secrets need the opt-in in the settings AND on the command line."""
    if settings.secrets.mode != "inline":
        return False
    if not (settings.secrets.allow_inline and cli_opt_in):
        raise ConfigError(
            "secrets.mode is inline, which writes secret values into the GitOps repository: it "
            "needs secrets.allow_inline: true in the settings AND --allow-inline-secrets on the "
            "command line (use it only with an encrypted repository)"
        )
    log.warning("inline secrets: secret values are written into the GitOps repository in plain "
                "text; only safe if that repository is encrypted")
    return True


def build_desired(
    settings: Settings,
    raws: Iterable[RawDocument],
    renderer: Renderer,
    reader_factory: ReaderFactory | None,
    *,
    inline: bool = False,
    progress: Progress = _no_progress,
    cache: RenderCache | None = None,
    tree: Mapping[str, str] | None = None,
) -> Desired:
    """Validate, resolve and render; every per-cluster failure becomes a Failed, never raised.

    With a render cache and the repository's tree, documents whose rendered files are already
    in the repository (same document bytes, same templates and settings, same secret versions)
    are neither validated nor rendered again.
    """
    raws = list(raws)
    # Each document's cache key, computed once (BSON-encoding every document is not free).
    keys = {r.doc_id: _key(r, renderer) for r in raws} if cache is not None and not inline else {}
    hits = _cache_hits(raws, keys, cache, tree) if cache is not None and keys else {}
    misses = [r for r in raws if r.doc_id not in hits]
    outcomes = classify_all(misses, settings)
    sorted_out = Classified.of(outcomes)
    clusters = sorted_out.clusters
    desired = Desired(disabled=sorted_out.disabled, failed=list(sorted_out.failed))
    paths = {u.ref.secret_path for c in clusters for u in c.secret_uses}
    paths |= {p for _, _, entry in hits.values() for p in entry.versions}
    resolved, path_errors, desired.vault_requests = _read_secrets(
        sorted(paths), settings, reader_factory, inline=inline)
    versions = {p: d.version for p, d in resolved.items()}
    for doc_id, (raw, _, entry) in list(hits.items()):
        if any(p in path_errors or versions.get(p) != v for p, v in entry.versions.items()):
            del hits[doc_id]  # a secret rotated (or vanished): render this one again
            outcome = classify_all([raw], settings)[0]
            if isinstance(outcome, Cluster):
                clusters.append(outcome)
            elif isinstance(outcome, Failed):
                desired.failed.append(outcome)
    for raw, key, entry in hits.values():
        desired.docs[entry.cluster_id] = raw.doc_id
        desired.files[entry.cluster_id] = {p: DesiredFile(b, None) for p, b in entry.files.items()}
        desired.warnings.extend(Problem(*w) for w in entry.warnings)
        if cache is not None:
            cache.keep(key, entry)
    desired.cache_hits = len(hits)
    secret_problems = _secret_problems(clusters, resolved, path_errors)
    total = len(clusters)
    for i, cluster in enumerate(clusters, 1):
        desired.warnings.extend(cluster.warnings)
        problems = secret_problems.get(cluster.cluster_id)
        if problems:
            desired.failed.append(Failed(cluster.doc_id, cluster.cluster_id, tuple(problems), "secrets"))
            continue
        try:
            files = renderer.render_cluster(cluster, resolved, inline=inline)
        except RenderError as e:
            desired.failed.append(Failed(cluster.doc_id, cluster.cluster_id,
                                         (Problem(cluster.cluster_id, "", str(e)),), "render"))
            continue
        desired.docs[cluster.cluster_id] = cluster.doc_id
        desired.files[cluster.cluster_id] = {p: DesiredFile.of(c) for p, c in files.items()}
        fresh_key = keys.get(cluster.doc_id)
        if cache is not None and fresh_key:
            used = {u.ref.secret_path for u in cluster.secret_uses}
            cache.keep(fresh_key, CacheEntry(
                cluster_id=cluster.cluster_id, doc_id=cluster.doc_id,
                files={p: f.blob for p, f in desired.files[cluster.cluster_id].items()},
                versions={p: versions.get(p) for p in sorted(used)},
                warnings=tuple((w.cluster, w.field, w.message) for w in cluster.warnings),
            ))
        if i % 200 == 0 or i == total:
            progress("render", i, total)
    if inline:
        for data in resolved.values():
            desired.secret_texts.update(v.reveal() for v in data.values.values())
        for c in clusters:
            desired.secret_keys.update(k for conn in c.connectors for k, segs in conn.properties
                                       if any(isinstance(s, SecretUse) for s in segs))
    desired.extra = _root_app(renderer, cache, tree)
    return desired


def _root_app(
    renderer: Renderer, cache: RenderCache | None, tree: Mapping[str, str] | None
) -> dict[str, DesiredFile]:
    """The app-of-apps: from the cache when the repository holds exactly the cached blobs."""
    if cache is not None and tree is not None and cache.extra and all(
        tree.get(p) == b for p, b in cache.extra.items()
    ):
        files = {p: DesiredFile(b, None) for p, b in cache.extra.items()}
    else:
        files = {p: DesiredFile.of(c) for p, c in renderer.render_root_app().items()}
    if cache is not None:
        cache.used_extra = {p: f.blob for p, f in files.items()}
    return files


def _key(raw: RawDocument, renderer: Renderer) -> str | None:
    return document_key(raw.body, renderer.fingerprint) if isinstance(raw.body, Mapping) else None


def _cache_hits(
    raws: list[RawDocument], keys: Mapping[str, str | None], cache: RenderCache,
    tree: Mapping[str, str] | None,
) -> dict[str, tuple[RawDocument, str, CacheEntry]]:
    """Documents whose cached output is exactly what the repository holds now.

    Documents sharing a clusterId with another enabled document are never hits: they must be
    validated together to be reported as duplicates.
    """
    if tree is None:
        return {}
    claims = enabled_claims(raws)
    hits: dict[str, tuple[RawDocument, str, CacheEntry]] = {}
    for raw in raws:
        key = keys.get(raw.doc_id)
        entry = cache.get(key) if key else None
        if (
            key is not None
            and entry is not None
            and entry.doc_id == raw.doc_id
            and len(claims.get(entry.cluster_id, ())) == 1
            and all(tree.get(p) == b for p, b in entry.files.items())
        ):
            hits[raw.doc_id] = (raw, key, entry)
    return hits


def _uses_with_fields(cluster: Cluster) -> Iterable[tuple[str, SecretUse]]:
    for conn in cluster.connectors:
        for key, segments in conn.properties:
            for seg in segments:
                if isinstance(seg, SecretUse):
                    yield field_path(f"connectors[\"{conn.name}\"]", "properties", key), seg


def _read_secrets(
    paths: list[str],
    settings: Settings,
    reader_factory: ReaderFactory | None,
    *,
    inline: bool = False,
) -> tuple[dict[str, SecretData], dict[str, str], int]:
    """Read each distinct Vault path once: (data by path, problem by path, requests made).

    Vault being down or refusing the login raises (the whole run fails before any commit); a
    missing or forbidden path is returned as a problem that fails only the clusters using it.
    """
    if not paths or (not settings.secrets.check and not inline):
        return {}, {}, 0
    if reader_factory is None:
        raise ConfigError("documents use secret placeholders but no Vault client is configured")
    from trinogen.vault import SecretProblem

    reader = reader_factory()

    def read(path: str) -> tuple[str, SecretData | None, str | None]:
        try:
            return path, reader.read(path), None
        except SecretProblem as e:
            return path, None, str(e)

    resolved: dict[str, SecretData] = {}
    errors: dict[str, str] = {}
    # Round trips dominate: a few reads in flight at once (each path is still read exactly once).
    with ThreadPoolExecutor(max_workers=min(VAULT_PARALLEL_READS, len(paths))) as pool:
        for path, data, error in pool.map(read, paths):
            if data is not None:
                resolved[path] = data
            else:
                errors[path] = error or "unreadable"
    return resolved, errors, int(reader.requests)


def _secret_problems(
    clusters: Iterable[Cluster], resolved: Resolved, path_errors: Mapping[str, str]
) -> dict[str, list[Problem]]:
    """Per cluster: placeholders whose Vault path failed or lacks the key."""
    problems: dict[str, list[Problem]] = {}
    if not resolved and not path_errors:
        return problems  # nothing was read (reference checks off)
    for cluster in clusters:
        for where, use in _uses_with_fields(cluster):
            path = use.ref.secret_path
            if path in path_errors:
                msg = f"placeholder {use.placeholder.text}: {path_errors[path]}"
            elif use.ref.key not in resolved[path].values:
                msg = (f"placeholder {use.placeholder.text}: Vault secret {path} has no key "
                       f"{use.ref.key!r} (or its value is not a string)")
            else:
                continue
            problems.setdefault(cluster.cluster_id, []).append(Problem(cluster.cluster_id, where, msg))
    return problems


# --- commands ------------------------------------------------------------------------------


@dataclass
class Report:
    """What a command did, for people and for --output json (schemaVersion 1)."""

    command: str
    dry_run: bool = False
    plan: Plan | None = None
    failed: list[Failed] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    commit: str | None = None
    pushed: bool = False
    diff: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    rendered: list[str] = field(default_factory=list)  # render / validate: clusters that are fine
    disabled: list[str] = field(default_factory=list)
    out_dir: str | None = None

    def to_json(self) -> dict[str, Any]:
        clusters: dict[str, Any] = {}
        if self.plan is not None:
            for action, key in (("add", "added"), ("update", "updated"), ("prune", "pruned")):
                clusters[key] = [
                    {"clusterId": c.cluster_id, "documentId": c.doc_id, "reason": c.reason or None}
                    for c in self.plan.by_action(action)
                ]
            clusters["unchanged"] = sorted(c.cluster_id for c in self.plan.by_action("unchanged"))
        else:
            clusters["valid"] = sorted(self.rendered)
        clusters["disabled"] = sorted(self.disabled)
        clusters["failed"] = [
            {
                "clusterId": f.cluster_id,
                "documentId": f.doc_id,
                "stage": f.stage,
                "problems": [{"field": p.field, "message": p.message} for p in f.problems],
            }
            for f in self.failed
        ]
        out: dict[str, Any] = {
            "schemaVersion": 1,
            "command": self.command,
            "dryRun": self.dry_run,
            "clusters": clusters,
            "warnings": [{"cluster": w.cluster, "field": w.field, "message": w.message}
                         for w in self.warnings],
            "stats": self.stats,
        }
        if self.command == "sync":
            out["commit"] = self.commit
            out["pushed"] = self.pushed
            out["changes"] = [
                {"path": ch.path, "action": ch.action, "clusterId": ch.cluster}
                for ch in (self.plan.files if self.plan else ())
            ]
            out["refusedBy"] = self.plan.refusal if self.plan else None
        if self.out_dir is not None:
            out["outDir"] = self.out_dir
        return out


def validate(settings: Settings, source: Any) -> Report:
    raws = source.read_all()
    outcomes = classify_all(raws, settings)
    c = Classified.of(outcomes)
    report = Report("validate", failed=c.failed, rendered=[x.cluster_id for x in c.clusters],
                    disabled=[d.cluster_id or d.doc_id for d in c.disabled])
    for cluster in c.clusters:
        report.warnings.extend(cluster.warnings)
    report.stats = {"documents": len(raws)}
    return report


def render(
    settings: Settings,
    source: Any,
    out_dir: Path,
    *,
    clusters: Iterable[str] = (),
    reader_factory: ReaderFactory | None = None,
    inline: bool = False,
    progress: Progress = _no_progress,
) -> Report:
    """Write the desired tree (no git) into `out_dir`; stale trinogen files there are removed."""
    started = time.monotonic()
    wanted = set(clusters)
    raws = source.read_targeted((), wanted) if wanted else source.read_all()
    desired = build_desired(settings, raws, Renderer(require_repo_url(settings)), reader_factory,
                            inline=inline, progress=progress)
    if wanted:
        desired.files = {k: v for k, v in desired.files.items() if k in wanted}
    from trinogen.gitops import write_tree

    contents = {cid: {p: f.content or b"" for p, f in files.items()} for cid, files in desired.files.items()}
    extra = {p: f.content or b"" for p, f in desired.extra.items()}
    written = write_tree(out_dir, contents, extra, _layout(settings),
                         prune_stale=not wanted)
    report = Report("render", failed=desired.failed, warnings=desired.warnings,
                    rendered=sorted(desired.files), out_dir=str(out_dir),
                    disabled=[d.cluster_id or d.doc_id for d in desired.disabled])
    report.stats = {
        "documents": len(raws),
        "filesWritten": written,
        "vaultRequests": desired.vault_requests,
        "mongoQueries": getattr(source, "queries", 0),
        "seconds": round(time.monotonic() - started, 3),
    }
    return report


@dataclass(frozen=True)
class SyncOptions:
    dry_run: bool = False
    allow_empty: bool = False
    allow_mass_prune: bool = False
    clusters: tuple[str, ...] = ()  # --cluster: only these (and prune only among them)
    doc_ids: tuple[str, ...] = ()  # watch: documents that changed (canonical _id JSON)
    inline: bool = False
    write_status: bool = True
    # Called right before each push (watch: "am I still the leader?"); raising aborts the push.
    before_push: Callable[[], None] | None = None

    @property
    def targeted(self) -> bool:
        return bool(self.clusters or self.doc_ids)


def sync(
    settings: Settings,
    source: Any,
    repo: Any,
    *,
    options: SyncOptions = SyncOptions(),
    reader_factory: ReaderFactory | None = None,
    renderer: Renderer | None = None,
    progress: Progress = _no_progress,
) -> Report:
    """Plan the repository against the documents, then commit and push the difference once."""
    started = time.monotonic()
    renderer = renderer or Renderer(settings, bytecode_dir=_bytecode_dir(repo))
    require_repo_url(settings)
    layout = _layout(settings)
    report = Report("sync", dry_run=options.dry_run)
    with repo.locked():
        progress("refresh", 0, 1)
        repo.refresh()
        tree = repo.tree(layout)
        raws, targets = _read(source, options, tree, repo, layout)
        progress("read", len(raws), len(raws))
        cache = repo.render_cache(renderer.fingerprint)
        desired = build_desired(settings, raws, renderer, reader_factory, inline=options.inline,
                                progress=progress, cache=cache, tree=tree)
        attempts = 0
        written = 0
        while True:
            plan = make_plan(
                layout=layout,
                current=_current(tree, desired, repo),
                desired=desired.files,
                desired_docs=desired.docs,
                failed=desired.failed,
                disabled=desired.disabled,
                guards=Guards(
                    full_run=not options.targeted,
                    documents_read=len(raws),
                    allow_empty=options.allow_empty,
                    allow_mass_prune=options.allow_mass_prune,
                    max_prune_count=settings.sync.max_prune_count,
                    max_prune_share=settings.sync.max_prune_share,
                    source_complete=getattr(source, "complete", True),
                ),
                targets=targets,
                extra=desired.extra,
            )
            report.plan = plan
            if plan.refusal:
                report.failed = desired.failed
                raise SafetyRefusal(plan.refusal)
            if options.dry_run:
                report.diff = unified_diff(plan, repo.read, _masker(desired.secret_texts, desired.secret_keys))
                break
            if plan.empty:
                break
            attempts += 1
            repo.apply(plan.files, commit_message(plan))
            written += sum(1 for ch in plan.files if ch.action != "delete")
            _checkpoint("after-write")
            sha = repo.commit()
            _checkpoint("after-commit")
            if options.before_push is not None:
                options.before_push()
            outcome = repo.push()
            if outcome.pushed:
                report.commit, report.pushed = sha, True
                _checkpoint("after-push")
                break
            if attempts > settings.git.push_retries:
                raise GitUnavailable(
                    f"the push was rejected {attempts} times because the remote kept moving on; "
                    "nothing was lost, run again"
                )
            log.info("push rejected (%s): the remote moved on; re-planning (attempt %d)",
                     outcome.summary, attempts + 1)
            repo.refresh()
            tree = repo.tree(layout)
        if cache is not None:
            cache.save()
    report.failed = desired.failed + _plan_failures(plan)
    report.warnings = desired.warnings
    report.disabled = [d.cluster_id or d.doc_id for d in desired.disabled]
    if not options.dry_run and options.write_status:
        report.stats["statusWrites"] = _write_status(source, desired, plan, report.commit or repo.head_commit())
    report.stats.update({
        "documents": len(raws),
        "clustersRendered": len(desired.files) - desired.cache_hits,
        "cacheHits": desired.cache_hits,
        "filesChanged": len(plan.files),
        "filesWritten": written,
        "commits": 1 if report.pushed else 0,
        "pushAttempts": attempts,
        "vaultRequests": desired.vault_requests,
        "mongoQueries": getattr(source, "queries", 0),
        "seconds": round(time.monotonic() - started, 3),
    })
    return report


def _bytecode_dir(repo: Any) -> Path | None:
    workdir = getattr(repo, "workdir", None)
    return Path(workdir) / "trinogen-templates" if workdir is not None else None


def _checkpoint(name: str) -> None:
    """Crash-safety tests kill a real `trinogen sync` here: TRINOGEN_TEST_KILL_AT=<name>.

    Points: after-write, after-commit, after-push (before the status write-back).
    """
    import os

    if os.environ.get("TRINOGEN_TEST_KILL_AT") == name:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _current(tree: Mapping[str, str], desired: Desired, repo: Any) -> dict[str, CurrentFile]:
    """The repository's files with their headers; only files unlike any desired one are read."""
    known: dict[str, FileHeader | None] = {}
    for cid, files in desired.files.items():
        hit = FileHeader(cid, desired.docs[cid])
        for file in files.values():
            # a cache hit's blob carries this cluster's header; otherwise read it from the content
            known[file.blob] = hit if file.content is None else parse_header(file.content[:HEAD_BYTES])
    for file in desired.extra.values():
        known[file.blob] = (FileHeader(None, None) if file.content is None
                            else parse_header(file.content[:HEAD_BYTES]))
    heads = repo.heads(b for b in tree.values() if b not in known)
    return {
        path: CurrentFile(blob, known[blob] if blob in known else parse_header(heads.get(blob, b"")))
        for path, blob in tree.items()
    }


def _read(
    source: Any, options: SyncOptions, tree: Mapping[str, str], repo: Any, layout: Layout
) -> tuple[list[RawDocument], set[str] | None]:
    """All documents, or for a targeted run every document that can affect the targets."""
    if not options.targeted:
        return source.read_all(), None
    # The _id recorded in each cluster's Application file maps changed documents to clusters.
    apps = {p: b for p, b in tree.items() if p.startswith(layout.applications_dir + "/")}
    heads = repo.heads(apps.values())
    repo_docs: dict[str, str] = {}
    for path, blob in apps.items():
        cid = layout.cluster_of(path)
        header = parse_header(heads.get(blob, b""))
        if cid and header and header.doc_id:
            repo_docs[cid] = header.doc_id
    doc_ids = set(options.doc_ids)
    cluster_ids = set(options.clusters) | {c for c, d in repo_docs.items() if d in doc_ids}
    doc_ids |= {repo_docs[c] for c in cluster_ids if c in repo_docs}
    raws = source.read_targeted(doc_ids, cluster_ids)
    claimed = {cid for r in raws if (cid := claimed_cluster_id(r))} - cluster_ids
    if claimed:  # other documents claiming the same clusterIds make duplicates: read them too
        seen = {r.doc_id for r in raws}
        raws += [r for r in source.read_targeted((), claimed) if r.doc_id not in seen]
        cluster_ids |= claimed
    return raws, cluster_ids


def _write_status(source: Any, desired: Desired, plan: Plan, commit: str | None) -> int:
    """Record per cluster: last synced commit, time, render hash, last error (batched)."""
    if getattr(source, "ephemeral", False):
        return 0
    now = datetime.now(UTC).replace(microsecond=0)
    previous = source.read_status()
    records: dict[str, dict[str, Any]] = {}
    for change in plan.clusters:
        cid = change.cluster_id
        prev = previous.get(cid, {})
        if change.action in ("add", "update", "unchanged"):
            rh = desired.render_hash(cid)
            if change.action == "unchanged" and prev.get("state") == "synced" and prev.get("renderHash") == rh:
                continue
            records[cid] = {"documentId": change.doc_id, "state": "synced", "commit": commit,
                            "syncedAt": now, "renderHash": rh, "lastError": None, "errorAt": None}
        elif change.action == "prune":
            records[cid] = {"documentId": change.doc_id, "state": "pruned", "reason": change.reason,
                            "commit": commit, "syncedAt": now, "renderHash": None,
                            "lastError": None, "errorAt": None}
    for f in desired.failed:
        key = f.cluster_id or f"_id={f.doc_id}"
        prev = previous.get(key, {})
        error = "\n".join(str(p) for p in f.problems)
        if prev.get("state") == "failed" and prev.get("lastError") == error:
            continue
        records[key] = {**{k: v for k, v in prev.items() if k != "_id"}, "documentId": f.doc_id,
                        "state": "failed", "stage": f.stage, "lastError": error, "errorAt": now}
    return int(source.write_status(records))


def _plan_failures(plan: Plan) -> list[Failed]:
    """Clusters the plan had to keep (a foreign file in the way, no _id in the header)."""
    by_cluster: dict[str, list[Problem]] = {}
    for p in plan.problems:
        by_cluster.setdefault(p.cluster, []).append(p)
    docs = {c.cluster_id: c.doc_id for c in plan.clusters}
    return [Failed(docs.get(cid) or "", cid, tuple(ps), "plan") for cid, ps in sorted(by_cluster.items())]


def _masker(secrets: set[str], keys: Iterable[str] = ()) -> Callable[[str], str]:
    # Every form a value takes in a rendered file: as is, Properties-escaped, and Helm-escaped
    # inside values.yaml's catalogs ({{ -> {{"{{"}}).
    forms = sorted({f for s in secrets if s for f in (s, prop_value(s), helm_escape(prop_value(s)))},
                   key=len, reverse=True)
    # Whole lines of secret-bearing properties too: the old side of a diff holds values from
    # before a rotation, which this run never read.
    names = "|".join(re.escape(prop_key(k)) for k in sorted(set(keys)))
    line = re.compile(rf"^(\s*(?:{names})=).*$", re.MULTILINE) if names else None
    if not forms and line is None:
        return lambda text: text

    def mask(text: str) -> str:
        for form in forms:
            text = text.replace(form, "***")
        return line.sub(r"\g<1>***", text) if line is not None else text

    return mask


def _layout(settings: Settings) -> Layout:
    o = settings.output
    return Layout(o.clusters_dir, o.applications_dir, o.root_app)


def require_repo_url(settings: Settings) -> Settings:
    if not settings.repo_url:
        raise ConfigError(
            "the Argo CD Applications need the GitOps repository's URL: set git.remote "
            "(TRINOGEN_GIT_REMOTE) or argocd.repo_url"
        )
    return settings
