"""The `session_defaults` kind: default session properties by who sends a query (issue 21,
item 2), through Trino's file-based session property manager.

`options` reads the platform's `session_defaults:` entries; `document` checks the entries a
document writes for its own cluster (`sessionProperties: [...]`) and the option it picks
(`sessionDefaults: "<name>"`), the platform's written last so that they win where they match;
`values` writes the chart's `sessionProperties:` through
templates/values/session_defaults.yaml.j2. The checks themselves are
`trinogen.model.session_defaults`. See `trinogen.kinds`.
"""
