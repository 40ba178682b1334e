"""A griffe extension for the API reference: the docstrings' reStructuredText roles read as Markdown.

passatk's docstrings are numpydoc, written for Sphinx (``:func:`~passatk.x.f```, literal
blocks introduced by ``::``).  mkdocstrings renders Markdown, where those would show as
raw text; here each role becomes inline code of the name it shows (``~a.b.f`` shows
``f``), a paragraph's closing ``::`` a single colon, the indented block after it
staying a code block, and a ``.. math::`` directive a line that introduces its formula
(shown as LaTeX source: the site loads no script from elsewhere).
"""

from __future__ import annotations

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const|ref|term)(?::|\s)`(~?)([^`<]*?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"(?<=\S)::(?=\s*\n)")
_MATH = re.compile(r"^([ \t]*)\.\. math::[ \t]*$", re.M)


def _role(match: re.Match) -> str:
    tilde, target = match.group(1), match.group(2).strip()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def markdown(text: str) -> str:
    """A docstring's Sphinx roles as inline code, and its ``::`` as ``:``.

    >>> markdown("Like :func:`~passatk.pass_at_k` and :class:`passatk.Results`::\\n\\n    x = 1\\n")
    'Like `pass_at_k` and `passatk.Results`:\\n\\n    x = 1\\n'
    """
    return _LITERAL.sub(":", _ROLE.sub(_role, _MATH.sub(r"\1*The formula, in LaTeX:*", text)))


class RstRoles(griffe.Extension):
    """Rewrite each docstring as it is loaded (see the module's docstring)."""

    def on_object(self, *, obj, **kwargs) -> None:  # noqa: ARG002 -- griffe's hook signature
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
