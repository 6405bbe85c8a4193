"""The workers' side of a cluster's event listeners (templates/values/event_listeners.yaml.j2).

The coordinator's files and its `event-listener.config-files` line travel in the kind's `Part`
like every kind's (`files`, `coordinator`); a listener that logs split events is on the workers
too, and the template variable is theirs: `worker.additionalConfigFiles` (the chart writes each
entry into the worker ConfigMap, mounted at /etc/trino, after Helm's `tpl`: hence `helm_escape`).
The workers' config-files line is `Part.worker`, joined to `server.workerExtraConfig` by
`model.assemble`. Pure.
"""

from __future__ import annotations

from trinogen.kinds.event_listeners.document import ListenerParts
from trinogen.render.escape import helm_escape
from trinogen.settings import Settings


def values(part: ListenerParts, s: Settings) -> dict[str, str] | None:
    """The template variable `event_listeners`: the workers' files, None when they have none."""
    del s  # the option holds everything
    return {name: helm_escape(text) for name, text in part.worker_files} or None
