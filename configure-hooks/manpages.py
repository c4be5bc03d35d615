#!/usr/bin/env python3
"""Manual pages of petsc-csrk's public names, from their PETSc-style comment blocks.

Reads the blocks of include/petsccsrk.h and src/mat/impls/csrk/ (and below), as PETSc's doctext does:
  /*@ ... @*/, /*@C ... @*/   functions        /*E ... E*/   enums
  /*MC ... M*/                 types, macros    /*S ... S*/   structs
and writes
  --md DIR    one markdown page per name (NAME.md) and an index (index.md), laid out as PETSc's manual pages:
              the name and its summary, Synopsis (with the collectivity), Input and Output Parameters, Options
              Database Keys, Notes, See Also (names become links), Level, Location;
  --man DIR   the same as troff pages, DIR/man3/NAME.3, read with `man -M DIR NAME`.
Python 3, standard library only. The output depends on the sources alone (no date), so that `make manpages-check`
can compare it with docs/manualpages. Warnings (stderr) name public functions, types, enums and structs of the header
that have no page, See Also names without a page, and -mat_csrk_* options that the types' pages do not list.

Usage: manpages.py [--root DIR] [--md DIR] [--man DIR] [--strict]
"""

import argparse
import os
import re
import sys

HEADER = "include/petsccsrk.h"
SOURCES = "src/mat/impls/csrk"
PETSC_MANUAL = "https://petsc.org/release/manualpages"

