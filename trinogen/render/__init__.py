"""Cluster -> {path: bytes} through the Jinja2 templates. Pure: the same input gives the same bytes.

Document content is data, never a template: templates may only emit values through the escaping
filters (`yaml`, `yaml_text`, `prop_key`, `prop_value`); a bare `{{ value }}` fails the render.
Every rendered YAML file is parsed back as a self-check.

The package, one job per module:

- `escape`: YAML scalars, Java properties keys and values, Helm `tpl` escaping;
- `headers`: the header of every generated file, and reading it back;
- `names`: the object names the Trino chart derives from a release;
- `templates`: the edge, template files read from disk and the bytecode cache's location;
- `environment`: the strict Jinja2 environment and its filters;
- `renderer`: `Renderer`, one cluster's files (and the app-of-apps);
- `texts`: the properties lines trinogen hands the chart, escaped;
- `objects`: every object a cluster puts into its namespace, measured as it will be written;
- `limits`: Kubernetes' size limits and unique names over those objects (`LimitError`);
- `selfcheck`: rendered YAML parsed back.
"""

from trinogen.render.escape import (
    Safe,
    helm_escape,
    helm_unescape,
    prop_key,
    prop_value,
    yaml_scalar,
    yaml_text,
)
from trinogen.render.headers import (
    HEAD_BYTES,
    HEADER_MARK,
    FileHeader,
    header,
    parse_header,
    parse_shared_catalog,
)
from trinogen.render.limits import MAX_ANNOTATION_BYTES, MAX_DATA_BYTES, LimitError
from trinogen.render.names import chart_fullname, chart_worker_name
from trinogen.render.renderer import (
    CHART_DEFAULT_CATALOGS,
    EXTERNAL_SECRET,
    EXTRA_DIRS,
    MANIFESTS_DIR,
    SECRETS_DIR,
    VALUES,
    Renderer,
)
from trinogen.render.selfcheck import RenderError, check_yaml
from trinogen.render.templates import (
    TEMPLATE_NAMES,
    Templates,
    builtin_templates_dir,
    bytecode_cache,
    load_templates,
)

__all__ = [
    "CHART_DEFAULT_CATALOGS",
    "EXTERNAL_SECRET",
    "EXTRA_DIRS",
    "HEADER_MARK",
    "HEAD_BYTES",
    "MANIFESTS_DIR",
    "MAX_ANNOTATION_BYTES",
    "MAX_DATA_BYTES",
    "SECRETS_DIR",
    "TEMPLATE_NAMES",
    "VALUES",
    "FileHeader",
    "LimitError",
    "RenderError",
    "Renderer",
    "Safe",
    "Templates",
    "builtin_templates_dir",
    "bytecode_cache",
    "chart_fullname",
    "chart_worker_name",
    "check_yaml",
    "header",
    "helm_escape",
    "helm_unescape",
    "load_templates",
    "parse_header",
    "parse_shared_catalog",
    "prop_key",
    "prop_value",
    "yaml_scalar",
    "yaml_text",
]
