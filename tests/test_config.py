"""Validation of the workflow configuration: every bad value gets one clear message
naming the key, the value and what is allowed; through the real `snakemake` command line it exits
non-zero before anything under results/ is created or touched."""

import copy
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from strongsolve.config import ConfigError, apply_preset, load_schema, merge_config, validate

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "workflow" / "schemas"
PRESETS = REPO / "workflow" / "presets"
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
BASE = yaml.safe_load((REPO / "config.yaml").read_text())


def with_override(**sections):
    """config.yaml with some keys replaced; a dict value is merged into that section."""
    config = copy.deepcopy(BASE)
    merge_config(config, sections)
    return config


INT_1_4 = "allowed: type integer; >= 1; <= 4"
BAD = [
    # wrong type
    ({"g2048": {"rows": "three"}}, f"config key g2048.rows = 'three' is not allowed; {INT_1_4}"),
    ({"g2048": {"rows": True}}, f"config key g2048.rows = True is not allowed; {INT_1_4}"),
    ({"g2048": {"cols": 2.5}}, f"config key g2048.cols = 2.5 is not allowed; {INT_1_4}"),
    ({"g2048": {"ages_per_job": [4]}}, "config key g2048.ages_per_job = [4] is not allowed; allowed: type integer; >= 1"),
    ({"g2048": {"spawn": 0.9}}, "config key g2048.spawn = 0.9 is not allowed; allowed: type object"),
    ({"g2048": {"spawn": {"p2": "lots"}}}, "config key g2048.spawn.p2 = 'lots' is not allowed; allowed: type number; >= 0; <= 1"),
    ({"results": 5}, "config key results = 5 is not allowed; allowed: type string; not empty"),
    ({"games": "g2048"}, "config key games = 'g2048' is not allowed; allowed: type array"),
    ({"max_age": "ten"}, "config key max_age = 'ten' is not allowed; allowed: type integer or null; >= 4; a multiple of 2"),
    # out of range, or not one of the allowed values
    ({"g2048": {"rows": 0}}, f"config key g2048.rows = 0 is not allowed; {INT_1_4}"),
    ({"g2048": {"rows": 5}}, f"config key g2048.rows = 5 is not allowed; {INT_1_4}"),
    ({"g2048": {"cols": 0}}, f"config key g2048.cols = 0 is not allowed; {INT_1_4}"),
    ({"g2048": {"cols": 5}}, f"config key g2048.cols = 5 is not allowed; {INT_1_4}"),
    ({"g2048": {"rows": 1, "cols": 1}}, "config keys g2048.rows, g2048.cols = 1, 1: a 1x1 board cannot hold the two start tiles; allowed: at least 2 cells"),
    ({"g2048": {"ages_per_job": 0}}, "config key g2048.ages_per_job = 0 is not allowed; allowed: type integer; >= 1"),
    ({"g2048": {"threads": 0}}, "config key g2048.threads = 0 is not allowed; allowed: type integer; >= 1"),
    ({"g2048": {"spawn": {"p2": 1.5}}}, "config key g2048.spawn.p2 = 1.5 is not allowed; allowed: type number; >= 0; <= 1"),
    ({"g2048": {"spawn": {"p4": -0.1}}}, "config key g2048.spawn.p4 = -0.1 is not allowed; allowed: type number; >= 0; <= 1"),
    ({"g2048": {"spawn": {"p2": math.nan}}}, "config key g2048.spawn.p2 is NaN or infinite; allowed: a finite number"),
    ({"g2048": {"spawn": {"p2": 0.8}}}, "config key g2048.spawn: p2 + p4 = 0.8 + 0.1 = 0.9; allowed: probabilities that sum to 1"),
    ({"g2048": {"spawn": {"p2": 0.5, "p4": 0.6}}}, "config key g2048.spawn: p2 + p4 = 0.5 + 0.6 = 1.1; allowed: probabilities that sum to 1"),
    ({"g2048": {"objective": "win"}}, "config key g2048.objective = 'win' is not allowed; allowed: one of 'score', 'reach_tile'"),
    ({"g2048": {"target_tile": 48}}, "config key g2048.target_tile = 48 is not allowed; allowed: a power of two from 4 to 32768"),
    ({"g2048": {"target_tile": 65536}}, "config key g2048.target_tile = 65536 is not allowed; allowed: type integer; >= 4; <= 32768"),
    ({"games": ["g2048", "chess"]}, "config key games.1 = 'chess' is not allowed; allowed: one of 'g2048', 'shutbox', 'ludo', 'truco'"),
    ({"games": ["g2048", "g2048"]}, "config key games = ['g2048', 'g2048'] is not allowed; allowed: type array; no repeated items"),
    ({"results": ""}, "config key results = '' is not allowed; allowed: type string; not empty"),
    # max_age odd or below 4
    ({"max_age": 7}, "config key max_age = 7 is not allowed; allowed: type integer or null; >= 4; a multiple of 2"),
    ({"max_age": 2}, "config key max_age = 2 is not allowed; allowed: type integer or null; >= 4; a multiple of 2"),
    ({"max_age": -4}, "config key max_age = -4 is not allowed; allowed: type integer or null; >= 4; a multiple of 2"),
    # unknown keys, at the top level and nested
    ({"bogus": 1}, "unknown config key 'bogus'; allowed keys: "),
    ({"g2048": {"colz": 3}}, "unknown config key 'g2048.colz'; allowed keys in g2048: ages_per_job, cols, mem_mb, objective, rows, spawn, target_tile, threads"),
    ({"g2048": {"spawn": {"p8": 0.0}}}, "unknown config key 'g2048.spawn.p8'; allowed keys in g2048.spawn: p2, p4"),
]


