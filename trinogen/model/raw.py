"""What a raw document says before it is validated: its label, the clusterId it claims, whether
it is disabled or refused unread, whether it declares itself stopped.

The render cache answers for documents it has seen without validating them again; what it still
needs to know about them is read here, from the raw bodies alone, so a sync whose documents are
all served never loads the validator (`document` and every feature's reader).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from trinogen.errors import Problem
from trinogen.model.checker import MAPS
from trinogen.model.raw_document import RawDocument
from trinogen.model.rules import CLUSTER_ID, MAX_CLUSTER_ID, MAX_DEPTH, MAX_DOC_ID
from trinogen.model.types import Disabled, Failed
from trinogen.settings import Settings

_NESTING = (dict, list, tuple)


def document_label(raw: RawDocument) -> str:
    """How messages name a document: its clusterId when usable, else its _id."""
    cid = raw.head.get("clusterId") if isinstance(raw.head, MAPS) else None
    if type(cid) is str and CLUSTER_ID.fullmatch(cid) and len(cid) <= MAX_CLUSTER_ID:
        return cid
    # An _id too long for a file header (refused below) is named by its start: a 10 MiB _id
    # must not become every message's, the report's and the status row's (issue 19).
    return f"_id={raw.doc_id if len(raw.doc_id) <= MAX_DOC_ID else raw.doc_id[:100] + '...'}"


def claimed_cluster_id(raw: RawDocument) -> str | None:
    """The clusterId a document claims, when it is a valid one (used to keep its files)."""
    return claimed_by(document_label(raw))


def claimed_by(label: str) -> str | None:
    """The clusterId in a `document_label`, None when the label is an _id."""
    return None if label.startswith("_id=") else label


def settled(raw: RawDocument, label: str | None = None) -> Failed | Disabled | None:
    """The outcome of a document that is not walked at all, or None when it must be validated:
    refused (unreadable, not an object, too deep, _id too long), else disabled. `label` is
    `document_label(raw)` when the caller has it."""
    label = document_label(raw) if label is None else label
    cid = claimed_by(label)
    refused = _refused(raw, label, cid)
    if refused is not None:
        return refused
    if raw.body.get("enabled") is False:
        return Disabled(raw.doc_id, cid)
    return None


def _refused(raw: RawDocument, label: str, cid: str | None) -> Failed | None:
    if raw.unreadable:
        return Failed(raw.doc_id, cid, (Problem(label, "", raw.unreadable),))
    if not isinstance(raw.body, MAPS):
        return Failed(raw.doc_id, None, (Problem(label, "", "the document is not an object"),))
    if nests_deeper(raw.body, MAX_DEPTH):
        return Failed(raw.doc_id, cid, (Problem(label, "", f"nests deeper than {MAX_DEPTH} levels; "
                                                "no field does (resource groups: at most 3 group "
                                                "levels in a document): remove the extra levels"),))
    if len(raw.doc_id) > MAX_DOC_ID:
        return Failed(raw.doc_id, cid, (Problem(
            label, "_id", f"is {len(raw.doc_id)} characters long as Extended JSON; "
            f"trinogen records it in every file header, which holds at most {MAX_DOC_ID}: give "
            "the document a shorter _id"),))
    return None


def nests_deeper(value: Any, limit: int) -> bool:
    """True when `value` nests deeper than `limit` (checked before anything recurses): some
    value sits inside more than `limit` levels of maps and lists."""
    if limit < 0:
        return True
    if not isinstance(value, _NESTING):
        return False
    stack = [(value, 0)]  # containers only: a scalar adds no level below it
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if children and depth >= limit:  # its children sit at depth + 1 > limit
            return True
        stack.extend((v, depth + 1) for v in children if isinstance(v, _NESTING))
    return False


def enabled_claims(raws: Sequence[RawDocument]) -> dict[str, list[int]]:
    """clusterId -> indexes of the documents claiming it, disabled documents left out.

    More than one index means duplicates. Needs only the raw documents, so the render cache can
    ask it without validating anything.
    """
    labels = [claimed_cluster_id(raw) for raw in raws]
    # A clusterId several documents name is judged on their decoded bodies: one that cannot be
    # decoded claims it as the read's refusal names it (enabled, whatever its bytes say).
    named = Counter(labels)
    claims: dict[str, list[int]] = {}
    for i, (raw, cid) in enumerate(zip(raws, labels, strict=True)):
        if cid is not None and named[cid] > 1:
            raw.body  # noqa: B018 - decoded now
            cid = claimed_cluster_id(raw)
        if cid is not None and isinstance(raw.head, MAPS) and raw.head.get("enabled") is not False:
            claims.setdefault(cid, []).append(i)
    return claims


def contested_claims(raws: Sequence[RawDocument]) -> dict[str, list[int]]:
    """`enabled_claims` of the clusterIds more than one document claims: all the claims rule
    reads (`model.claims`), noted before the documents are let go (`RawDocument.let_go`)."""
    return {cid: idxs for cid, idxs in enabled_claims(raws).items() if len(idxs) > 1}


def declares_stopped(body: Mapping[str, Any], settings: Settings) -> bool:
    """Whether a (valid) document, with its defaults and profile, says `stopped: true`.

    For documents the render cache serves, which are not validated again: the same layering as
    `classify` (the last layer that names the field wins; null removes it).
    """
    layers: list[Mapping[str, Any]] = [settings.defaults]
    profile = body.get("profile")
    if isinstance(profile, str) and profile in settings.profiles:
        layers.append(settings.profiles[profile])
    layers.append(body)
    value = None
    for layer in layers:
        if "stopped" in layer:
            value = layer["stopped"]
    return value is True
