"""The guide cannot rot: README.md's commands work as printed, and no text speaks of how it was made.

A fenced ``sh`` block of README.md preceded by the line ``<!-- runnable -->`` is run, block after
block in the order of the file, in one temporary copy of the workflow (Snakefile, config.yaml,
workflow/, profiles/) with this interpreter's bin folder (the project's .venv/bin) first on the PATH.
The fenced ``text`` block that follows it is its output: every line of it must be a line of what the
commands print (stdout and stderr), and the commands must exit 0. The other ``sh`` blocks are checked
without their cost: each ``strongsolve`` command's subcommand must exist (``--help``) and each
``snakemake`` command must pass a dry run (``-n``: its configuration is validated against the schema
and its jobs are planned).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARKER = "<!-- runnable -->"
BIN = Path(sys.executable).parent
# words about the project's own development, which the product must not speak of
DEVELOPMENT_WORDS = re.compile(r"session [0-9]|issue [0-9]", re.IGNORECASE)
TEXT_SUFFIXES = {".md", ".py", ".yml", ".yaml", ".smk", ".txt", ".html", ".js", ".css", ".toml", ".json"}


def fenced_blocks(text):
    """The fenced blocks of a Markdown text, in order.

    Parameters
    ----------
    text : str
        Markdown source.

    Returns
    -------
    list of (str, str, bool)
        (info string such as ``"sh"``, the block's text, whether the line before the fence is
        ``<!-- runnable -->``).

    Raises
    ------
    ValueError
        If a fence is never closed (the rest of the file would be read as code).
    """
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            info = lines[i][3:].strip()
            marked = i > 0 and lines[i - 1].strip() == MARKER
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
            if end is None:
                raise ValueError(f"README.md line {i + 1}: fence ``` never closed")
            blocks.append((info, "\n".join(lines[i + 1:end]), marked))
            i = end + 1
        else:
            i += 1
    return blocks


def runnable_blocks(text):
    """The runnable ``sh`` blocks of a Markdown text and the output lines each must print.

    Returns
    -------
    list of (str, list of str)
        (the commands, the stripped non-empty lines of the ``text`` block that follows them).

    Raises
    ------
    ValueError
        If a marked block is not ``sh`` or is not followed by a ``text`` block.
    """
    blocks = fenced_blocks(text)
    found = []
    for k, (info, body, marked) in enumerate(blocks):
        if not marked:
            continue
        if info != "sh":
            raise ValueError(f"a block marked {MARKER} is ```{info}, not ```sh:\n{body}")
        if k + 1 >= len(blocks) or blocks[k + 1][0] != "text":
            raise ValueError(f"the runnable block\n{body}\nis not followed by a ```text block of its output")
        expected = [line.strip() for line in blocks[k + 1][1].splitlines() if line.strip()]
        found.append((body, expected))
    return found


def plain_commands(text):
    """The command lines of the ``sh`` blocks not marked runnable, without their trailing comments,
    and the ``$ `` lines of the ``console`` blocks (a command shown with its output)."""
    commands = []
    for info, body, marked in fenced_blocks(text):
        if info == "console":
            commands += [line[2:].strip() for line in body.splitlines() if line.startswith("$ ")]
        if info != "sh" or marked:
            continue
        for line in body.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def test_fenced_blocks_parse_marked_blocks_and_outputs():
    text = ("intro\n" + MARKER + "\n```sh\necho a\n```\n\n```text\na\n```\n"
            "```sh\nstrongsolve lab   # comment\n```\n")
    assert runnable_blocks(text) == [("echo a", ["a"])]
    assert plain_commands(text) == ["strongsolve lab"]
    assert plain_commands("```console\n$ strongsolve inspect RUN\nRUN: 2x3\n```\n") == ["strongsolve inspect RUN"]
    with pytest.raises(ValueError, match="not followed by a ```text block"):
        runnable_blocks(MARKER + "\n```sh\necho a\n```\n")
    with pytest.raises(ValueError, match="never closed"):
        fenced_blocks("```sh\necho a\n")


def development_word_hits(folder_or_file):
    """Every line of the text files under a path that speaks of sessions or issues by number."""
    path = Path(folder_or_file)
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*")
                                                  if p.is_file() and p.suffix in TEXT_SUFFIXES
                                                  and "__pycache__" not in p.parts)
    hits = []
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if DEVELOPMENT_WORDS.search(line):
                hits.append(f"{f.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    return hits


def test_development_words_are_found():
    # the words are put together here so that this file does not hold them itself
    lines = ["fine", "as measured in " + "Sess" + "ion 4", "iss" + "ue 12 asks", "iss" + "ues 3"]
    assert [bool(DEVELOPMENT_WORDS.search(line)) for line in lines] == [False, True, True, False]


@pytest.mark.parametrize("where", ["README.md", "docs", "src", "bench", "profiles"])
def test_no_words_about_how_the_project_was_made(where):
    hits = development_word_hits(ROOT / where)
    assert not hits, (f"{len(hits)} line(s) in {where} speak of sessions or issues by number "
                      "(`grep -rniE \"session [0-9]|issue [0-9]\"`):\n" + "\n".join(hits[:40]))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A temporary copy of the workflow, where the README's commands run."""
    work = tmp_path_factory.mktemp("guide")
    for name in ("Snakefile", "config.yaml"):
        shutil.copy2(ROOT / name, work / name)
    for name in ("workflow", "profiles"):
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    return work


