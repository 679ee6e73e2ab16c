#!/bin/sh
# Run by `snakemake --use-conda` once, inside the new environment, from the workflow's directory (the
# clone): install strongsolve from it, editable, so that the jobs run this clone's code. Its
# dependencies come from strongsolve.yaml.
set -e
python -m pip install --quiet --no-deps --editable .
