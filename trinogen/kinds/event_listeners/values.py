"""A cluster's event listeners as the chart takes them (issue 21, item 3).

Each listener's file goes into `<role>.additionalConfigFiles` (the chart writes each entry into
the role's ConfigMap, mounted at /etc/trino, after passing it through Helm's `tpl`: hence
`helm_escape`), and the role's `event-listener.config-files` line into its own config.properties
(`server.coordinatorExtraConfig` / `server.workerExtraConfig`, so a worker without split
listeners names no file it does not have).
"""

from __future__ import annotations

from trinogen.model.listeners import ListenerFile, ListenerParts, Role
from trinogen.render.escape import helm_escape
from trinogen.render.texts import lines


def file_text(f: ListenerFile) -> str:
    """The listener's properties file, escaped as java.util.Properties reads it."""
    return "".join(f"{line}\n" for line in lines(f.lines))


def config_files(parts: ListenerParts, role: Role) -> dict[str, str]:
    """`<role>.additionalConfigFiles`: file name -> text that survives the chart's `tpl`."""
    return {f.key: helm_escape(file_text(f)) for f in parts.on(role)}


def config_line(parts: ListenerParts, role: Role) -> str | None:
    """The role's `event-listener.config-files=...` line (None: no listener on that role)."""
    line = parts.config_files(role)
    return None if line is None else lines([line])[0]
