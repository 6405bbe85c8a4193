"""One run's rollout step: which changed clusters go now, which a wave still holds.

Called by the pipeline after the desired tree is built (and quotas judged), before the plan:

1. read the record (`rollout.state_file`) at the tree being planned against;
2. sort each existing cluster whose files would change: a *fleet* change when its document is
   the one its files in git were rendered from (or unknown), else the document's *own* edit;
3. apply `--resume-rollout` / `--abort-rollout`, then the gate (`trinogen.rollout.gate`);
4. hold the fleet-changed clusters of later waves: their desired files become the ones git holds,
   so the plan keeps them exactly (as a quota refusal keeps a cluster's files);
5. write the record back with the files (`Desired.extra`), in the same commit.

A document's own edit is never held: it goes at once, and carries the fleet change with it,
because trinogen can render a document only with the settings and templates it has now. Such a
cluster is reported as released early and watched by the gate like its wave.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from trinogen.cache import document_key
from trinogen.desired import Desired
from trinogen.errors import ConfigError, UnavailableError
from trinogen.model import RawDocument
from trinogen.plan import DesiredFile, Layout
from trinogen.ports import ArgoViewFactory, Repository
from trinogen.rollout.gate import ADVANCE, HALT, WAIT, Verdict, by_cluster, judge
from trinogen.rollout.state import Halt, Rollout, RolloutState, load
from trinogen.rollout.waves import Facts, assign, names, wave_of
from trinogen.settings import Settings
from trinogen.settings.rollout import RolloutSettings, WaveRule

_DIGEST_SALT = "trinogen-rollout"
_BLOB = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class Control:
    resume: bool = False  # --resume-rollout: clear a halt, or start an aborted rollout again
    abort: bool = False  # --abort-rollout: put the released clusters' files back, hold all


@dataclass(frozen=True)
class Inputs:
    settings: Settings
    desired: Desired
    raws: list[RawDocument]
    tree: Mapping[str, str]
    repo: Repository
    layout: Layout
    now: datetime
    control: Control = Control()
    argo: ArgoViewFactory | None = None
    full_run: bool = True

    @property
    def rules(self) -> RolloutSettings:
        if self.settings.rollout is None:
            raise AssertionError("the rollout step runs only with rollout waves")
        return self.settings.rollout


@dataclass
class Step:
    """What the step decided, for the report and --output json."""

    waves: list[str]
    rollout: Rollout | None
    fleet: dict[str, int] = field(default_factory=dict)  # fleet-changed cluster -> wave
    held: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)  # released in this run
    early: list[str] = field(default_factory=list)  # own edits of clusters a wave holds
    restored: list[str] = field(default_factory=list)  # put back by --abort-rollout
    verdict: Verdict | None = None
    notes: list[str] = field(default_factory=list)
    started: bool = False  # this run started the rollout

    def to_json(self) -> dict[str, Any]:
        r = self.rollout
        wave = None if r is None or r.aborted else self.waves[min(r.wave, len(self.waves) - 1)]
        return {
            "state": _state(r),
            "wave": wave,
            "waiting": None if self.verdict is None or self.verdict.action == ADVANCE
            else self.verdict.reason,
            "haltedBy": None if r is None or r.halted is None else {
                "cluster": r.halted.cluster, "reason": r.halted.reason,
                "wave": self.waves[min(r.halted.wave, len(self.waves) - 1)],
                "at": r.halted.at.isoformat()},
            "waves": [self._wave_json(i, n) for i, n in enumerate(self.waves)],
            "released": sorted(self.released), "held": sorted(self.held),
            "early": sorted(self.early), "restored": sorted(self.restored),
            "notes": self.notes,
        }

    def _wave_json(self, index: int, name: str) -> dict[str, Any]:
        r = self.rollout
        carried = {c for c, w in (r.released.items() if r else ()) if w == index}
        pending = {c for c, w in self.fleet.items() if w == index and c in self.held}
        status = "held" if pending else "released" if carried else "none"
        return {"name": name, "status": status, "clusters": sorted(carried | pending)}


def _state(r: Rollout | None) -> str:
    if r is None:
        return "idle"
    if r.aborted:
        return "aborted"
    return "halted" if r.halted is not None else "rolling"


def check_control(settings: Settings, resume: bool, abort: bool) -> None:
    """--resume-rollout and --abort-rollout need waves, and exclude each other."""
    if settings.rollout is None:
        raise ConfigError("--resume-rollout and --abort-rollout need rollout waves in the "
                          "settings (docs/rollouts.md)")
    if resume and abort:
        raise ConfigError("--resume-rollout and --abort-rollout exclude each other: give one")


@dataclass(frozen=True)
class Prepared:
    """What the step reads before the documents are rendered: the record, and the gate's verdict
    for the rollout under way (Argo CD is read once a run). Known this early, the clusters a
    waiting wave holds need not be rendered (`pending`)."""

    old: bytes | None
    state: RolloutState
    held_files: Mapping[str, Mapping[str, str]]
    verdict: Verdict | None
    rules: RolloutSettings
    holding: bool  # nothing beyond the current wave can be released in this run
    waves: tuple[WaveRule, ...]  # the rollout's own (recorded at its start), else the settings'

    def pending(self, cid: str, raw: RawDocument) -> bool:
        """Whether this run keeps the cluster's files in git whatever it renders to: a wave that
        cannot go holds it, and its document is the one its files came from (a fleet change)."""
        r = self.state.rollout
        if not self.holding or r is None or cid not in self.held_files:
            return False
        if not r.aborted and wave_of(self.waves, cid, Facts.of(raw.head)) <= r.wave:
            return False
        return self.state.documents.get(cid) in (None, _digest(raw))


def prepare(i: Inputs) -> Prepared:
    """Read the record and judge the gate, before rendering."""
    rules = i.rules
    old = i.repo.read(rules.state_file)
    state = load(old, rules.state_file)
    r = state.rollout
    if r is not None and not r.waves:  # a record from before they were kept: the settings'
        state = state.with_rollout(r := dataclasses.replace(r, waves=rules.waves))
    held_files = i.layout.files_by_cluster(i.tree)
    verdict = _early_verdict(i, r, held_files)
    restart = r is None or (r.aborted and i.control.resume)  # a new rollout: the settings' waves
    return Prepared(old, state, held_files, verdict, rules, _holding(r, i.control, verdict),
                    rules.waves if restart or r is None else r.waves)


def _holding(r: Rollout | None, control: Control, verdict: Verdict | None) -> bool:
    """Nothing beyond the current wave can go in this run (else every changed cluster is
    rendered: a flag, a wave that may go, or no rollout)."""
    return r is not None and not (control.resume or control.abort) and (
        r.aborted or r.halted is not None or (verdict is not None and verdict.action != ADVANCE))


def _early_verdict(i: Inputs, r: Rollout | None, held_files: Mapping[str, object]
                   ) -> Verdict | None:
    """The gate's verdict on the clusters released so far (with files in git), when the rollout
    under way is judged in this run: not aborted, and not halted unless resumed now."""
    control = i.control
    if r is None or r.aborted or control.abort or (r.halted is not None and not control.resume):
        return None
    judged = dataclasses.replace(r, healthy_since=None) if control.resume else r
    return _verdict(i, [c for c in r.released if c in held_files], judged)


def run_step(i: Inputs, ready: Prepared | None = None) -> Step:
    """Decide, and change `i.desired` accordingly (held files, put-back files, the record)."""
    p = ready or prepare(i)
    rules, state, held_files = p.rules, p.state, p.held_files
    digests = _digests(i.desired, i.raws)
    changed = _changed(i.desired, held_files)
    fleet = {c for c in changed if state.documents.get(c) in (None, digests.get(c))}
    wave = assign(p.waves, _facts(i, changed))
    step = Step(names(p.waves), state.rollout)
    step.fleet = {c: wave[c] for c in fleet}
    restored = _control(step, i, state, digests)
    fleet -= restored
    _gate_or_start(step, i, {c: wave[c] for c in fleet}, p)
    _hold_and_release(step, i, {c: wave[c] for c in changed if c not in restored}, fleet,
                      held_files, state.rollout)
    _check(step, i, p)
    documents = _documents(state, i, digests, set(step.held), held_files)
    new = RolloutState(documents, step.rollout).to_bytes()
    if new != p.old:
        i.desired.extra[rules.state_file] = DesiredFile.of(new)
    return step


def _check(step: Step, i: Inputs, p: Prepared) -> None:
    if p.waves != p.rules.waves:
        step.notes.append("rollout.waves changed since this rollout started: it goes on with "
                          "the waves it started with (--abort-rollout, then --resume-rollout, "
                          "starts it again with the new ones)")
    if not i.desired.pending <= set(step.held):  # their files have no content: never released
        raise AssertionError(f"released unrendered clusters {sorted(i.desired.pending)}")


def _changed(desired: Desired, held_files: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The existing clusters whose files this run would change (a new cluster is no rollout's)."""
    return [cid for cid, files in sorted(desired.files.items())
            if cid in held_files and {p: f.blob for p, f in files.items()} != held_files[cid]]


