"""JSON Schema validation for graders, safe on text a run controls: every regex in a schema (`pattern`,
`patternProperties`, and the `additionalProperties` that depend on them) runs within `patterns`' time budget,
and `$ref`s resolve inside the schema only, unless remote references are enabled (then each document is
fetched once and cached). jsonschema is imported on first use: most configs have no schema grader."""

from __future__ import annotations

import functools
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from otelgrade.core.errors import ConfigError
from otelgrade.core.patterns import Pattern, PatternError

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

FETCH_TIMEOUT_SECONDS = 10.0


def schema_validator(schema: Mapping[str, Any] | bool, remote_refs: bool = False) -> Validator:
    """A validator for `schema` (its `$schema` draft, else the latest); raises `ConfigError` for a schema that
    is invalid or whose regexes cannot be time-limited."""
    import jsonschema
    import jsonschema_specifications
    import referencing

    base = jsonschema.validators.validator_for(schema)
    try:
        base.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"invalid JSON Schema: {exc.message}", "schema") from None
    if _uses(schema, "patternProperties") and _uses(schema, "unevaluatedProperties"):
        raise ConfigError(
            "unevaluatedProperties together with patternProperties is not supported (those patterns could not "
            "be time-limited); use additionalProperties instead",
            "schema",
        )
    keywords = {"pattern": _pattern, "patternProperties": _pattern_properties}
    if "additionalProperties" in base.VALIDATORS:
        keywords["additionalProperties"] = _additional_properties(base.VALIDATORS["additionalProperties"])
    cls = jsonschema.validators.extend(base, keywords)
    registry: referencing.Registry[Any] = jsonschema_specifications.REGISTRY  # the drafts' own meta-schemas
    if remote_refs:
        fetch = _fetcher(base.META_SCHEMA["$schema"])
        registry = referencing.Registry(retrieve=fetch).combine(registry)  # type: ignore[call-arg]  # attrs field
    validator: Validator = cls(schema, registry=registry)
    return validator


def _compiled(pattern: str) -> Pattern:
    try:
        return Pattern(pattern)
    except PatternError as exc:  # check_schema accepts what ECMA-262 accepts; Python may not
        raise _error(f"the schema's regex {pattern!r} is not valid in Python: {exc}") from None


def _pattern(validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and _compiled(pattern).search(instance) is None:
        yield _error(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Validator, properties: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        compiled = _compiled(pattern)
        for key, value in instance.items():
            if compiled.search(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(original: Any) -> Any:
    """jsonschema's own keyword where no patterns are involved; with `patternProperties`, the same checks and
    messages with the patterns run here."""

    def additional(validator: Validator, allowed: Any, instance: Any, schema: Mapping[str, Any]) -> Any:
        patterns = schema.get("patternProperties")
        if not patterns or not validator.is_type(instance, "object"):
            return original(validator, allowed, instance, schema)
        return _unmatched(validator, allowed, instance, schema, [_compiled(p) for p in patterns])

    return additional


def _unmatched(
    validator: Validator, allowed: Any, instance: Mapping[str, Any], schema: Mapping[str, Any], patterns: list[Pattern]
) -> Iterator[ValidationError]:
    named = schema.get("properties", {})
    extras = [k for k in instance if k not in named and not any(p.search(k) for p in patterns)]
    if validator.is_type(allowed, "object"):
        for key in extras:
            yield from validator.descend(instance[key], allowed, path=key)
    elif not allowed and extras:
        verb = "does" if len(extras) == 1 else "do"
        listed = ", ".join(repr(k) for k in sorted(extras))
        regexes = ", ".join(repr(p.source) for p in sorted(patterns, key=lambda p: p.source))
        yield _error(f"{listed} {verb} not match any of the regexes: {regexes}")


def _uses(schema: Any, keyword: str) -> bool:
    if isinstance(schema, Mapping):
        return keyword in schema or any(_uses(v, keyword) for v in schema.values())
    if isinstance(schema, list):
        return any(_uses(v, keyword) for v in schema)
    return False


@functools.cache
def _fetcher(dialect: str) -> Callable[[str], Any]:
    """Only with `remote_refs: true`: fetch a referenced schema document, once per URI (read as `dialect`
    unless it names its own `$schema`)."""
    import referencing.jsonschema
    import referencing.retrieval

    specification = referencing.jsonschema.specification_with(dialect)

    @referencing.retrieval.to_cached_resource(
        from_contents=lambda contents: referencing.Resource.from_contents(contents, specification)
    )
    def fetch(uri: str) -> str:
        with urllib.request.urlopen(uri, timeout=FETCH_TIMEOUT_SECONDS) as response:
            return str(response.read().decode())

    return fetch


def _error(message: str) -> ValidationError:
    from jsonschema.exceptions import ValidationError

    return ValidationError(message)
