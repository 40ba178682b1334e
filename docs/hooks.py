"""mkdocs hooks: the command-line reference made at build time, and every guide in the navigation.

A page holding ``<!-- passatk-help -->`` gets, in its place, ``passatk --help`` and then
``passatk COMMAND --help`` for every command, as the command prints them at 100 columns.

A page in ``docs/guide/`` that ``mkdocs.yml``'s nav does not list yet is added at the end of
"User guides", under its first heading, so that a guide written beside others' work is never
left out of the site (or fails the strict build as an omitted page).
"""

from __future__ import annotations

from pathlib import Path

MARKER = "<!-- passatk-help -->"


def _help(args: list[str]) -> str:
    from typer.testing import CliRunner

    from passatk.cli import app

    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "100", "TERM": "dumb"}).invoke(
        app, [*args, "--help"], prog_name="passatk"
    )
    if result.exit_code != 0:
        raise RuntimeError(f"passatk {' '.join(args)} --help exited {result.exit_code}: {result.output}")
    return "\n".join(line.rstrip() for line in result.stdout.strip("\n").splitlines())


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ARG001 -- mkdocs' hook signature
    if MARKER not in markdown:
        return markdown
    import typer.main

    from passatk.cli import app

    parts = ["```text\n" + _help([]) + "\n```\n"]
    for name in sorted(typer.main.get_command(app).commands):
        parts.append(f"## passatk {name}\n\n```text\n{_help([name])}\n```\n")
    return markdown.replace(MARKER, "\n".join(parts))


def _listed(nav) -> set[str]:
    out: set[str] = set()
    for item in nav or []:
        if isinstance(item, str):
            out.add(item)
        elif isinstance(item, dict):
            for value in item.values():
                out |= _listed(value) if isinstance(value, list) else {value}
    return out


def on_config(config):
    guides = next((item["User guides"] for item in config["nav"] or [] if isinstance(item, dict) and "User guides" in item), None)
    if guides is None:
        return config
    listed = _listed(config["nav"])
    for page in sorted((Path(config["docs_dir"]) / "guide").glob("*.md")):
        path = f"guide/{page.name}"
        if path not in listed:
            first = next(
                (line[2:].strip() for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("# ")), page.stem
            )
            guides.append({first: path})
    return config
