"""Plain-text tables for the terminal, shared by the commands that print one (``zoo sweep``,
``zoo report``)."""

from __future__ import annotations


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    """Left-aligned columns separated by two spaces, with a dashed rule under the header."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows)]
    lines = [headers, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(f"{c:<{w}}" for c, w in zip(line, widths)).rstrip()
                     for line in lines)
