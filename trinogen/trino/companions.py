"""Server properties that make Trino need a companion file or plugin configuration. Pure facts.

One table (issue 21 item 4): each row is a config.properties key that, set (to one of `when`'s
values, or to anything), makes Trino read a configuration trinogen renders only through a
document field (`offered_by`), or not at all. A document setting it without that companion is
refused; `judged_by` says which rule refuses it when the table is not the only one that does
(those rules came first and keep their own messages; the table records why and is tested over
every row: tests/test_companions.py).

Facts read from Trino 476's jars (`lib/io.trino_trino-main-476.jar`, javap) and the registry of
every covered version: resource groups, the session property manager and the exchange manager
have no config.properties key at all (Trino reads `etc/resource-groups.properties`,
`etc/session-property-config.properties` and `etc/exchange-manager.properties` when they exist;
InternalResourceGroupManager, SessionPropertyDefaults, ExchangeManagerRegistry), so their keys
in `properties` are refused by the registry ("was not used").
"""

from __future__ import annotations

from dataclasses import dataclass

# Who refuses a row's property besides this table (the messages stay theirs).
REGISTRY = "the registry: no covered Trino version binds it in config.properties (was not used)"
PATHS = "trinogen.trino.paths.REFUSED: a document may not set it"


@dataclass(frozen=True)
class Companion:
    """What one property needs beside it, and whether trinogen renders that today."""

    when: frozenset[str] | None  # values (lower case) that need the companion; None: any value
    needs: str  # what must accompany the property
    offered_by: str | None  # the document field with which trinogen renders it; None: no way yet
    effect: str  # what Trino does without it (shown to the document's author)
    source: str  # where that was read
    judged_by: str | None = None  # None: refused by `missing()` below


COMPANIONS: dict[str, Companion] = {
    "protocol.spooling.enabled": Companion(
        frozenset({"true"}),
        "a spooling manager (etc/spooling-manager.properties on every node: "
        "spooling-manager.name and its storage) and protocol.spooling.shared-secret-key",
        "spooling",
        "Trino refuses to start: 'Spooling protocol is enabled, but manager configuration "
        "file does not exist'",
        "SpoolingManagerRegistry.loadSpoolingManager, called by io.trino.server.Server at "
        "startup; tests/test_trino_real_companions.py"),
    "retry-policy": Companion(
        frozenset({"task"}),
        "an exchange manager (etc/exchange-manager.properties on every node)",
        "faultTolerance.exchange",
        "Trino starts but fails every query: TASK retries read spooled task output",
        "tests/test_trino_real_fte.py",
        "trinogen.model.fault_tolerance (top level) and trinogen.model.roles (per role)"),
    "catalog.management": Companion(
        frozenset({"dynamic"}),
        "a catalog store Trino may write (catalog.store): the file store writes into "
        "etc/catalog, which the chart mounts from a read-only ConfigMap",
        None,
        "CREATE CATALOG fails ('Could not store catalog properties'), and a catalog created "
        "in SQL would escape every check trinogen makes on connectors",
        "io.trino.connector.FileCatalogStore; Kubernetes mounts ConfigMap volumes read-only"),
    "event-listener.config-files": Companion(
        None, "the event listeners' files (http, kafka and openlineage plugins)",
        "eventListeners",
        "a document's list would replace the platform's listeners",
        "EventListenerManager loads each listed file at startup; "
        "tests/test_trino_real_event_listeners.py", PATHS),
    "access-control.config-files": Companion(
        None, "the access control's files", "accessControl",
        "a document's files would replace the platform's access control",
        "AccessControlManager loads each listed file at startup", PATHS),
    "password-authenticator.config-files": Companion(
        None, "the password authenticators' files", "authentication",
        "a document's files would replace the platform's sign-in",
        "PasswordAuthenticatorManager loads each listed file at startup", PATHS),
    "header-authenticator.config-files": Companion(
        None, "the header authenticators' files", None,
        "a document's files would replace the platform's sign-in",
        "HeaderAuthenticatorManager loads each listed file at startup", PATHS),
    "http-server.authentication.type": Companion(
        None, "each authenticator's configuration (password-authenticator.properties, the "
        "oauth2/jwt/krb5 properties) and HTTPS", "authentication",
        "Trino refuses to start without an authenticator's configuration",
        "the chart's values and Trino's authentication documentation",
        "trinogen.model.rules.CHART_CONFIG_KEYS: the chart writes it"),
    # Refused by this table (not only the registry) so that it holds whatever
    # validation.trino_properties says, and points at the field that renders the file.
    "resource-groups.configuration-manager": Companion(
        None, "etc/resource-groups.properties (the key belongs there) and the groups' JSON",
        "resourceGroups",
        "Trino refuses to start: Configuration property was not used",
        "InternalResourceGroupManager reads etc/resource-groups.properties when it exists"),
    "resource-groups.config-file": Companion(
        None, "etc/resource-groups.properties with resource-groups.configuration-manager=file "
        "(the key belongs in that file) and the JSON it names", "resourceGroups",
        "Trino refuses to start: Configuration property was not used",
        "FileResourceGroupConfig (plugin/resource-group-managers), bound from "
        "etc/resource-groups.properties only"),
    "session-property-manager.config-files": Companion(
        None, "etc/session-property-config.properties (Trino 476 binds no such key)",
        "sessionProperties",
        "Trino refuses to start: Configuration property was not used",
        "SessionPropertyDefaults reads etc/session-property-config.properties when it exists",
        REGISTRY),
    "exchange-manager.name": Companion(
        None, "etc/exchange-manager.properties (the key belongs in that file)",
        "faultTolerance.exchange",
        "Trino refuses to start: Configuration property was not used",
        "ExchangeManagerRegistry reads etc/exchange-manager.properties when it exists",
        REGISTRY),
}


