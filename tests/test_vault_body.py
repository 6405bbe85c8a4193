"""Vault answers that are not what KV promises: the documented error, never a traceback."""

from __future__ import annotations

import io
from typing import Any

import pytest
import requests

from trinogen import vault
from trinogen.errors import ExitCode, VaultUnavailable
from trinogen.settings import VaultSettings


class _KV:
    """A client whose KV reads answer `body` (what hvac returns for a 200 answer)."""

    def __init__(self, body: Any) -> None:
        self.body = body
        self.secrets = self
        self.kv = self
        self.v1 = self
        self.v2 = self

    def read_secret_version(self, **_: Any) -> Any:
        return self.body

    def read_secret(self, **_: Any) -> Any:
        return self.body


def _html_response() -> requests.Response:
    """What hvac returns for a 200 answer that is not JSON: the response itself."""
    r = requests.Response()
    r.status_code = 200
    r.raw = io.BytesIO(b"<html><body>Please log in</body></html>")
    return r


UNEXPECTED_BODIES = [
    (2, _html_response()),
    (2, {"data": ["a", "b"]}),
    (2, {"data": {"data": ["password"], "metadata": {"version": 1}}}),
    (2, {"data": {"data": {"password": "x"}, "metadata": {"version": "three"}}}),
    (2, {"data": {"data": {"password": "x"}, "metadata": ["v"]}}),
    (2, ["data"]),
    (1, _html_response()),
    (1, {"data": "password=x"}),
]


@pytest.mark.parametrize(("kv", "body"), UNEXPECTED_BODIES, ids=range(len(UNEXPECTED_BODIES)))
def test_an_unexpected_200_body_is_vault_unavailable_naming_the_path(kv: int, body: Any) -> None:
    """A 200 answer that is not a KV response (a proxy's HTML, data as a list, ...) is the
    documented Vault error naming the path, never a traceback."""
    reader = vault.VaultReader(_KV(body), VaultSettings(addr="https://vault:8200"), kv)
    with pytest.raises(VaultUnavailable, match="secret/trino/x/db.*unexpected body") as e:
        reader.read("secret/trino/x/db")
    assert e.value.exit_code == ExitCode.UNAVAILABLE


def test_a_200_body_without_data_reads_as_no_values() -> None:
    """A KV answer without `data` has no keys: each placeholder then reports its missing key."""
    reader = vault.VaultReader(_KV({"request_id": "r"}), VaultSettings(addr="https://v"), 2)
    assert reader.read("secret/trino/x/db").values == {}