BLOCK = re.compile(r"/\*(@C?|MC|E|S|J)[ \t]*\n(.*?)\n[ \t]*(@|M|E|S|J)\*/", re.S)
KINDS = {"@": "function", "@C": "function", "MC": "type", "E": "enum", "S": "struct", "J": "type"}
SECTIONS = [  # (pattern of the header word(s), name of the section in the page)
    (r"Input Parameters?", "Input Parameters"),
    (r"Output Parameters?", "Output Parameters"),
    (r"Input/Output Parameters?", "Input/Output Parameters"),
    (r"Options Database Keys?", "Options Database Keys"),
    (r"Notes?", "Notes"),
    (r"Developer Notes?", "Developer Notes"),
    (r"Fortran Notes?", "Fortran Notes"),
    (r"Examples?", "Example"),
    (r"Level", "Level"),
]
SECTION_RE = re.compile(r"^(%s):\s*(.*)$" % "|".join(p for p, _ in SECTIONS))
COLLECTIVE_RE = re.compile(r"^(Not Collective|Logically Collective|Collective|Neighbor-wise Collective)\b.*$")
ITEM_RE = re.compile(r"^([+.-])\s+(.*)$")
NAME_RE = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(\(\))?`")
ORDER = ["Input Parameters", "Input/Output Parameters", "Output Parameters", "Options Database Keys", "Notes",
         "Example", "Developer Notes", "Fortran Notes"]


def dedent(lines):
    """The block's indentation off, as its prose lines have it (item lines '+ ', '. ', '- ' and '$' lines start at
    column 0 in PETSc's style)"""
    prose = [l for l in lines if l.strip() and not re.match(r"^\s*([+.-]\s|\$|\.seealso)", l)]
    ind = min((len(l) - len(l.lstrip(" ")) for l in prose), default=0)
    return [l[ind:].rstrip() if l[:ind].strip() == "" else l.lstrip().rstrip() for l in lines]


def synopsis_of(kind, name, after):
    """The declaration after a block: a function's prototype, an enum's or struct's typedef"""
    if kind == "function":
        m = re.match(r"\s*((?:PETSC_EXTERN\s+)?PetscErrorCode\s+%s\s*\([^)]*\))" % re.escape(name), after)
        return [" ".join(m.group(1).split())] if m else []
    if kind in ("enum", "struct"):
        m = re.match(r"\s*(typedef\s+(?:enum|struct)\s*\{.*?\}\s*%s\s*;)" % re.escape(name), after, re.S)
        if m:
            text = re.sub(r"[ \t]+\n", "\n", m.group(1))
            return text.split("\n")
    return []


class Page:
    def __init__(self, kind, name, summary, location):
        self.kind, self.name, self.summary, self.location = kind, name, summary, location
        self.body = []         # paragraphs and lists before the first section
        self.collective = ""
        self.sections = {}     # name -> list of parts: ("p", text) | ("items", [(key, text)]) | ("code", [lines])
        self.level = ""
        self.seealso = []
        self.synopsis = []


def parse_items(lines):
    """Lines of items '+ key - text' ('.' and '-' too), continuation lines folded into the previous item"""
    items = []
    for l in lines:
        m = ITEM_RE.match(l.strip())
        if m:
            key, _, text = m.group(2).partition(" - ")
            items.append([key.strip(), text.strip()])
        elif items and l.strip():
            items[-1][1] = (items[-1][1] + " " + l.strip()).strip()
    return [tuple(i) for i in items]


def parse_dollar(lines):
    """'$' lines (verbatim in doctext): a list 'NAME - text' when they are one, else a code block"""
    raw = [l.strip()[1:] for l in lines]
    items = []
    for r in raw:
        m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s+-\s+(.*)$", r)
        if m:
            items.append([m.group(1), m.group(2).strip()])
        elif items and r.strip():
            items[-1][1] += " " + r.strip()
        elif r.strip():
            return ("code", [x.rstrip() for x in dedent(raw)])
    return ("items", [tuple(i) for i in items])


def parse_text(lines):
    """Free text into paragraphs, item lists and verbatim runs"""
    parts, para, i = [], [], 0

    def flush():
        if para:
            parts.append(("p", " ".join(x.strip() for x in para)))
            para.clear()

    while i < len(lines):
        l = lines[i]
        s = l.strip()
        if not s:
            flush()
            i += 1
        elif s.startswith("$"):
            flush()
            j = i
            while j < len(lines) and lines[j].strip().startswith("$"):
                j += 1
            parts.append(parse_dollar(lines[i:j]))
            i = j
        elif ITEM_RE.match(s) and " - " in s:
            flush()
            j = i + 1
            while j < len(lines) and lines[j].strip() and not lines[j].strip().startswith("$") and \
                    (ITEM_RE.match(lines[j].strip()) or lines[j].startswith(" ")):
                j += 1
            parts.append(("items", parse_items(lines[i:j])))
            i = j
        else:
            para.append(l)
            i += 1
    flush()
    return parts


def parse_block(kind, text, after, location):
    lines = dedent(text.split("\n"))
    while lines and not lines[0].strip():
        lines.pop(0)
    title = []
    while lines and lines[0].strip():
        title.append(lines.pop(0).strip())
    title = " ".join(title)
    name, _, summary = title.partition(" - ")
    page = Page(kind, name.strip(), summary.strip(), location)
    page.synopsis = synopsis_of(kind, page.name, after)
    current, chunk = None, []

    def close():
        if current is None:
            page.body.extend(parse_text(chunk))
        elif current == "Level":
            page.level = " ".join(x.strip() for x in chunk if x.strip())
        else:
            page.sections.setdefault(current, []).extend(parse_text(chunk))

    i = 0
    while i < len(lines):
        l = lines[i]
        s = l.strip()
        if s.startswith(".seealso:"):
            rest = " ".join([s[len(".seealso:"):]] + [x.strip() for x in lines[i + 1:]])
            page.seealso = [n.strip().strip("`") for n in rest.split(",") if n.strip()]
            break
        m = SECTION_RE.match(s) if not l.startswith("  ") else None
        if m:
            close()
            current = next(n for p, n in SECTIONS if re.fullmatch(p, m.group(1)))
            chunk = [m.group(2)] if m.group(2) else []
        elif current is None and not page.collective and COLLECTIVE_RE.match(s):
            close()
            chunk = []
            page.collective = s
        else:
            chunk.append(l)
        i += 1
    close()
    return page


def collect(root):
    files = [os.path.join(root, HEADER)]
    for d, _, fs in os.walk(os.path.join(root, SOURCES)):
        files += [os.path.join(d, f) for f in fs if f.endswith((".c", ".cu", ".h", ".cuh"))]
    pages = {}
    for path in sorted(files):
        src = open(path, encoding="utf-8").read()
        rel = os.path.relpath(path, root)
        for m in BLOCK.finditer(src):
            kind = KINDS[m.group(1)]
            page = parse_block(kind, m.group(2), src[m.end():m.end() + 4000], rel)
            if page.name in pages:
                warn("%s: a second block for %s (the first in %s) is ignored" % (rel, page.name, pages[page.name].location))
                continue
            pages[page.name] = page
    return pages


WARNINGS = []


def warn(msg):
    WARNINGS.append(msg)
    print("manpages: warning: " + msg, file=sys.stderr)