@pytest.mark.parametrize("override, message", BAD, ids=[str(o) for o, _ in BAD])
def test_bad_value_is_refused_with_one_clear_message(override, message):
    with pytest.raises(ConfigError) as info:
        validate(with_override(**override), SCHEMAS)
    text = str(info.value)
    assert text.startswith(message)
    assert "\n" not in text


def test_unknown_top_level_key_lists_every_allowed_key():
    with pytest.raises(ConfigError) as info:
        validate(with_override(bogus=1), SCHEMAS)
    allowed = sorted(load_schema(SCHEMAS)["properties"])
    assert str(info.value) == f"unknown config key 'bogus'; allowed keys: {', '.join(allowed)}"


def test_config_yaml_is_valid_and_defaults_are_filled():
    config = validate(BASE, SCHEMAS)
    g = config["g2048"]
    assert (g["rows"], g["cols"], g["spawn"], g["objective"]) == (3, 3, {"p2": 0.9, "p4": 0.1}, "score")
    assert g["threads"] >= 1 and g["mem_mb"] >= 1 and g["target_tile"] == 2048
    assert config["max_age"] is None and config["preset"] is None
    assert BASE["g2048"].get("threads") is None  # the input is not modified
    empty = validate({}, SCHEMAS)
    assert empty["results"] == "results" and empty["g2048"]["rows"] == 3


def test_every_key_has_a_description_and_a_default_and_no_section_is_open():
    def walk(schema, where):
        for key, sub in schema.get("properties", {}).items():
            name = f"{where}{key}"
            assert sub.get("description"), f"{name} has no description"
            assert "default" in sub, f"{name} has no default"
            if "properties" in sub:
                assert sub.get("additionalProperties") is False, f"{name} accepts unknown keys"
                walk(sub, f"{name}.")

    schema = load_schema(SCHEMAS)
    assert schema["additionalProperties"] is False
    walk(schema, "")


