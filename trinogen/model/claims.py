"""Several documents claiming one name: the first create wins (issue 19, finding 5). Pure.

A name (a clusterId, a catalog name of the library) that more than one document claims stays
with the document the GitOps repository already holds it for: that document is judged as if it
were alone, and each newcomer fails naming it. Only when the repository holds the name for none
of the claimants (or cannot tell) do all of them fail, as Kubernetes refuses a second create of
one name rather than picking one. How the repository records its holders: the Application
file's header for a cluster (`targets.recorded_documents`), the reviewable catalog copy for a
shared catalog (`render.headers.shared_catalog_line`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

from trinogen.errors import Problem
from trinogen.model.raw import enabled_claims
from trinogen.model.raw_document import RawDocument
from trinogen.model.types import Failed, Outcome

# Said when the repository was not read (validate, render): which claimant keeps it is unknown.
UNREAD = ("sync keeps it for the document the GitOps repository holds it for and fails the "
          "others (validate and render do not read the repository)")


def keeper(claimants: Sequence[str], held: Collection[str]) -> str | None:
    """The claimant (a document _id) that keeps a contested name: the one `held` names, when
    exactly one claimant is held; None when none (or several) are."""
    kept = [c for c in claimants if c in held]
    return kept[0] if len(kept) == 1 else None


class Claimant(Protocol):
    """What the rule needs of a document's own outcome: the document it came from."""

    @property
    def doc_id(self) -> str: ...


def settle_clusters(outcomes: list[Outcome], raws: Sequence[RawDocument],
                    held: Mapping[str, str] | None) -> list[Outcome]:
    """Apply the rule to every clusterId more than one enabled document claims; `held` maps a
    clusterId to the _id recorded in its Application file (None: the repository was not read)."""
    for i, failed in refusals(outcomes, raws, held).items():
        outcomes[i] = failed
    return outcomes


def refusals(outcomes: Sequence[Claimant], raws: Sequence[RawDocument],
             held: Mapping[str, str] | None,
             claims: Mapping[str, list[int]] | None = None) -> dict[int, Failed]:
    """The outcomes (by index, as `raws`) the rule turns into failures: any outcome of a
    document, also what a worker kept of a cluster it rendered (`served.Made`). `claims`:
    `raw.contested_claims(raws)`, noted before their bodies were let go (None: read now)."""
    out: dict[int, Failed] = {}
    for cid, idxs in (enabled_claims(raws) if claims is None else claims).items():
        if len(idxs) < 2:
            continue
        ids = [outcomes[i].doc_id for i in idxs]
        holder = keeper(ids, (held[cid],) if held and cid in held else ())
        for i in idxs:
            if outcomes[i].doc_id != holder:
                out[i] = _refused(outcomes[i], cid, ids, holder, known=held is not None)
    return out


def _refused(o: Claimant, cid: str, ids: Sequence[str], holder: str | None, *,
             known: bool) -> Failed:
    prior = o.problems if isinstance(o, Failed) else ()
    if holder is not None:
        # A newcomer: its failure is its own, never the cluster's (no status row, no kept files
        # under the clusterId it does not hold).
        return Failed(o.doc_id, None, (*prior, Problem(
            cid, "clusterId", f"{cid} belongs to the document _id {holder}, which the GitOps "
            "repository's files of this cluster were rendered from (the first create wins); "
            "choose another clusterId")))
    why = UNREAD if not known else (f"the GitOps repository holds cluster {cid} for none of "
                                    "them")
    return Failed(o.doc_id, cid, (*prior, Problem(
        cid, "clusterId", f"is used by {len(ids)} enabled documents (_id {', '.join(ids)}); "
        f"{why}: make it unique or disable all but one")))