def checks(root, pages):
    """Public names of the header without a page; See Also names without one; options the types' pages omit"""
    hdr = open(os.path.join(root, HEADER), encoding="utf-8").read()
    public = re.findall(r"PETSC_EXTERN\s+PetscErrorCode\s+(\w+)\s*\(", hdr)
    public += re.findall(r"^#define\s+(MAT\w*CSRK\w*|MATORDERINGBANDK)\s", hdr, re.M)
    public += re.findall(r"\}\s*(MatCSRK\w+)\s*;", hdr)
    for n in public:
        if n not in pages:
            warn("%s (%s) has no comment block, so no manual page" % (n, HEADER))
    for p in pages.values():
        for n in p.seealso:
            base = n.rstrip("()")
            if base not in pages and is_own(base):
                warn("%s: See Also names %s, which has no manual page" % (p.name, n))
    # the options read by the types against the keys their pages list
    opts = set()
    for d, _, fs in os.walk(os.path.join(root, SOURCES)):
        for f in fs:
            if f.endswith((".c", ".cu")):
                s = open(os.path.join(d, f), encoding="utf-8").read()
                opts |= set(re.findall(r"PetscOptions\w+\(\s*(?:PetscOptionsObject\s*,\s*)?\"(-mat_csrk_\w+)\"", s))
                opts |= set(re.findall(r"CSRKOptions\w+\(\s*PetscOptionsObject\s*,\s*\"(-mat_csrk_\w+)\"", s))
                m = re.search(r"MatCSRKFeatures\[\]\s*=\s*\{([^}]*)\}", s)
                if m:
                    names = re.findall(r"\"([a-z0-9_]+)\"", m.group(1))
                    opts |= {"-mat_csrk_" + n for n in names}
    for typ, want in (("MATCSRK", lambda o: "cuda" not in o), ("MATCSRKCUDA", lambda o: "cuda" in o)):
        if typ not in pages:
            continue
        listed = {k.split()[0] for part in pages[typ].sections.get("Options Database Keys", []) if part[0] == "items"
                  for k, _ in part[1]}
        for o in sorted(x for x in opts if want(x)):
            if o not in listed:
                warn("%s: its Options Database Keys omit %s" % (typ, o))


def is_own(name):
    return bool(re.match(r"^(MatCSRK|MATCSRK|MATSEQCSRK|MATMPICSRK|MAT_CSRK|MATORDERINGBANDK)", name))


def petsc_link(name):
    """PETSc's own manual page of a name, by the prefix PETSc files it under"""
    for prefix, sub in (("Mat", "Mat"), ("MAT", "Mat"), ("Vec", "Vec"), ("VEC", "Vec"), ("KSP", "KSP"), ("PC", "PC"),
                        ("SNES", "SNES"), ("DM", "DM"), ("Petsc", "Sys")):
        if name.startswith(prefix):
            return "%s/%s/%s/" % (PETSC_MANUAL, sub, name)
    return None


# ------------------------------------------------------------------ markdown

def md_inline(text, pages, self_name):
    """Backticked names that have a page become links (not the page's own name); < and > outside code spans escaped,
    so that a renderer does not take <n> for HTML"""
    def sub(m):
        n, paren = m.group(1), m.group(2) or ""
        if n in pages and n != self_name:
            return "[`%s%s`](%s.md)" % (n, paren, n)
        return m.group(0)
    pieces = re.split(r"(`[^`]*`)", text)
    pieces = [p if p.startswith("`") else p.replace("<", "&lt;").replace(">", "&gt;") for p in pieces]
    return NAME_RE.sub(sub, "".join(pieces))


def md_parts(parts, pages, name):
    out = []
    for kind, val in parts:
        if kind == "p":
            out += [md_inline(val, pages, name), ""]
        elif kind == "items":
            for key, text in val:
                k = "`%s`" % key if key.startswith("-") else "***%s***" % md_inline(key, pages, name)
                out.append("- %s - %s" % (k, md_inline(text, pages, name)) if text else "- %s" % k)
            out.append("")
        elif kind == "code":
            out += ["```"] + val + ["```", ""]
    return out


def md_page(p, pages):
    out = ["# %s" % p.name, md_inline(p.summary, pages, p.name), ""]
    if p.synopsis or p.kind in ("function", "enum", "struct"):
        out += ["## Synopsis", "```", '#include "petsccsrk.h"'] + p.synopsis + ["```"]
        if p.collective:
            out += [p.collective]
        out += [""]
    elif p.collective:
        out += [p.collective, ""]
    body = md_parts(p.body, pages, p.name)
    if body:
        if p.kind == "enum":
            out += ["## Values"] if any(k == "items" for k, _ in p.body) else []
        out += body
    for sec in ORDER:
        if sec in p.sections:
            parts = p.sections[sec]
            out += ["## %s" % sec, ""] + md_parts(parts, pages, p.name)
    if p.seealso:
        links = []
        for n in p.seealso:
            base = n.rstrip("()")
            if base in pages and base != p.name:
                links.append("[`%s`](%s.md)" % (n, base))
            elif not is_own(base) and petsc_link(base):
                links.append("[`%s`](%s)" % (n, petsc_link(base)))
            else:
                links.append("`%s`" % n)
        out += ["## See Also", ", ".join(links), ""]
    if p.level:
        out += ["## Level", p.level, ""]
    out += ["## Location", p.location, "", "---", "[Index of the petsc-csrk manual pages](index.md)", ""]
    while len(out) > 1 and out[-1] == "" and out[-2] == "":
        out.pop()
    return "\n".join(out)


