"""What a document may write for the platform hatches: a name, judged with its other picks.

Through `classify` with the demo settings and one option of each hatch kind: the document picks
by name (a profile or `defaults` may pick for it), never writes a field of an option, and a pick
that cannot go with the rest of the document fails at its own field. Expectations come from the
options' text and the rules of the issue, not from trinogen's output.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from tests.conftest import demo_settings
from tests.hatch_rig import INGRESS
from tests.test_auth import secure_settings
from tests.test_workload import doc
from trinogen.model import Cluster, Failed, RawDocument, classify
from trinogen.settings import Settings
from trinogen.settings.named import parse_kind
from trinogen.settings.tenants import Tenant

DIGEST = "sha256:" + "ab" * 32
OPTIONS = {
    "images": {"pinned": {"repository": "m.example.com/trino", "digests": {"476": DIGEST}}},
    "runtime": {"otel": {"env": {"OTEL_SERVICE_NAME": "trino-{cluster}"}}},
    "network_policies": {"bare": {}, "full": {"ingress_controller": "ingress-nginx",
                                              "monitoring": "monitoring"}},
    "services": {"np": {"type": "NodePort"}, "lb": {"type": "LoadBalancer"}},
    "ingress": {"public": INGRESS},
}


def _settings(base: Settings | None = None) -> Settings:
    s = base or demo_settings()
    named = {k: parse_kind(k, raw, "test") for k, raw in OPTIONS.items()}
    return dataclasses.replace(s, named={**s.named, **named})


def _classify(body: dict[str, Any], settings: Settings | None = None) -> Cluster | Failed:
    d = doc("hatchdoc", **copy.deepcopy(body))
    out = classify(RawDocument('"hatchdoc"', d), settings or _settings())
    assert isinstance(out, (Cluster, Failed))
    return out


@pytest.mark.parametrize("body, field, said", [
    ({"image": {"repository": "evil.example.com/trino"}}, "image", "must be a string"),
    ({"runtime": {"env": {"X": "1"}}}, "runtime", "must be a string"),
    ({"networkPolicy": {"enabled": False}}, "networkPolicy", "must be a string"),
    ({"service": {"type": "NodePort"}}, "service", "must be a string"),
    ({"image": "latest"}, "image", "is not an images option"),
    ({"image": "pinned", "trinoVersion": "470"}, "image", "not 470"),
    ({"networkPolicy": "bare", "ingress": "public"}, "networkPolicy", "ingress_controller"),
    ({"networkPolicy": "bare", "monitoring": {"jmx": True, "serviceMonitor": True}},
     "networkPolicy", "monitoring namespace"),
    ({"networkPolicy": "full", "service": "np"}, "service", "NodePort"),
])
def test_a_document_picks_by_name_and_a_pick_that_cannot_work_fails_at_its_field(
        body: dict[str, Any], field: str, said: str) -> None:
    """Writing an option's fields instead of a name, an unknown name, a version the image does
    not pin, an Ingress or ServiceMonitor the policy shuts out, and NodePort with a policy fail
    at the field."""
    out = _classify(body)
    assert isinstance(out, Failed), out
    assert any(p.field == field and said in p.message for p in out.problems), out.problems


def test_every_hatch_picked_together_renders_and_fills_its_patterns() -> None:
    """A document picking one option of each kind is a cluster; the env is filled."""
    out = _classify({"image": "pinned", "runtime": "otel", "networkPolicy": "full",
                     "service": "lb", "ingress": "public",
                     "monitoring": {"jmx": True, "serviceMonitor": True}})
    assert isinstance(out, Cluster), out
    runtime = out.kind("runtime")
    assert runtime.env == (("OTEL_SERVICE_NAME", "trino-hatchdoc"),)
    assert out.kind("images").digest == DIGEST


def test_an_exposed_service_without_authentication_is_a_warning() -> None:
    """A LoadBalancer without authentication renders, warned at `service`."""
    out = _classify({"service": "lb"})
    assert isinstance(out, Cluster), out
    assert any(w.field == "service" and "without authentication" in w.message
               for w in out.warnings)


def test_a_profile_picks_for_its_documents_and_null_removes_the_pick() -> None:
    """`defaults: {image: pinned}` picks for every document; `"image": null` drops it."""
    s = _settings()
    s = dataclasses.replace(s, defaults={**s.defaults, "image": "pinned"})
    picked = _classify({}, s)
    dropped = _classify({"image": None}, s)
    assert isinstance(picked, Cluster) and isinstance(dropped, Cluster)
    assert picked.kind("images") is not None and dropped.kind("images") is None


def test_a_tenant_picks_only_the_hatches_it_is_allowed() -> None:
    """With tenants, a hatch option outside the tenant's list fails, as every other kind."""
    s = dataclasses.replace(_settings(), tenants={"qa-team": Tenant(
        "qa-team", options={"services": frozenset({"lb"})})})
    allowed, refused = _classify({"service": "lb"}, s), _classify({"image": "pinned"}, s)
    assert isinstance(allowed, Cluster), allowed
    assert isinstance(refused, Failed)
    assert any(p.field == "image" for p in refused.problems), refused.problems


@pytest.mark.parametrize("option, warned", [("clients", True), ("full", False)])
def test_direct_clients_beside_tls_at_the_ingress_are_a_warning(option: str, warned: bool) -> None:
    """With `tls: ingress` authentication, a policy letting clients reach the HTTP port (where
    Trino trusts X-Forwarded-Proto) is warned at networkPolicy; the controller alone is not."""
    s = _settings(secure_settings())
    named = parse_kind("network_policies", {"clients": {"clients": ["bi-tools"], "ingress_controller": "ingress-nginx"}}, "test")
    s = dataclasses.replace(s, named={**s.named, "network_policies": {
        **s.named["network_policies"], **named}})
    out = _classify({"authentication": "corp-sso", "networkPolicy": option,
                     "ingress": "public"}, s)
    assert isinstance(out, Cluster), out
    assert any(w.field == "networkPolicy" and "X-Forwarded-Proto" in w.message
               for w in out.warnings) is warned


def test_a_required_network_policy_cannot_be_dropped_by_the_document() -> None:
    """`defaults: {networkPolicy: full}` with the tenant requiring `network_policies`: a
    document's `"networkPolicy": null` fails at networkPolicy; keeping the default renders."""
    s = _settings()
    s = dataclasses.replace(s, defaults={**s.defaults, "networkPolicy": "full"}, tenants={
        "qa-team": Tenant("qa-team", every=True, require=("network_policies",))})
    kept, dropped = _classify({}, s), _classify({"networkPolicy": None}, s)
    assert isinstance(kept, Cluster) and kept.kind("network_policies") is not None
    assert isinstance(dropped, Failed)
    assert any(p.field == "networkPolicy" for p in dropped.problems), dropped.problems
