"""The `exchange` kind: where a cluster's fault-tolerant execution spools (issue 14, item 4).

`options` reads the platform's `exchange:` entries (each names a `storage` option); a document
picks one inside `faultTolerance` (`{"retryPolicy": "TASK", "exchange": "<name>"}`), where
`model/fault_tolerance.py` picks and fills it (`document`); `values` writes the chart's
`server.exchangeManager` through templates/values/exchange.yaml.j2. Its properties lines hold
Vault placeholders: `render/texts.py` renders them with the run's Vault values (inline or as
`${ENV:...}`) into `additionalExchangeManagerProperties`. See `trinogen.kinds`.
"""