GROUPS = [("type", "Matrix types"), ("enum", "Enumerations"), ("struct", "Structures"), ("function", "Functions")]


def md_index(pages):
    out = ["# petsc-csrk manual pages", "",
           "Generated by `make manpages` (`configure-hooks/manpages.py`) from the comment blocks of `%s` and `%s/`; "
           "`make manpages-check` fails where these pages are older than the comments. The same pages as troff: "
           "`make manpages`, then `man -M build/man MATCSRK`." % (HEADER, SOURCES), ""]
    for kind, title in GROUPS:
        names = sorted(n for n, p in pages.items() if p.kind == kind)
        if not names:
            continue
        out += ["## " + title, "", "| name | summary |", "| --- | --- |"]
        for n in names:
            s = pages[n].summary.replace("|", "\\|")
            out.append("| [`%s`](%s.md) | %s |" % (n, n, s))
        out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------ troff

def roff_text(text):
    text = NAME_RE.sub(lambda m: "\\fB%s%s\\fR" % (m.group(1), m.group(2) or ""), text.replace("\\", "\\e"))
    text = text.replace("`", "")
    return text


def roff_line(text):
    t = roff_text(text)
    return "\\&" + t if t[:1] in (".", "'") else t


def roff_parts(parts):
    out = []
    for kind, val in parts:
        if kind == "p":
            out += [".PP", roff_line(val)]
        elif kind == "items":
            for key, text in val:
                out += [".TP", "\\fB%s\\fR" % roff_text(key).replace("-", "\\-"), roff_line(text) if text else ""]
        elif kind == "code":
            out += [".PP", ".nf"] + ["\\&" + roff_text(x) for x in val] + [".fi"]
    return out


def roff_page(p):
    out = ['.TH %s 3 "" "petsc-csrk" "petsc-csrk manual pages"' % p.name,
           ".SH NAME", "%s \\- %s" % (p.name, roff_text(p.summary))]
    if p.synopsis or p.kind in ("function", "enum", "struct"):
        out += [".SH SYNOPSIS", ".nf", '#include "petsccsrk.h"'] + ["\\&" + roff_text(x) for x in p.synopsis] + [".fi"]
        if p.collective:
            out += [".PP", p.collective]
    if p.body:
        out += [".SH DESCRIPTION"] + roff_parts(p.body)
    for sec in ORDER:
        if sec in p.sections:
            out += ['.SH "%s"' % sec.upper()] + roff_parts(p.sections[sec])
    if p.level:
        out += [".SH LEVEL", p.level]
    if p.seealso:
        out += ['.SH "SEE ALSO"', roff_text(", ".join(p.seealso))]
    out += [".SH LOCATION", p.location]
    return "\n".join(x for x in out if x is not None) + "\n"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--md", help="folder of the markdown pages (docs/manualpages)")
    ap.add_argument("--man", help="folder of the troff pages (man3/ below it)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when there are warnings")
    a = ap.parse_args()
    pages = collect(a.root)
    if not pages:
        sys.exit("manpages: no comment blocks found under %s" % a.root)
    checks(a.root, pages)
    if a.md:
        os.makedirs(a.md, exist_ok=True)
        for f in os.listdir(a.md):  # pages of names that are gone
            if f.endswith(".md") and f != "index.md" and f[:-3] not in pages:
                os.remove(os.path.join(a.md, f))
        for n, p in pages.items():
            write(os.path.join(a.md, n + ".md"), md_page(p, pages))
        write(os.path.join(a.md, "index.md"), md_index(pages))
    if a.man:
        for n, p in pages.items():
            write(os.path.join(a.man, "man3", n + ".3"), roff_page(p))
    print("manpages: %d pages%s%s%s" % (len(pages), " in " + a.md if a.md else "",
                                         ", troff in " + a.man + "/man3" if a.man else "",
                                         "; %d warnings" % len(WARNINGS) if WARNINGS else ""))
    if a.strict and WARNINGS:
        sys.exit(1)


if __name__ == "__main__":
    main()
