"""Self-contained JSON Schemas (2020-12) of request schemas, for tool definitions (agentmcp/).

The same marshmallow schemas and the same converter (apispec's) as the OpenAPI document, in its
3.1 dialect, which is JSON Schema; nested schemas land under `$defs`.
"""
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import Schema, validate

COMPONENTS = "#/components/schemas/"


def stating_exclusive_ranges(plugin: MarshmallowPlugin) -> None:
    """A Range's exclusive ends in the document too (apispec writes only minimum and maximum); call
    once the APISpec has initialised the plugin."""
    def exclusive(converter, field, **kwargs):
        numeric = converter.openapi_version.major >= 3 and converter.openapi_version.minor >= 1
        out: dict[str, Any] = {}
        for rule in field.validators:
            if isinstance(rule, validate.Range):
                if rule.min is not None and not rule.min_inclusive:
                    out["exclusiveMinimum"] = rule.min if numeric else True
                if rule.max is not None and not rule.max_inclusive:
                    out["exclusiveMaximum"] = rule.max if numeric else True
        return out

    if plugin.converter is None:  # set by APISpec(plugins=[plugin])
        raise RuntimeError("stating_exclusive_ranges needs a plugin an APISpec has initialised")
    plugin.converter.add_attribute_function(exclusive)


def schema_extra(schema: Any) -> dict[str, Any] | None:
    """What a schema states about itself as a whole (`JSON_SCHEMA_EXTRA`, e.g. "exactly one of"), which
    apispec cannot read from a @validates_schema method; added to its document beside the properties."""
    return dict(getattr(schema, "JSON_SCHEMA_EXTRA", None) or {}) or None


def json_schema(schema: type[Schema], *, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The schema of `schema` (narrowed to the fields `only`), with its nested schemas in `$defs`."""
    plugin = MarshmallowPlugin()
    spec = APISpec(title="tools", version="1", openapi_version="3.1.0", plugins=[plugin])
    stating_exclusive_ranges(plugin)
    name = schema.__name__.removesuffix("Schema")
    spec.components.schema(name, component=schema_extra(schema), schema=schema(only=only) if only else schema)
    components = _local_refs(spec.to_dict()["components"]["schemas"])
    root = components.pop(name)
    return {**root, "$defs": components} if components else root


def _local_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: (value.replace(COMPONENTS, "#/$defs/") if key == "$ref" else _local_refs(value))
                for key, value in node.items()}
    if isinstance(node, list):
        return [_local_refs(value) for value in node]
    return node
