#!/usr/bin/env python3
"""Writes the man pages uploader(1) and uploader.conf(5) from the project's docs.

docs/configuration.md is the one reference; this script only cuts it into the two
pages (plus the S3 keys from docs/s3.md and the README's first paragraph). Every `##`
section of those docs must land in a page or be named in SKIPPED: a section added to
the docs and forgotten here fails the build instead of silently missing from the man
page.

    python3 packaging/man/mkman.py --version 0.1.0 --date 2026-11-30 --out DIR [REPO]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mdblocks  # noqa: E402
import roff  # noqa: E402
from mdblocks import Code, Paragraph  # noqa: E402

# Sections left out of the man pages on purpose (design advice, not reference).
SKIPPED = {("docs/s3.md", "At fleet scale")}


class Docs:
    """The Markdown sources, and a record of which parts went into a page."""

    def __init__(self, repo):
        self.repo = repo
        self.parsed = {}
        self.used = set()

    def load(self, path):
        if path not in self.parsed:
            with open(os.path.join(self.repo, path), encoding="utf-8") as handle:
                self.parsed[path] = mdblocks.sections(mdblocks.parse(handle.read()))
        return self.parsed[path]

    def section(self, path, title):
        _, _, found = self.load(path)
        if title not in found:
            raise SystemExit("mkman: %s has no section \"## %s\" (renamed? update PAGES in %s)"
                             % (path, title, os.path.basename(__file__)))
        return found[title]

    def intro(self, path):
        """The blocks before the first `##`."""
        return self.load(path)[1]

    def whole(self, path, title):
        """A `##` section with its `###` subsections."""
        section = self.section(path, title)
        self.used.add((path, title, None))
        blocks = list(section.lead)
        for subtitle, sub in section.subsections.items():
            self.used.add((path, title, subtitle))
            blocks += [mdblocks.Heading(3, subtitle)] + sub
        return blocks

    def lead(self, path, title, without_first_code=False):
        """A `##` section's blocks before its first `###`."""
        self.used.add((path, title, None))
        blocks = list(self.section(path, title).lead)
        if without_first_code:
            blocks.remove(self.first_code(path, title))
        return blocks

    def sub(self, path, title, subtitle):
        section = self.section(path, title)
        if subtitle not in section.subsections:
            raise SystemExit("mkman: %s has no \"### %s\" under \"## %s\"" % (path, subtitle, title))
        self.used.add((path, title, subtitle))
        return section.subsections[subtitle]

    def first_code(self, path, title):
        for block in self.section(path, title).lead:
            if isinstance(block, Code):
                return block
        raise SystemExit("mkman: \"## %s\" in %s has no code block" % (title, path))

    def check_everything_used(self, paths):
        """Every `##` and `###` of `paths` is in a page or in SKIPPED."""
        missing = []
        for path in paths:
            for title, section in self.load(path)[2].items():
                if (path, title) in SKIPPED:
                    continue
                for subtitle in [None] + list(section.subsections):
                    if (path, title, subtitle) not in self.used:
                        missing.append("%s: %s" % (path, title + (" / " + subtitle if subtitle else "")))
        if missing:
            raise SystemExit("mkman: in no man page (add to PAGES or SKIPPED): " + "; ".join(missing))


CONFIG = "docs/configuration.md"
S3 = "docs/s3.md"
README = "README.md"


def name_section(text):
    return [".SH NAME", text]


def first_paragraph(blocks):
    for block in blocks:
        if isinstance(block, Paragraph):
            return [block]
    raise SystemExit("mkman: no paragraph found")


def uploader_1(docs):
    return name_section(r"uploader \- turn a directory into a durable upload queue") + [
        ".SH SYNOPSIS"] + roff.render([docs.first_code(CONFIG, "Command line")]) + [
        ".SH DESCRIPTION"] + roff.render(first_paragraph(docs.intro(README))) + [
        ".PP", r"Its configuration file is described in \fBuploader.conf\fR(5).",
        ".SH COMMANDS"] + roff.render(docs.lead(CONFIG, "Command line", without_first_code=True)) + [
        ".SH EXIT STATUS"] + roff.render(docs.sub(CONFIG, "Command line", "Exit codes")) + [
        ".SH SIGNALS"] + roff.render(docs.whole(CONFIG, "Signals")) + [
        ".SH SYSTEMD"] + roff.render(docs.whole(CONFIG, "systemd")) + [
        ".SH FILES"] + roff.render(docs.whole(CONFIG, "On disk")) + [
        ".SH LOGS"] + roff.render(docs.whole(CONFIG, "Logs")) + [
        ".SH METRICS"] + roff.render(docs.whole(CONFIG, "Metrics")) + [
        ".SH SEE ALSO", r"\fBuploader.conf\fR(5), \fBsystemctl\fR(1), \fBjournalctl\fR(1)"]


def uploader_conf_5(docs):
    return name_section(r"uploader.conf \- configuration of the uploader daemon") + [
        ".SH SYNOPSIS"] + roff.render(docs.whole(CONFIG, "Synopsis")) + [
        ".SH DESCRIPTION"] + roff.render(docs.whole(CONFIG, "File format")) + [
        ".SH GLOBAL SETTINGS: [uploader]"] + roff.render(docs.whole(CONFIG, "[uploader] — global settings")) + [
        ".SH PROFILES: [outbox NAME]"] + roff.render(docs.whole(CONFIG, "[outbox NAME] — one profile")) + [
        ".SH S3\\-COMPATIBLE DESTINATIONS"] + roff.render(
            docs.intro(S3) + [mdblocks.Heading(3, "What goes over the wire")] + docs.whole(S3, "What goes over the wire")) + [
        ".SH SEE ALSO", r"\fBuploader\fR(1)"]


# file name, title, section, manual, body
PAGES = [
    ("uploader.1", "uploader", "1", "User Commands", uploader_1),
    ("uploader.conf.5", "uploader.conf", "5", "File Formats", uploader_conf_5),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True)
    parser.add_argument("--date", required=True, help="YYYY-MM-DD shown in the page footer")
    parser.add_argument("--out", required=True, help="directory to write the pages into")
    parser.add_argument("repo", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    args = parser.parse_args()

    docs = Docs(args.repo)
    pages = [(file, roff.page(title, section, args.date, "uploader " + args.version, manual, body(docs)))
             for file, title, section, manual, body in PAGES]
    docs.check_everything_used([CONFIG, S3])
    os.makedirs(args.out, exist_ok=True)
    for file, text in pages:
        with open(os.path.join(args.out, file), "w", encoding="utf-8") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