def run(commands, cwd, timeout):
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("STRONGSOLVE_RERUN", None)
    return subprocess.run(["bash", "-euo", "pipefail", "-c", commands], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)


RUNNABLE = runnable_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_runnable_commands_for_every_game():
    text = "\n".join(body for body, _ in RUNNABLE)
    for command in ("strongsolve 2048 query", "strongsolve 2048 play", "strongsolve shutbox",
                    "strongsolve ludo race", "truco"):
        assert command in text, f"no runnable README block runs {command!r}"


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(RUNNABLE)))
def test_readme_runnable_block(workdir, index):
    # the blocks build on each other (a solve, then its query): run every earlier one first, once
    for k in range(index + 1):
        marker = workdir / f".block_{k}_done"
        if marker.exists():
            continue
        commands, expected = RUNNABLE[k]
        result = run(commands, workdir, timeout=300)
        assert result.returncode == 0, (f"README block exited {result.returncode}:\n{commands}\n"
                                        f"--- output (last 3000 characters)\n{result.stdout[-3000:]}")
        printed = {line.strip() for line in result.stdout.splitlines()}
        missing = [line for line in expected if line not in printed]
        assert not missing, (f"README block\n{commands}\ndid not print the lines shown under it:\n"
                             + "\n".join(missing) + f"\n--- output (last 3000 characters)\n"
                             f"{result.stdout[-3000:]}")
        marker.touch()


PLAIN = plain_commands(README.read_text(encoding="utf-8"))
# the design pages' commands are checked the same way (their outputs come from runs of other sizes)
DOCS_PLAIN = [c for page in sorted((ROOT / "docs").glob("*.md"))
              for c in plain_commands(page.read_text(encoding="utf-8"))]


def strongsolve_subcommand(line):
    """``strongsolve truco policy --score ...`` -> ``['truco', 'policy']``: the words before the
    first option or argument (a path, a quoted board, a file)."""
    words = shlex.split(line)[1:]
    sub = []
    for w in words:
        if w.startswith("-") or "/" in w or "." in w or " " in w or w.isupper():
            break
        sub.append(w)
    return sub


@pytest.mark.parametrize("line", sorted({c for c in PLAIN + DOCS_PLAIN if c.startswith("strongsolve ")}))
def test_readme_strongsolve_command_exists(line):
    sub = strongsolve_subcommand(line)
    result = run(shlex.join(["strongsolve", *sub, "--help"]), ROOT, timeout=60)
    assert result.returncode == 0, f"`strongsolve {' '.join(sub)}` (README: {line}) does not exist:\n{result.stdout}"


@pytest.mark.slow
@pytest.mark.parametrize("line", sorted({c for c in PLAIN + DOCS_PLAIN if c.startswith("snakemake ")}))
def test_readme_snakemake_command_plans(workdir, line):
    result = run(f"{line} -n --quiet", workdir, timeout=120)
    assert result.returncode == 0, f"README: {line}\nfails a dry run:\n{result.stdout[-3000:]}"
