"""Write one API page per module of the strongsolve package (run by mkdocs-gen-files at build time).

The pages are made from the package as it stands, so a module that moves or is renamed moves its page
with it: nothing here names a module. ``results/README.md`` (the reference of the result files) is
published as ``formats.md`` so that the design pages can link to it inside the site.
"""

from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"

nav = mkdocs_gen_files.Nav()
for path in sorted((SRC / "strongsolve").rglob("*.py")):
    module = path.relative_to(SRC).with_suffix("")
    parts = tuple(module.parts)
    if parts[-1] == "__main__" or any(p.startswith("_") and p != "__init__" for p in parts):
        continue
    if parts[-1] == "__init__":
        parts = parts[:-1]
        page = Path("reference", *parts, "index.md")
    else:
        page = Path("reference", *parts).with_suffix(".md")
    nav[parts] = page.relative_to("reference").as_posix()
    with mkdocs_gen_files.open(page, "w") as out:
        out.write(f"# `{'.'.join(parts)}`\n\n::: {'.'.join(parts)}\n")
    mkdocs_gen_files.set_edit_path(page, path.relative_to(ROOT))

with mkdocs_gen_files.open("reference/SUMMARY.md", "w") as out:
    out.writelines(nav.build_literate_nav())

with mkdocs_gen_files.open("formats.md", "w") as out:
    out.write((ROOT / "results" / "README.md").read_text())
