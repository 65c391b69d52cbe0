"""Validate every tool's inputSchema and outputSchema as a strict validator would (spec SRV-002).

usage: strict_schemas.py < DOC

DOC is JSON: {"tools": <tools/list result's tools>, "instances": {tool: [structuredContent, ...]}},
written by tests/real_client.rs from the built server's replies over stdio.

Hosts validate tool schemas with strict JSON Schema validators, which warn
about (or refuse) anything the standard does not define. This is such a
validator, built on the `jsonschema` package the MCP Python SDK depends on:
- each schema must be a valid draft 2020-12 schema (the metaschema check);
- every keyword in every subschema must be one draft 2020-12 defines;
- every `format` must be one draft 2020-12 defines ("uint", "uint64",
  "int32" are not): an unknown format is an error, never ignored;
- each instance (a real result) must validate against its tool's
  outputSchema with a FormatChecker, through a validator whose `format`
  keyword fails on an unknown format instead of ignoring it.
Prints one line per warning and per error, then both counts, and "ALL OK"
when both are zero; exits 1 otherwise.
"""
import json
import sys

import jsonschema
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.exceptions import best_match

# JSON Schema draft 2020-12, Validation §7.3: the formats the standard defines.
FORMATS = {
    "date-time", "date", "time", "duration",
    "email", "idn-email",
    "hostname", "idn-hostname",
    "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid",
    "uri-template",
    "json-pointer", "relative-json-pointer",
    "regex",
}

# Every keyword of the draft 2020-12 vocabularies (core, applicator,
# unevaluated, validation, meta-data, format-annotation, content).
KEYWORDS = {
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
    "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
    "unevaluatedItems", "unevaluatedProperties",
    "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired",
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    "format",
    "contentEncoding", "contentMediaType", "contentSchema",
}

# Keywords whose value is one subschema, a map of them, or a list of them.
ONE = {"items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
       "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
MAP = {"$defs", "properties", "patternProperties", "dependentSchemas"}
LIST = {"prefixItems", "allOf", "anyOf", "oneOf"}


def pointer(parts):
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def walk(schema, path=()):
    """Yields (path, subschema) for the schema and every subschema in it."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key, value in schema.items():
        if key in ONE:
            yield from walk(value, path + (key,))
        elif key in MAP and isinstance(value, dict):
            for name, sub in value.items():
                yield from walk(sub, path + (key, name))
        elif key in LIST and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from walk(sub, path + (key, i))


def schema_warnings(schema):
    """Every warning a strict validator gives about the schema itself."""
    out = []
    for err in Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(schema):
        out.append(f"not a valid draft 2020-12 schema at {pointer(err.absolute_path)}: {err.message}")
    for path, sub in walk(schema):
        for key in sub:
            if key not in KEYWORDS:
                out.append(f'unknown keyword "{key}" in schema at path "{pointer(path)}"')
        fmt = sub.get("format")
        if fmt is not None and fmt not in FORMATS:
            out.append(f'unknown format "{fmt}" in schema at path "{pointer(path)}"')
    return out


STANDARD_FORMAT = Draft202012Validator.VALIDATORS["format"]


def strict_format(validator, fmt, instance, schema):
    """The `format` keyword, failing on a format the standard does not define."""
    if fmt not in FORMATS:
        yield ValidationError(f'unknown format "{fmt}"')
        return
    yield from STANDARD_FORMAT(validator, fmt, instance, schema)


StrictValidator = jsonschema.validators.extend(Draft202012Validator, validators={"format": strict_format})


def main():
    doc = json.load(sys.stdin)
    tools, instances = doc["tools"], doc.get("instances", {})
    warnings, schemas = [], 0
    for tool in tools:
        for which in ("inputSchema", "outputSchema"):
            schema = tool.get(which)
            if schema is None:
                if which == "inputSchema":
                    warnings.append(f"{tool['name']}: no inputSchema")
                continue
            schemas += 1
            for w in schema_warnings(schema):
                warnings.append(f"{tool['name']}.{which}: {w}")
    by_name = {t["name"]: t for t in tools}
    # One line per (tool, schema location, message), however many results
    # (or files in one result) met it, with the first place it was met.
    errors, checked = {}, 0
    for name, values in instances.items():
        schema = by_name[name].get("outputSchema")
        if schema is None:
            errors[(name, "", "results given but the tool has no outputSchema")] = ["-"]
            continue
        validator = StrictValidator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        for i, value in enumerate(values):
            checked += 1
            for err in validator.iter_errors(value):
                err = best_match([err])
                key = (name, pointer(err.absolute_schema_path), err.message[:300])
                errors.setdefault(key, []).append(f"result {i} at {pointer(err.absolute_path)}")
    for w in warnings:
        print(f"WARN {w}")
    for (name, where, message), seen in errors.items():
        print(f"FAIL {name}.outputSchema {where}: {message} ({seen[0]}, {len(seen)} in all)")
    print(f"{len(warnings)} schema warnings in {schemas} schemas of {len(tools)} tools")
    print(f"{len(errors)} errors validating {checked} results strictly")
    if warnings or errors:
        sys.exit(1)
    print("ALL OK")


main()
