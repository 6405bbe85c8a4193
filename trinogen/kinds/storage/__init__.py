"""The `storage` kind: an object store a lake catalog reads and writes (issue 13 item 5).

`options` reads the platform's `storage:` entries; each catalog picks its own
(`connectors[].storage`, or a catalog-library entry's `storage`: `trinogen.kinds.PER_CATALOG`),
where the connectors reader (model/connectors.py) picks it and `document` turns the pick into
that catalog's file-system properties. It adds no chart values of its own (no `values` module):
its lines are the catalog's. The client spooling protocol (model/spooling.py) and the exchange
(trinogen.kinds.exchange) name a store too and write its lines with `document`'s helpers. See
`trinogen.kinds`.
"""
