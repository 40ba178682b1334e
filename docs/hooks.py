"""mkdocs hooks: the command-line reference (docs/cli.md) is the `passatk` command's own help, made at build time.

A page holding ``<!-- passatk-help -->`` gets, in its place, ``passatk --help`` and then
``passatk COMMAND --help`` for every command, as the command prints them at 100 columns.
"""

from __future__ import annotations

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
