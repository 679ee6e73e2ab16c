"""Runs of the real workflow in a temporary copy of it (the tests of the workflow, its repair
hints and its result files use these)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
CASES = json.loads((REPO / "tests" / "cases.json").read_text())  # public values, with sources


def workflow_copy(tmp_path):
    for name in ("Snakefile", "config.yaml", "workflow", "profiles"):
        src = REPO / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    return tmp_path


def snakemake(cwd, *args):
    return subprocess.run([str(SNAKEMAKE), "--cores", "2", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600)
