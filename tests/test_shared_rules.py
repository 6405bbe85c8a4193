"""The rules several features share, each written once (review pass after issues 13 and 14)."""

from __future__ import annotations

from typing import Any

import pytest

from trinogen.errors import ConfigError
from trinogen.kinds.authentication import options as authentication
from trinogen.model.checker import Checker
from trinogen.secrets import PlaceholderError, VaultRef, settings_ref, settings_use
from trinogen.settings.options.fields import is_http_url, property_lines
from trinogen.settings.options.metadata import is_name_part


@pytest.mark.parametrize(("template", "expected"), [
    ("kv/trino/{cluster}#password", VaultRef("kv", "trino/c1", "password")),
    ("kv/{owner}/{cluster}/db#k", VaultRef("kv", "team-a/c1/db", "k")),
    ("kv/static/path#k", VaultRef("kv", "static/path", "k")),
])
def test_settings_ref_fills_cluster_and_owner(template: str, expected: VaultRef) -> None:
    """A settings template gets the cluster's id and owner, then parses as <mount>/<path>#<key>."""
    assert settings_ref(template, "c1", "team-a") == expected


@pytest.mark.parametrize("template", [
    "kv/{clusterId}#k",  # an unknown name (KeyError inside str.format)
    "kv/{0}#k",  # a positional field (IndexError)
    "kv/{cluster#k",  # a lone brace (ValueError)
    "kv#k",  # no path after the mount
    "kv/../x#k",  # a '..' segment
    "kv/x",  # no key
])
def test_settings_ref_refuses_with_a_placeholder_error(template: str) -> None:
    """Whatever is wrong, with the template or with the reference, is one PlaceholderError."""
    with pytest.raises(PlaceholderError):
        settings_ref(template, "c1", "team-a")


def test_settings_use_binds_like_a_vault_placeholder() -> None:
    """The use carries the reference as a `{{ vault:... }}` placeholder and an env name for it."""
    use = settings_use("kv/trino/{cluster}#password", "c1", "o")
    assert use.ref == VaultRef("kv", "trino/c1", "password")
    assert use.placeholder.text == "{{ vault:kv/trino/c1#password }}"
    assert use.env.startswith("TRINO_VAULT_KV_TRINO_C1_PASSWORD_")


def test_authentication_option_refuses_a_dot_dot_segment_when_the_settings_load() -> None:
    """A reference every cluster would fail on is refused at load, naming the field."""
    raw = {"type": "PASSWORD", "tls": "ingress", "shared_secret": "kv/../s#k",
           "password_file": "kv/trino/users#password.db"}
    with pytest.raises(ConfigError, match=r"authentication\.basic\.shared_secret must be a Vault"):
        authentication.parse("authentication.basic", raw)


@pytest.mark.parametrize(("value", "limit", "expected", "message"), [
    (None, 2, [], None),
    ([1, 2], 2, [1, 2], None),
    ("a", 2, None, "must be a list, not a string"),
    ([1, 2, 3], 2, None, "has 3 entries; at most 2 are allowed (why)"),
])
def test_checker_entries(value: Any, limit: int, expected: list[Any] | None,
                         message: str | None) -> None:
    """A bounded list: absent is empty, a non-list or too many entries is reported on its path."""
    c = Checker("c1", "error")
    assert c.entries(value, "things", limit, " (why)") == expected
    assert [(p.field, p.message) for p in c.problems] == ([("things", message)] if message else [])


def _only_x(key: Any) -> None:
    if not str(key).startswith("x."):
        raise ConfigError(f"{key!r} is not an x.* property")


@pytest.mark.parametrize(("value", "expected"), [
    (None, ()),
    ({"x.b": "2", "x.a": "1"}, (("x.a", "1"), ("x.b", "2"))),
])
def test_property_lines_are_sorted(value: Any, expected: tuple[tuple[str, str], ...]) -> None:
    """Tuning lines come back sorted by name; absent is none."""
    assert property_lines("opt", value, _only_x) == expected


@pytest.mark.parametrize(("value", "message"), [
    (["x.a"], "opt.properties must be a mapping"),
    ({"y.a": "1"}, "'y.a' is not an x.\\* property"),
    ({"x.a": "one\ntwo"}, "opt.properties.x.a must be one line of plain text"),
    ({"x.a": "${ENV:A}"}, "opt.properties.x.a must be one line"),
    ({"x.a": "{{ S }}"}, "opt.properties.x.a must be one line"),
    ({"x.a": 3}, "opt.properties.x.a must be one line"),
])
def test_property_lines_refuse(value: Any, message: str) -> None:
    """A non-mapping, a key the kind refuses, or a value that is not one plain line is refused."""
    with pytest.raises(ConfigError, match=message):
        property_lines("opt", value, _only_x)


@pytest.mark.parametrize(("value", "ok"), [
    ("http://opa:8181/v1/data/trino/allow", True),
    ("https://s3.eu-west-1.amazonaws.com", True),
    ("ftp://host/x", False),
    ("http://", False),
    ("http://host/a b", False),
    (8181, False),
])
def test_is_http_url(value: Any, ok: bool) -> None:
    """Only http:// or https:// with a host and without spaces is a URL here."""
    assert is_http_url(value) is ok


@pytest.mark.parametrize(("text", "ok"), [
    ("a" * 63, True),
    ("a" * 64, False),
    ("team.a_b-c", True),
    ("-team", False),
    ("team.", False),
    ("", False),
])
def test_is_name_part(text: str, ok: bool) -> None:
    """Kubernetes' label name: at most 63 of [-A-Za-z0-9_.], a letter or digit at both ends."""
    assert is_name_part(text) is ok
