"""Blocks from mdblocks rendered as man(7) roff.

Tables become tagged paragraphs (.TP): the first column is the tag, the other
columns are labelled by their header ("Default: `info`."), except a last column
that describes the entry ("meaning"), which is the text. A key table reads like a classic man page that way, and no tbl(1) layout
can break at 80 columns.
"""

import re

from mdblocks import BulletList, Code, Heading, Paragraph, Table

# Typography used in our docs, as groff glyph names (plain ASCII where groff has none).
GLYPHS = {
    "\u2014": r"\(em",
    "\u2013": r"\(en",
    "\u2026": "...",
    "\u2192": r"\(->",
    "\u00d7": r"\(mu",
    "\u2019": "'",
    "\u201c": r"\(lq",
    "\u201d": r"\(rq",
}


def escape(text):
    """Literal text for roff: backslashes, minus signs and non-ASCII characters."""
    out = []
    for char in text:
        if char == "\\":
            out.append(r"\e")
        elif char == "-":
            out.append(r"\-")
        elif char in GLYPHS:
            out.append(GLYPHS[char])
        elif ord(char) > 127:
            out.append(r"\[u%04X]" % ord(char))
        else:
            out.append(char)
    return "".join(out)


CODE_SPAN = re.compile(r"`([^`]+)`")
LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")
STRONG = re.compile(r"\*\*(.+?)\*\*")
EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")


def inline(text):
    """Markdown inline markup as font changes: `code` and **strong** bold, *emphasis* italic."""
    pieces = []
    position = 0
    for match in CODE_SPAN.finditer(text):
        pieces.append(prose(text[position:match.start()]))
        pieces.append(r"\fB" + escape(match.group(1)) + r"\fR")
        position = match.end()
    pieces.append(prose(text[position:]))
    return "".join(pieces)


def prose(text):
    text = LINK.sub(r"\1", text)
    text = escape(text)
    text = STRONG.sub(r"\\fB\1\\fR", text)
    return EMPHASIS.sub(r"\\fI\1\\fR", text)


def line(text):
    """One input line; a leading `.` or `'` would be read as a request."""
    return r"\&" + text if text[:1] in (".", "'") else text


def render(blocks, subheading=".SS"):
    """roff lines for `blocks`; `###` headings become `subheading` requests."""
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append("%s %s" % (subheading, inline(block.text)))
        elif isinstance(block, Paragraph):
            out += [".PP", line(inline(block.text))]
        elif isinstance(block, Code):
            out += [".PP", ".RS 4", ".nf"]
            out += [line(escape(code)) for code in block.lines]
            out += [".fi", ".RE"]
        elif isinstance(block, BulletList):
            for item in block.items:
                out += [r".IP \(bu 2", line(inline(item))]
        elif isinstance(block, Table):
            out += render_table(block)
        else:
            raise TypeError("cannot render %r" % (block,))
    return out


# Last-column headers that need no label: the column is the entry's description.
DESCRIPTIONS = {"meaning", "value", "effect"}


def render_table(table):
    out = []
    labelled = table.header[-1].lower() not in DESCRIPTIONS
    labels = table.header[1:] if labelled else table.header[1:-1]
    for row in table.rows:
        if len(row) != len(table.header):
            raise ValueError("table row %r has %d cells, its header %d" % (row, len(row), len(table.header)))
        out += [".TP", line(inline(row[0]))]
        for label, cell in zip(labels, row[1:]):
            stop = "" if cell.endswith(".") else "."
            out += [line(inline("%s: %s%s" % (label.capitalize(), cell, stop))), ".br"]
        if not labelled and len(row) > 1:
            out.append(line(inline(row[-1])))
    return out


def page(name, section, date, source, manual, body):
    """A whole page: the .TH header, then `body` (already roff lines)."""
    header = '.TH "%s" "%s" "%s" "%s" "%s"' % (escape(name.upper()), section, date, escape(source), manual)
    return "\n".join([header] + body) + "\n"
