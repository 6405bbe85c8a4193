"""Platform hatches (issue 21, item 6): what a platform names and a document never writes.

Each module is one hatch, pure: `parse(where, raw)` reads one named entry of the settings into a
frozen value (ConfigError names `<kind>.<name>.<field>`), and plain functions give the chart
values (or objects) it contributes and the problems it has with a cluster's other picks.

- `image`: the Trino image's repository, a digest per Trino version, pull policy and secrets;
- `runtime`: extra environment variables and JVM flags, none that trinogen or the chart writes;
- `network`: the chart's NetworkPolicy plus a coordinator-only one for clients;
- `service`: the coordinator Service's type and the Services' annotations.

A document can pick an option by name (a tenant may be allowed to); it writes none of the fields.
"""
