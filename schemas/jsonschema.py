"""Self-contained JSON Schemas (2020-12) of request schemas, for tool definitions (agentmcp/).

The same marshmallow schemas and the same converter (apispec's) as the OpenAPI document, in its
3.1 dialect, which is JSON Schema; nested schemas land under `$defs`.
"""
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import Schema

COMPONENTS = "#/components/schemas/"


def json_schema(schema: type[Schema], *, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The schema of `schema` (narrowed to the fields `only`), with its nested schemas in `$defs`."""
    spec = APISpec(title="tools", version="1", openapi_version="3.1.0", plugins=[MarshmallowPlugin()])
    name = schema.__name__.removesuffix("Schema")
    spec.components.schema(name, schema=schema(only=only) if only else schema)
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