def _facts(i: Inputs, clusters: Iterable[str]) -> dict[str, Facts]:
    bodies = {raw.doc_id: raw.head for raw in i.raws}
    docs = i.desired.docs
    return {c: Facts.of(bodies[docs[c]]) if docs.get(c) in bodies else Facts() for c in clusters}


def _control(step: Step, i: Inputs, state: RolloutState, digests: Mapping[str, str]) -> set[str]:
    """--resume-rollout and --abort-rollout; the clusters an abort put back."""
    r = step.rollout
    if (i.control.resume or i.control.abort) and r is None:
        step.notes.append("no rollout is under way: nothing to resume or abort")
        return set()
    if r is not None and i.control.resume:
        step.rollout = dataclasses.replace(r, halted=None, healthy_since=None, aborted=False)
        if r.aborted:  # from the first wave again, with what the settings say now
            step.rollout = None
        step.notes.append("resumed")
        return set()
    if r is None or not i.control.abort:
        return set()
    restored = _restore(i, r, state, digests)
    step.restored = sorted(restored)
    step.rollout = dataclasses.replace(r, released={}, before={}, halted=None,
                                       healthy_since=None, aborted=True)
    return restored


def _restore(i: Inputs, r: Rollout, state: RolloutState, digests: Mapping[str, str]) -> set[str]:
    """Each released cluster's files as they were before the rollout, unless its document was
    edited since (then its owner's edit would be undone: kept, and said so)."""
    wanted = {c: f for c, f in r.before.items() if _restorable(i, c, f, state, digests)}
    contents = i.repo.blobs(b for f in wanted.values() for b in f.values())
    out = set()
    for cid, files in wanted.items():
        if all(b in contents for b in files.values()):
            i.desired.files[cid] = {p: DesiredFile(b, contents[b]) for p, b in files.items()}
            out.add(cid)
    return out


