"""Validation of the workflow configuration against its JSON schema (issues 2 and 5).

``workflow/schemas/config.schema.yaml`` is the main schema; each other game's section is embedded
from ``workflow/schemas/<section>.schema.yaml`` when that file exists. Defaults come from the schema;
an unknown key, a wrong type or an out-of-range value raises :class:`ConfigError` with one line that
names the key, the bad value and what is allowed.
"""

import copy
from pathlib import Path

import jsonschema
import yaml

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


def _describe(error):
    key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
    s = error.schema
    if error.validator == "additionalProperties":
        allowed = sorted(s.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed))
        return f"unknown config key {', '.join(repr(k) for k in extra)} in {key}; allowed keys: {', '.join(allowed)}"
    allowed = []
    if "enum" in s:
        allowed.append("one of " + ", ".join(repr(v) for v in s["enum"]))
    if "type" in s:
        allowed.append("type " + (" or ".join(s["type"]) if isinstance(s["type"], list) else s["type"]))
    if "minimum" in s:
        allowed.append(f">= {s['minimum']}")
    if "maximum" in s:
        allowed.append(f"<= {s['maximum']}")
    if "multipleOf" in s:
        allowed.append(f"a multiple of {s['multipleOf']}")
    if "minLength" in s:
        allowed.append("not empty")
    what = "; ".join(allowed) or error.message
    return f"config key {key} = {error.instance!r} is not allowed; allowed: {what}"


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
        On the first bad value (unknown key, wrong type, out of range, spawn probabilities that do
        not sum to 1, a 1x1 board).
    """
    schema = load_schema(schema_dir)
    config = copy.deepcopy(dict(config))
    _fill_defaults(schema, config)
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
    path = Path(presets_dir) / f"{name}.yaml"
    if not path.is_file():
        names = sorted(p.stem for p in Path(presets_dir).glob("*.yaml"))
        raise ConfigError(f"unknown preset {name!r}; allowed: {', '.join(names)}")
    merged = copy.deepcopy(dict(config))
    _merge(merged, yaml.safe_load(path.read_text()) or {})
    return merged


def _merge(base, over):
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
