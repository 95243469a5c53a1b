"""Schemas of /api/openapi.json as JSON Schema validators."""


def resolved(document, node):
    """`node` with every $ref replaced by its component (the document has no cycles)."""
    if isinstance(node, dict):
        if "$ref" in node:
            return resolved(document, document["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]])
        return {key: resolved(document, value) for key, value in node.items()}
    if isinstance(node, list):
        return [resolved(document, value) for value in node]
    return node


def _as_json_schema(node):
    """OpenAPI 3.0 `nullable` as JSON Schema: null admitted besides the schema."""
    if isinstance(node, dict):
        node = {key: _as_json_schema(value) for key, value in node.items()}
        if node.pop("nullable", False):
            return {"anyOf": [node, {"type": "null"}]}
        return node
    if isinstance(node, list):
        return [_as_json_schema(value) for value in node]
    return node


def schema_validator(document, ref):
    import jsonschema

    schema = _as_json_schema(resolved(document, {"$ref": ref}))
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