# The spooling protocol's own settings (io.trino.server.protocol.spooling.SpoolingConfig, with
# its @LegacyConfig maximum-segment-size): SpoolingServerModule binds them only when
# protocol.spooling.enabled=true (javap of trino-main-476), so without it Trino refuses to start
# ("was not used"), and with it Trino needs the spooling manager above. Either way a document's
# line fails, and without the protocol it would change nothing. (The encoding settings,
# `protocol.spooling.encoding.*`, are bound whether or not spooling is on: not listed.)
SPOOLING_SETTINGS = ("shared-secret-key", "retrieval-mode", "initial-segment-size",
                     "max-segment-size", "maximum-segment-size", "inlining.enabled",
                     "inlining.max-rows", "inlining.max-size")
COMPANIONS.update({
    f"protocol.spooling.{name}": Companion(
        None, "protocol.spooling.enabled=true (Trino binds the spooling settings only then) "
        "and the spooling manager that needs", "spooling",
        "Trino 476 refuses to start: Configuration property was not used",
        "SpoolingServerModule.setup builds SpoolingConfig only when SpoolingEnabledConfig."
        "isEnabled (javap, trino-main-476)")
    for name in SPOOLING_SETTINGS})


def missing(key: str, value: str) -> Companion | None:
    """The row a property needs and this table alone refuses, else None (one dict lookup for
    every property not in the table)."""
    row = COMPANIONS.get(key)
    if row is None or row.judged_by is not None:
        return None
    if row.when is not None and value.strip().lower() not in row.when:
        return None
    return row


def refusal(key: str, value: str, row: Companion) -> str:
    """The message for a property set without its companion."""
    if row.offered_by is None:
        offer = "trinogen renders no such configuration yet, so leave it out"
    else:
        offer = f"trinogen renders it from {row.offered_by}; use that instead"
    set_to = f"={value.strip()}" if row.when is not None else ""
    return f"{key}{set_to} needs {row.needs}: {offer} (without it: {row.effect})"
