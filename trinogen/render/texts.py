"""The properties lines trinogen hands the chart, escaped as Trino reads them.

One builder for the renderer (values.yaml takes these lines) and for the limits check (the
chart's ConfigMaps hold them): what is measured is what is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from trinogen.model import Cluster, Connector
from trinogen.render.escape import prop_key, prop_value
from trinogen.secrets import Resolved, Secret, SecretUse


class ServerTexts(NamedTuple):  # a tuple: a frozen dataclass costs every run ~3 M instructions to create
    """Each list of `key=value` lines the chart writes into its role ConfigMaps."""

    config: list[str]  # additionalConfigProperties: config.properties of both roles
    node: list[str]  # additionalNodeProperties
    log: list[str]  # additionalLogProperties: the loggers besides io.trino
    coordinator: list[str]  # server.coordinatorExtraConfig
    worker: list[str]  # server.workerExtraConfig
    exchange: list[str | Secret]  # additionalExchangeManagerProperties (a Secret where inline)
    access: list[str]  # accessControl.properties: an OPA option's access-control.properties
    spooling: Sequence[str] = ()  # spooling-manager.properties, both roles' additionalConfigFiles


def server_texts(cluster: Cluster, resolved: Resolved, inline: bool) -> ServerTexts:
    """The lines of one cluster, each side escaped by java.util.Properties rules."""
    opa = cluster.kind("opa")  # trinogen.kinds.opa.document.Opa
    access = opa.properties if opa is not None else ()
    return ServerTexts(
        config=lines(cluster.config_properties), node=lines(cluster.node_properties),
        log=lines(cluster.log_properties), coordinator=lines(cluster.coordinator.extra_properties),
        worker=lines(cluster.worker.extra_properties),
        exchange=_exchange_lines(cluster, resolved, inline), access=lines(access),
        spooling=lines(cluster.spooling_manager))


def _exchange_lines(cluster: Cluster, resolved: Resolved, inline: bool) -> list[str | Secret]:
    """additionalExchangeManagerProperties: `key=value` lines (a Secret where inline)."""
    if cluster.exchange is None:
        return []
    out: list[str | Secret] = []
    for key, value in final_entries(cluster.exchange.properties, resolved, inline):
        if isinstance(value, Secret):
            out.append(Secret(f"{prop_key(key)}={prop_value(value.reveal())}"))
        else:
            out.append(f"{prop_key(key)}={prop_value(value)}")
    return out


def final_properties(
    conn: Connector, resolved: Resolved, inline: bool
) -> list[tuple[str, str | Secret]]:
    """Property values with each placeholder replaced: ${ENV:VAR}, or the value when inline."""
    return final_entries(conn.properties, resolved, inline)


def final_entries(
    entries: Iterable[tuple[str, tuple[str | SecretUse, ...]]], resolved: Resolved, inline: bool
) -> list[tuple[str, str | Secret]]:
    out: list[tuple[str, str | Secret]] = []
    for key, segments in entries:
        if len(segments) == 1 and type(segments[0]) is str:  # most values: no placeholder
            out.append((key, segments[0]))
        elif inline and any(isinstance(s, SecretUse) for s in segments):
            out.append((key, Secret("".join(_revealed(seg, resolved) for seg in segments))))
        else:
            out.append((key, "".join(
                f"${{ENV:{seg.env}}}" if isinstance(seg, SecretUse) else seg for seg in segments
            )))
    return out


def _revealed(seg: str | SecretUse, resolved: Resolved) -> str:
    if isinstance(seg, SecretUse):
        return resolved[seg.ref.secret_path].values[seg.ref.key].reveal()
    return seg


def lines(props: Iterable[tuple[str, str]]) -> list[str]:
    """`key=value` lines, each side escaped by java.util.Properties rules."""
    return [f"{prop_key(k)}={prop_value(v)}" for k, v in props]
