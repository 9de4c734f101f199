"""The write-ups the report cites, rendered into the results folder (results/docs/*.html), so
a FAIL's link to the section that measures its cause opens offline from the folder alone.

A claim's measured cause names its section as `docs/<file>.md#<anchor>`, GitHub's anchor of
the heading (analysis/claims/model.py `Cause`). Each cited file is rendered whole with
Python-Markdown, its headings given the same anchors, its images copied beside it.
"""
from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

# A cited section: docs/<file>.md#<anchor>, or docs/<file>.md, "<its heading>".
DOC_REF = re.compile(r'docs/([A-Za-z0-9_.-]+)\.md(?:#([a-z0-9_-]+)|, "([^"]+)")?')
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
 body {{ font-family: system-ui, sans-serif; margin: 0 auto; padding: 1em 1.5em 3em;
        max-width: 960px; color: #222; line-height: 1.45; }}
 img {{ max-width: 100%; height: auto; }} pre {{ overflow-x: auto; background: #f6f6f6;
        padding: 0.6em; }} code {{ font-size: 0.9em; }}
 table {{ border-collapse: collapse; font-size: 0.85em; display: block; overflow-x: auto; }}
 th, td {{ border: 1px solid #ddd; padding: 3px 6px; vertical-align: top; }}
 :target {{ background: #fff7d6; }}
</style></head><body>
<p><a href="../index.html">back to the report</a> &middot; rendered from <code>docs/{name}.md</code>
of the checkout that wrote the report</p>
{body}
</body></html>
"""


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped but hyphens and
    underscores, each space a hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def cited_docs(texts: list[str]) -> set[str]:
    """The docs files (names without .md) these texts cite."""
    return {m.group(1) for t in texts for m in DOC_REF.finditer(t)}


def render_docs(names: set[str], docs_dir: Path, out_dir: Path) -> dict[str, Path]:
    """Render each named docs file into out_dir/<name>.html (its images beside it); returns
    the pages written. A name with no file under docs_dir is left out."""
    import markdown
    written: dict[str, Path] = {}
    for name in sorted(names):
        source = docs_dir / f"{name}.md"
        if not source.is_file():
            continue
        text = source.read_text()
        out_dir.mkdir(parents=True, exist_ok=True)
        for image in IMAGE.findall(text):
            if "://" in image:
                continue
            src = (docs_dir / image).resolve()
            if src.is_file() and docs_dir.resolve() in src.parents:
                dest = out_dir / image
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dest)
        body = markdown.markdown(text, extensions=["tables", "fenced_code", "toc"],
                                 extension_configs={"toc": {"slugify": _slug}})
        body = re.sub(r'href="([A-Za-z0-9_.-]+)\.md(#[^"]*)?"',
                      lambda m: _local_link(m, names), body)
        page = out_dir / f"{name}.html"
        page.write_text(PAGE.format(title=html.escape(f"netrepro: docs/{name}.md"),
                                    name=html.escape(name), body=body))
        written[name] = page
    return written


def _slug(value: str, separator: str) -> str:
    return github_anchor(value)


def _local_link(match: re.Match[str], rendered: set[str]) -> str:
    """A link to another docs file: to its page when it is rendered too, else left as it is
    (it resolves in a checkout, not in a results folder alone)."""
    name, anchor = match.group(1), match.group(2) or ""
    return f'href="{name}.html{anchor}"' if name in rendered else match.group(0)


def ref_href(match: re.Match[str]) -> str:
    """Where a cited section is, relative to the report: docs/<file>.html#<anchor>."""
    anchor = match.group(2) or (github_anchor(match.group(3)) if match.group(3) else "")
    return f"docs/{match.group(1)}.html" + (f"#{anchor}" if anchor else "")


def link_docs(text: str) -> str:
    """The text as HTML, each cited docs section in it a link to its rendered page."""
    out, last = [], 0
    for m in DOC_REF.finditer(text):
        out.append(html.escape(text[last:m.start()]))
        out.append(f'<a href="{html.escape(ref_href(m))}">{html.escape(m.group(0))}</a>')
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)
