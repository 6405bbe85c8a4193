"""The LDAP server the sign-in tests use (tests/ldap_server.py), held to ldapsearch (ldap-utils)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import ldap_server as ldap
from tests.conftest import needs

pytestmark = [needs(ldap.available(), "slapd is not installed (apt-get install slapd "
                                      "ldap-utils; .ci/run does it)")]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ldap.LdapServer]:
    with ldap.running(tmp_path_factory.mktemp("slapd") / "ldap") as s:
        yield s


def test_users_bind_with_their_password_over_ldaps(server: ldap.LdapServer) -> None:
    """alice binds over LDAPS (the server's certificate trusted, checked) and finds bob's entry
    with his group, but not his password hash."""
    found = ldap.search(server, f"uid=alice,{ldap.PEOPLE}", ldap.USERS[0].password, "(uid=bob)")
    (entry,) = found.values()
    assert "departmentNumber: sales" in entry
    assert "userPassword" not in entry


@pytest.mark.parametrize(("dn", "password"), [
    (f"uid=alice,{ldap.PEOPLE}", "wrong password"),
    (ldap.SERVICE_DN, ldap.USERS[0].password),
])
def test_a_wrong_password_does_not_bind(server: ldap.LdapServer, dn: str, password: str) -> None:
    """A wrong password (or another user's) is refused with invalid credentials (49)."""
    with pytest.raises(AssertionError, match="Invalid credentials"):
        ldap.search(server, dn, password)


def test_an_anonymous_search_finds_nothing(server: ldap.LdapServer) -> None:
    """Without a bind the directory shows nothing, not even its base (only users read)."""
    with pytest.raises(AssertionError, match="No such object"):
        ldap.search(server, "", "")