def _restorable(i: Inputs, cid: str, files: Mapping[str, str], state: RolloutState,
                digests: Mapping[str, str]) -> bool:
    """Rendered in this run, its document unedited since, and only blob ids at paths of the
    cluster's own: the record is a file anyone with push rights can edit, and an abort must not
    write anywhere else because it says so."""
    return (cid in i.desired.files and digests.get(cid) == state.documents.get(cid)
            and all(i.layout.cluster_of(p) == cid and _BLOB.fullmatch(b)
                    for p, b in files.items()))


def _gate_or_start(step: Step, i: Inputs, fleet: Mapping[str, int], p: Prepared) -> None:
    """Judge whether the next wave may go; start a rollout for a fleet change none carries."""
    r = step.rollout
    if r is not None and r.aborted and not fleet:
        step.rollout = None  # nothing the abort holds any more: the change was undone
        step.notes.append("the aborted change is undone everywhere: rollout closed")
    elif r is not None and r.halted is None and not r.aborted and p.verdict is not None:
        _gate(step, i, r, fleet, p.verdict, p.held_files)
    if step.rollout is None and fleet:  # a new fleet change: the first wave it touches goes
        step.rollout = Rollout(started=i.now, wave=min(fleet.values()), waves=p.waves)
        step.started = True


def _gate(step: Step, i: Inputs, r: Rollout, fleet: Mapping[str, int], verdict: Verdict,
          held_files: Mapping[str, object]) -> None:
    """Apply the gate's verdict (`prepare`: the released clusters with files in git watched).

    The next wave, or the end, is read from the clusters this run found changed: a run that did
    not judge every cluster (a targeted one, or one whose held clusters failed) cannot tell that
    nothing is left to release, so it moves no wave and never closes the rollout."""
    step.verdict = verdict
    later = [w for w in fleet.values() if w > r.wave]
    unseen = _unseen(i, r, held_files, bool(later))
    if verdict.action == HALT:
        step.rollout = dataclasses.replace(r, halted=Halt(r.wave, verdict.cluster or "",
                                                          verdict.reason, i.now),
                                           healthy_since=None)
    elif verdict.action != ADVANCE or unseen:
        step.rollout = dataclasses.replace(r, healthy_since=verdict.healthy_since)
        if unseen:
            step.verdict = dataclasses.replace(verdict, action=WAIT, reason=unseen)
    elif later:
        step.rollout = dataclasses.replace(r, wave=min(later), healthy_since=None)
    else:  # every wave released and healthy for the soak time
        step.rollout = None
        step.notes.append("rollout complete")


