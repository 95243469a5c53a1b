"""How the schemas read as OpenAPI (the service's document, flask-smorest's) and as JSON Schema (the MCP
tools', agentmcp/): apispec's marshmallow plugin, stating what our validators check beyond each field."""

from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin, OpenAPIConverter
from marshmallow import Schema, validate

NULL_ONLY = {"type": "object", "nullable": True, "enum": [None]}  # OpenAPI 3.0 has no type null


def exclusive_ends(converter: OpenAPIConverter, field: Any, **_kwargs: Any) -> dict[str, Any]:
    """A Range's exclusive ends (apispec writes only minimum and maximum)."""
    numeric = converter.openapi_version.major >= 3 and converter.openapi_version.minor >= 1
    out: dict[str, Any] = {}
    for rule in field.validators:
        if isinstance(rule, validate.Range):
            if rule.min is not None and not rule.min_inclusive:
                out["exclusiveMinimum"] = rule.min if numeric else True
            if rule.max is not None and not rule.max_inclusive:
                out["exclusiveMaximum"] = rule.max if numeric else True
    return out


def empty_is_absent(_converter: OpenAPIConverter, _field: Any, ret: dict[str, Any], **_kwargs: Any) -> dict[str, Any]:
    """schemas.common.QuerySchema reads an empty query parameter as not given (a plain HTML form sends `?type=`)."""
    return {"allowEmptyValue": True} if ret["in"] == "query" else {}


class Converter(OpenAPIConverter):
    def field2nullable(self, field: Any, ret: dict[str, Any]) -> dict[str, Any]:
        """OpenAPI 3.0 reads `nullable` only beside a type: apispec's nullable reference, anyOf [{type: object,
        nullable}, {$ref}], admits any object; anyOf [{$ref}, null only] keeps the nested schema's rules."""
        if field.allow_none and (self.openapi_version.major, self.openapi_version.minor) == (3, 0):
            nested = [{"$ref": ret.pop("$ref")}] if "$ref" in ret else ret.pop("allOf", None)
            if nested:
                return {"anyOf": [*nested, NULL_ONLY]}
            for key in ("oneOf", "anyOf"):
                if key in ret and "type" not in ret:
                    return {key: [*ret[key], NULL_ONLY]}
        return super().field2nullable(field, ret)


class SchemaPlugin(MarshmallowPlugin):
    Converter = Converter

    def init_spec(self, document: APISpec) -> None:
        super().init_spec(document)
        assert self.converter is not None
        self.converter.add_attribute_function(exclusive_ends)
        self.converter.add_parameter_attribute_function(empty_is_absent)

    def schema_helper(self, *args: Any, **kwargs: Any) -> Any:
        """Plus what a schema states about itself as a whole (`JSON_SCHEMA_EXTRA`, e.g. "exactly one of"),
        which apispec cannot read from a @validates_schema method."""
        document = super().schema_helper(*args, **kwargs)
        return {**document, **getattr(kwargs.get("schema"), "JSON_SCHEMA_EXTRA", {})} if document else document


def json_schema(schema: type[Schema], *, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The JSON Schema (2020-12, OpenAPI 3.1's dialect) of `schema` narrowed to `only`, nested schemas in `$defs`."""
    spec = APISpec(title="tools", version="1", openapi_version="3.1.0", plugins=[SchemaPlugin()])
    name = schema.__name__.removesuffix("Schema")
    spec.components.schema(name, schema=schema(only=only) if only else schema)
    components = _local_refs(spec.to_dict()["components"]["schemas"])
    root = components.pop(name)
    return {**root, "$defs": components} if components else root


def _local_refs(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: (value.replace("#/components/schemas/", "#/$defs/") if key == "$ref" else _local_refs(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_local_refs(value) for value in node]
    return node