def test_strings_from_snakemake_config_are_read_as_numbers():
    """`--config g2048='{rows: 2, spawn: {p2: 0.8, p4: 0.2}}'` reaches the Snakefile with every nested
    scalar a string (YAML's base loader); `max_age=null` too."""
    config = with_override(g2048={"rows": "2", "cols": "4", "spawn": {"p2": "0.8", "p4": "0.2"}},
                           max_age="null")
    out = validate(config, SCHEMAS)
    assert out["g2048"]["rows"] == 2 and type(out["g2048"]["rows"]) is int
    assert out["g2048"]["spawn"] == {"p2": 0.8, "p4": 0.2}
    assert out["max_age"] is None
    assert validate(with_override(max_age="8"), SCHEMAS)["max_age"] == 8
    assert type(validate(with_override(g2048={"rows": 2.0}), SCHEMAS)["g2048"]["rows"]) is int
    assert validate(with_override(results="123"), SCHEMAS)["results"] == "123"  # a string key stays


def test_presets():
    merged = apply_preset(with_override(preset="2048_2x3"), PRESETS)
    out = validate(merged, SCHEMAS)
    assert (out["g2048"]["rows"], out["g2048"]["cols"]) == (2, 3)
    assert apply_preset(BASE, PRESETS) == BASE
    for path in sorted(PRESETS.glob("2048_*.yaml")):
        validate(apply_preset(with_override(preset=path.stem), PRESETS), SCHEMAS)
    names = ", ".join(sorted(p.stem for p in PRESETS.glob("*.yaml")))
    for bad in ("nope", "../config", "2048_2x3.yaml"):
        with pytest.raises(ConfigError) as info:
            apply_preset(with_override(preset=bad), PRESETS)
        assert str(info.value) == f"unknown preset {bad!r}; allowed: {names}"


# ---- through the real command line -------------------------------------------------------------

@pytest.fixture(scope="module")
def workflow_with_results(tmp_path_factory):
    """A copy of the workflow with a results tree already there (stand-in files: the point is
    that a refused run does not create, rewrite or touch anything under results/)."""
    wf = tmp_path_factory.mktemp("config_wf")
    for name in ("Snakefile", "config.yaml", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, wf / name)
    run = wf / "results" / "2048_2x3"
    (run / "afterstates" / "age_000004.zarr").mkdir(parents=True)
    (run / "afterstates" / "age_000004.zarr" / "zarr.json").write_text('{"attributes": {}}\n')
    (run / "solution.json").write_text('{"expected_score": 1.0}\n')
    (run / "summary.csv").write_text("age,states,afterstates,terminal_states,bytes\n")
    (wf / "results" / "README.md").write_text("results\n")
    (wf / "bad.yaml").write_text("g2048: {spawn: {p2: 0.8}}\n")
    return wf


def results_state(root):
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


CLI_BAD = [
    (["--config", "preset=nope"], "unknown preset 'nope'; allowed: 2048_2x2, 2048_2x3, "),
    (["--config", "g2048={rows: 5}"], f"config key g2048.rows = 5 is not allowed; {INT_1_4}"),
    (["--config", "max_age=7"],
     "config key max_age = 7 is not allowed; allowed: type integer or null; >= 4; a multiple of 2"),
    (["--configfile", "bad.yaml"],
     "config key g2048.spawn: p2 + p4 = 0.8 + 0.1 = 0.9; allowed: probabilities that sum to 1"),
]


@pytest.mark.slow
@pytest.mark.parametrize("args, message", CLI_BAD, ids=[" ".join(a) for a, _ in CLI_BAD])
def test_snakemake_refuses_bad_config_before_touching_results(workflow_with_results, args, message):
    wf = workflow_with_results
    before = results_state(wf / "results")
    proc = subprocess.run([str(SNAKEMAKE), "--cores", "2", *args], cwd=wf, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert lines[-1].startswith(f"strongsolve: config error: {message}"), proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert results_state(wf / "results") == before


@pytest.mark.slow
def test_snakemake_nested_config_override_is_read_as_numbers(workflow_with_results):
    """Without the conversion `--config g2048={rows: 2, cols: 2}` is refused ('2' is a string)."""
    proc = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--dry-run", "--config",
                           "g2048={rows: 2, cols: 2, ages_per_job: 8}"],
                          cwd=workflow_with_results, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NUMBA_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout + proc.stderr
    assert "results/2048_2x2/afterstates/block_000004-000018.json" in out
    assert "results/2048_2x2/afterstates/block_000052-000060.json" in out