def _unseen(i: Inputs, r: Rollout, held_files: Mapping[str, object], later: bool) -> str | None:
    """Why this run may not move the waves on though the gate says go, or None."""
    if not i.full_run:
        return ("a targeted sync moves no wave (it does not see every cluster): the next full "
                "sync does")
    failed = sorted({c for f in i.desired.failed if (c := f.cluster_id) is not None
                     and c in held_files and c not in r.released})
    if later or not failed:
        return None
    shown = ", ".join(failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5 else "")
    return (f"not closed: {shown} failed in this run, so whether the change still has to reach "
            "them is unknown; the rollout goes on once they render")


def _verdict(i: Inputs, watched: list[str], r: Rollout) -> Verdict:
    if not watched:
        return Verdict(ADVANCE, "no released cluster to watch")
    if i.argo is None:
        return Verdict("wait", "Argo CD's view is not configured: the next wave waits")
    try:
        found = i.argo().applications()
    except (UnavailableError, ConfigError) as e:  # a document's own edit must still go
        return Verdict("wait", f"Argo CD's view could not be read ({e}): the next wave waits")
    apps = by_cluster(found, i.settings.argocd.app_name_prefix)
    return judge(watched, apps, head=i.repo.head_commit(), now=i.now,
                 healthy_since=r.healthy_since, soak_seconds=i.rules.soak_seconds)


def _hold_and_release(step: Step, i: Inputs, wave: Mapping[str, int], fleet: set[str],
                      held_files: Mapping[str, Mapping[str, str]], prior: Rollout | None) -> None:
    r = step.rollout
    if r is None:
        return
    released, before = dict(r.released), dict(r.before)
    for cid, w in sorted(wave.items()):
        waits = r.aborted or w > r.wave
        if cid in fleet and (waits or _untouched(step, cid, w, prior)):
            i.desired.files[cid] = {p: DesiredFile(b, None) for p, b in held_files[cid].items()}
            step.held.append(cid)
            continue
        if cid in fleet:
            before.setdefault(cid, dict(held_files[cid]))
        else:  # its owner's edit: putting back the files from before it would undo it
            before.pop(cid, None)
            # the document's own edit: it goes now, fleet change and all
            step.early.extend([cid] if waits else [])
        released.setdefault(cid, w)
        step.released.append(cid)
    step.rollout = dataclasses.replace(r, released=released, before=before)


def _untouched(step: Step, cid: str, w: int, prior: Rollout | None) -> bool:
    """A cluster of a wave the rollout had released before this run, which the rolling change
    did not touch: its change now is another fleet change, so it waits for a rollout of its own
    once this one completes. (The clusters that run the rolling change take a second change at
    once, as a fix of it.) Without this, a second change while the last wave soaks would reach
    every such cluster in one commit, with no gate."""
    return (prior is not None and not prior.aborted and not step.started
            and w <= prior.wave and cid not in prior.released)


def _documents(state: RolloutState, i: Inputs, digests: Mapping[str, str], held: set[str],
               held_files: Mapping[str, object]) -> dict[str, str]:
    """The document each cluster's files in git come from after this run (held: as before)."""
    out = {c: d for c, d in state.documents.items()
           if not i.full_run or c in held_files or c in i.desired.files}
    for cid, digest in digests.items():
        if cid not in held:
            out[cid] = digest
    return out


def _digests(desired: Desired, raws: Iterable[RawDocument]) -> dict[str, str]:
    """The digest of the document each rendered cluster comes from."""
    by_doc = {r.doc_id: r for r in raws}
    out = {}
    for cid, doc in desired.docs.items():
        raw = by_doc.get(doc)
        key = _digest(raw) if raw is not None else None
        if key is not None:
            out[cid] = key
    return out


def _digest(raw: RawDocument) -> str | None:
    # The bytes' digest when the source has it: the body is then never decoded for it.
    return document_key(raw.head if raw.digest is not None else raw.body, _DIGEST_SALT,
                        raw.digest)
