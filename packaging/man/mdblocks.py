"""The Markdown our docs use, read into a flat list of blocks.

Only what docs/*.md and the README need: ATX headings, paragraphs, fenced code,
pipe tables and "- " lists (with indented continuation lines). Anything else is
kept as paragraph text, so a new construct shows up in the man page as plain text
instead of vanishing.
"""

from dataclasses import dataclass, field


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Paragraph:
    text: str


@dataclass
class Code:
    lines: list


@dataclass
class Table:
    header: list
    rows: list


@dataclass
class BulletList:
    items: list = field(default_factory=list)


def split_row(line):
    """Cells of a pipe-table row; a `|` inside backticks does not split."""
    cells, cell, in_code = [], "", False
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    for char in body:
        if char == "`":
            in_code = not in_code
        if char == "|" and not in_code:
            cells.append(cell.strip())
            cell = ""
        else:
            cell += char
    cells.append(cell.strip())
    return cells


def is_table_rule(line):
    return line.strip().startswith("|") and set(line.strip()) <= set("|-: ")


def parse(text):
    """The blocks of a Markdown document, in order."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
        elif stripped.startswith("```"):
            i += 1
            body = []
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise ValueError("unterminated code fence")
            blocks.append(Code(body))
            i += 1
        elif stripped.startswith("#"):
            marks = len(stripped) - len(stripped.lstrip("#"))
            blocks.append(Heading(marks, stripped[marks:].strip()))
            i += 1
        elif stripped.startswith("|") and i + 1 < len(lines) and is_table_rule(lines[i + 1]):
            header = split_row(line)
            i += 2
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(split_row(lines[i]))
                i += 1
            blocks.append(Table(header, rows))
        elif stripped.startswith("- "):
            items = BulletList()
            while i < len(lines) and (lines[i].strip().startswith("- ") or lines[i].startswith("  ")):
                if lines[i].strip().startswith("- "):
                    items.items.append(lines[i].strip()[2:])
                else:
                    items.items[-1] += " " + lines[i].strip()
                i += 1
            blocks.append(items)
        else:
            body = []
            while i < len(lines) and lines[i].strip() and not starts_block(lines, i):
                body.append(lines[i].strip())
                i += 1
            blocks.append(Paragraph(" ".join(body)))
    return blocks


def starts_block(lines, i):
    stripped = lines[i].strip()
    if stripped.startswith(("```", "#", "- ")):
        return True
    return stripped.startswith("|") and i + 1 < len(lines) and is_table_rule(lines[i + 1])


@dataclass
class Section:
    """A `##` section: its blocks before the first `###`, then each `###` by title."""
    title: str
    lead: list
    subsections: dict


def sections(blocks):
    """(title of the `#` heading, blocks before the first `##`, {## title: Section})."""
    title, intro, found = None, [], {}
    current = None
    sub = None
    for block in blocks:
        if isinstance(block, Heading) and block.level == 1:
            title = block.text
        elif isinstance(block, Heading) and block.level == 2:
            current = Section(block.text, [], {})
            found[block.text] = current
            sub = None
        elif isinstance(block, Heading) and block.level == 3 and current is not None:
            sub = current.subsections.setdefault(block.text, [])
        elif current is None:
            intro.append(block)
        elif sub is not None:
            sub.append(block)
        else:
            current.lead.append(block)
    return title, intro, found
