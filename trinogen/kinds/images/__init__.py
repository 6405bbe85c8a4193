"""The `images` kind: where a cluster's Trino image comes from (issue 21, item 6, a platform
hatch).

`options` reads the platform's `images:` entries (repository, a digest per Trino version, pull
policy, pull Secrets), `document` fills the one a document or profile picks (`image: "<name>"`)
for its Trino version, `values` gives the chart's `image`/`imagePullSecrets` through
templates/values/images.yaml.j2 and the JDK-8329528 flags the chart leaves out for another image
(values.yaml.j2 writes them first in each role's additionalJVMConfig). See `trinogen.kinds`.
"""
