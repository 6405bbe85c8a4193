"""The `runtime` kind: extra environment variables and JVM flags (issue 21, item 6, a platform
hatch).

`options` reads the platform's `runtime:` entries and refuses what would shadow or bypass what
trinogen writes (`jvm` judges one flag), `document` takes the one a document or profile picks
(`runtime: "<name>"`) and fills its `{cluster}`/`{owner}`, `values` gives the chart's `env`
(templates/values/runtime.yaml.j2) and each role's flags (values.yaml.j2's additionalJVMConfig).
See `trinogen.kinds`.
"""
