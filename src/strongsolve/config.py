"""Validation of the workflow configuration against its JSON schema.

``workflow/schemas/config.schema.yaml`` is the main schema; each other game's section is embedded
from ``workflow/schemas/<section>.schema.yaml`` when that file exists. Defaults come from the schema;
an unknown key, a wrong type or an out-of-range value raises :class:`ConfigError` with one line that
names the key, the bad value and what is allowed. Strings that Snakemake's ``--config`` leaves in
nested values (``--config g2048='{rows: 2}'``) are read as the numbers they spell first.
"""

import copy
import math
from pathlib import Path

import jsonschema
import yaml

from .games.g2048.rules.targets import check_target

SECTIONS = ("shutbox", "ludo", "truco")


class ConfigError(ValueError):
    """A bad configuration value: the message names the key, the value and what is allowed."""


def load_schema(schema_dir):
    """The main schema with the other games' sections embedded (a dict)."""
    schema_dir = Path(schema_dir)
    schema = yaml.safe_load((schema_dir / "config.schema.yaml").read_text())
    for section in SECTIONS:
        fragment = schema_dir / f"{section}.schema.yaml"
        if fragment.exists():
            sub = yaml.safe_load(fragment.read_text())
            sub.pop("$schema", None)
            sub.setdefault("default", {})
            schema["properties"][section] = sub
    return schema


def _fill_defaults(schema, value):
    """Recursively add the schema's defaults for missing object keys (in place)."""
    if schema.get("type") == "object" and isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                _fill_defaults(sub, value[key])


def _types(schema):
    t = schema.get("type", [])
    return [t] if isinstance(t, str) else list(t)


def _from_text(text, types):
    """The value a string stands for when the schema wants a non-string type and the string reads
    exactly as one (``"4"`` -> 4, ``"0.8"`` -> 0.8, ``"null"`` -> None); else the string unchanged."""
    t = text.strip()
    if "null" in types and t in ("null", "~", ""):
        return None
    if "boolean" in types and t in ("true", "false"):
        return t == "true"
    for kind, parse in (("integer", int), ("number", int), ("number", float)):
        if kind in types:
            try:
                return parse(t)
            except ValueError:
                pass
    return text


def _coerce(schema, value):
    """Values as the schema types them (returns the converted value; dicts and lists in place).

    Snakemake's ``--config`` reads a nested value (``g2048={rows: 2}``) with YAML's base loader, so
    every scalar in it is a string; and JSON Schema counts 3.0 as an integer. Both are converted
    here, so the stages get ints where they expect ints; anything else is left for the validator.
    """
    types = _types(schema)
    if isinstance(value, str) and types and "string" not in types:
        return _from_text(value, types)
    if isinstance(value, float) and value.is_integer() and "integer" in types and "number" not in types:
        return int(value)
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                value[key] = _coerce(sub, value[key])
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        value[:] = [_coerce(schema["items"], v) for v in value]
    return value


def _non_finite(value, key=""):
    """The dotted key of the first NaN or infinite number in ``value`` (which pass min/max checks)."""
    if isinstance(value, float) and not math.isfinite(value):
        return key or "(top level)"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _non_finite(v, f"{key}.{k}" if key else str(k))
        if found:
            return found
    return None


