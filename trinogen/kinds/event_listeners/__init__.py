"""The `event_listeners` kind: where each cluster's query events go (issue 21, item 3).

`options` reads the platform's `event_listeners:` entries (HTTP, Kafka, OpenLineage), `document`
picks the listeners a cluster gets (`eventListeners: [<name>, ...]` and every option required for
its profile or owner) and writes each one's properties file, `values` has nothing of its own: the
files and the `event-listener.config-files` lines travel in the kind's `Part`. See
`trinogen.kinds`.
"""