def _describe(error):
    key = ".".join(str(p) for p in error.absolute_path)
    s = error.schema
    if error.validator == "additionalProperties":
        allowed = sorted(s.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        where = f" in {key}" if key else ""
        names = ", ".join(repr(f"{key}.{k}" if key else k) for k in extra)
        return f"unknown config key {names}; allowed keys{where}: {', '.join(allowed)}"
    allowed = []
    if "enum" in s:
        allowed.append("one of " + ", ".join(repr(v) for v in s["enum"]))
    if "type" in s:
        allowed.append("type " + (" or ".join(s["type"]) if isinstance(s["type"], list) else s["type"]))
    if "minimum" in s:
        allowed.append(f">= {s['minimum']}")
    if "maximum" in s:
        allowed.append(f"<= {s['maximum']}")
    if "exclusiveMinimum" in s:
        allowed.append(f"> {s['exclusiveMinimum']}")
    if "exclusiveMaximum" in s:
        allowed.append(f"< {s['exclusiveMaximum']}")
    if s.get("uniqueItems"):
        allowed.append("no repeated items")
    if "multipleOf" in s:
        allowed.append(f"a multiple of {s['multipleOf']}")
    if "minLength" in s:
        allowed.append("not empty")
    what = "; ".join(allowed) or error.message
    return f"config key {key or '(top level)'} = {error.instance!r} is not allowed; allowed: {what}"


def validate(config, schema_dir):
    """Validate a configuration and fill in the defaults.

    Parameters
    ----------
    config : dict
        As read from config.yaml plus presets and ``--config`` overrides.
    schema_dir : str or Path
        Directory holding ``config.schema.yaml`` and the section fragments.

    Returns
    -------
    dict
        A validated copy with every default filled in.

    Raises
    ------
    ConfigError
        On the first bad value (unknown key, wrong type, out of range, NaN or infinite number, spawn
        probabilities that do not sum to 1, a 1x1 board, a reach-a-tile target that a start state
        holds or the board cannot make: :func:`strongsolve.games.g2048.rules.targets.check_target`).
    """
    schema = load_schema(schema_dir)
    config = _coerce(schema, copy.deepcopy(dict(config)))
    _fill_defaults(schema, config)
    bad = _non_finite(config)
    if bad:
        raise ConfigError(f"config key {bad} is NaN or infinite; allowed: a finite number")
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        # the most specific error of the first bad key (e.g. the type of an item, not "anyOf")
        raise ConfigError(_describe(errors[0]))
    g = config["g2048"]
    p2, p4 = g["spawn"]["p2"], g["spawn"]["p4"]
    if abs(p2 + p4 - 1.0) > 1e-12:
        raise ConfigError(f"config key g2048.spawn: p2 + p4 = {p2} + {p4} = {p2 + p4!r}; allowed: "
                          "probabilities that sum to 1")
    if g["rows"] * g["cols"] < 2:
        raise ConfigError("config keys g2048.rows, g2048.cols = 1, 1: a 1x1 board cannot hold the two "
                          "start tiles; allowed: at least 2 cells")
    t = g["target_tile"]
    if t & (t - 1):
        raise ConfigError(f"config key g2048.target_tile = {t!r} is not allowed; allowed: a power of two "
                          "from 4 to 32768")
    if g["objective"] == "reach_tile":  # the score objective ignores target_tile
        try:
            check_target(g["rows"], g["cols"], p2, t, key="config key g2048.target_tile")
        except ValueError as err:
            raise ConfigError(str(err)) from None
    return config


def apply_preset(config, presets_dir):
    """Merge ``workflow/presets/<config['preset']>.yaml`` over ``config`` (the preset's keys win, as
    with ``--configfile``).

    Raises
    ------
    ConfigError
        If the preset does not exist (the message lists the available ones).
    """
    name = config.get("preset")
    if not name:
        return config
    names = sorted(p.stem for p in Path(presets_dir).glob("*.yaml"))
    if name not in names:  # a name, never a path: presets live in presets_dir only
        raise ConfigError(f"unknown preset {name!r}; allowed: {', '.join(names)}")
    merged = copy.deepcopy(dict(config))
    merge_config(merged, yaml.safe_load((Path(presets_dir) / f"{name}.yaml").read_text()) or {})
    return merged


def merge_config(base, over):
    """Merge ``over`` into ``base`` in place, recursively for dicts (as Snakemake merges
    ``--configfile`` and ``--config`` over config.yaml); other values are replaced."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge_config(base[key], value)
        else:
            base[key] = value
