"""A student's notebook, made inert for the pages people open from it.

Everything in a submitted notebook is the student's: its Markdown and raw cells, its metadata,
and every output, which the student's code (or a kernel it has taken over) chose. nbgrader
copies them into the feedback page and into the formgrader page an instructor grades in, so a
`<script>` there runs in the instructor's browser session. ``InertNotebook`` rewrites a
notebook so that nothing of it can run or load anything in a browser; nbgrader_plugin puts it
after the kernel in ``autograde`` (so ``autograded/`` holds the inert notebook that formgrader
shows) and last before every HTML page (feedback, formgrader).

Removed: scripts and styles with their content; every element outside a safelist of text,
table, list and image elements (so iframes, objects, embeds, forms, inputs, media, inline SVG
and MathML, meta, base, link); every attribute outside a safelist (so every ``on*`` handler,
``srcdoc``, ``srcset``, ``id``, ``class``); URLs other than http(s), mailto, ``#anchors`` and
paths inside the submission's folder, and for images only ``data:image/...`` and those paths
(so ``javascript:``, ``vbscript:``, ``data:text/html`` and every remote image, stylesheet or
frame); CSS properties other than colours, alignment, font weight/style, padding and borders
(no ``url()`` can load); outputs of any type but text, PNG/JPEG/GIF, LaTeX, HTML and Markdown
(``application/javascript``, widgets, unknown types), each named in a note where nothing else
of that output is left; output metadata but numeric image sizes; cell and notebook metadata but
nbgrader's (with a well-formed ``grade_id``) and the kernel's name; Markdown attachments
(embedded as ``data:`` images). Kept: printed text, errors, tables, images (SVG as an
``<img>``, where no script runs), links, and Markdown, rendered and then sanitized, so what
it shows stays and what it could run goes. The instructor's own Markdown and raw cells (equal
to a cell of the released notebook) are left as they are. Formgrader's page also writes the
student's id (their folder's name) and names as they are: they are escaped. ``InertFolder`` deletes from
``autograded/`` the files beside the notebook that a browser would run (HTML, SVG, XML,
JavaScript), which formgrader would otherwise serve from the instructor's own origin.
"""
import base64
import html
import json
import mimetypes
import os
import re

import nh3
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor
from nbformat.v4 import new_output
from traitlets import Bool

TAGS = nh3.ALLOWED_TAGS | {"tfoot"}
STYLED = ("table", "thead", "tbody", "tfoot", "tr", "th", "td", "div", "span", "p")
ATTRIBUTES = {tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()}
for _tag in STYLED:
    ATTRIBUTES.setdefault(_tag, set()).add("style")
STYLES = {"color", "background-color", "text-align", "vertical-align", "font-weight", "font-style",
          "white-space", "padding", "padding-left", "padding-right", "padding-top", "padding-bottom",
          "border", "border-collapse", "border-color", "border-style", "border-width", "border-spacing"}
URL_ATTRIBUTES = {"href", "src", "cite"}
IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml)[;,]", re.I)
WEB = re.compile(r"(https?|mailto):", re.I)
# A path inside the submission's folder: no scheme, not from the server's root, no way up
# (a browser reads %2e as a dot).
FOLDER_PATH = re.compile(r"(?![/\\])(?!.*(^|[/\\])(\.|%2e){2}([/\\?#]|$))[^:]*$", re.I)
# No property on the list takes an image, but an invalid value is the browser's to judge: none of these.
STYLE_LOADS = re.compile(r"url\s*\(|image-set|expression|\\|@import", re.I)
KEPT_OUTPUTS = {"text/plain", "image/png", "image/jpeg", "image/gif", "text/latex"}
IMAGES = ("image/png", "image/jpeg", "image/gif")
NAME = re.compile(r"[^<>&\"'`]*$")     # kernel and language names: no markup
GRADE_ID = re.compile(r"[\w-]+$")      # what nbgrader itself accepts
# What formgrader's page writes from its resources without escaping (its Jinja has no autoescape):
# the student's id is their folder's name, the names are the gradebook's, the path holds the id.
SHOWN_RESOURCES = ("student", "first_name", "last_name", "notebook_path")
# Files a browser runs when formgrader serves them from autograded/ (by their guessed type).
ACTIVE_FILES = {"text/html", "application/xhtml+xml", "image/svg+xml", "application/xml", "text/xml",
                "text/javascript", "application/javascript", "application/x-javascript", "text/xsl",
                "application/xslt+xml"}


def _url(element, attribute, value):
    if attribute == "style":
        return None if STYLE_LOADS.search(value) else value
    if attribute not in URL_ATTRIBUTES:
        return value
    url = value.strip()
    if element == "img" and attribute == "src":   # loaded at once: never from elsewhere
        return value if IMAGE_DATA.match(url) or FOLDER_PATH.match(url) else None
    return value if url.startswith("#") or WEB.match(url) or FOLDER_PATH.match(url) else None


def clean_html(html):
    """``html`` with nothing that can run or load (see the module docstring)."""
    return nh3.clean(html, tags=TAGS, clean_content_tags={"script", "style"}, attributes=ATTRIBUTES,
                     attribute_filter=_url, url_schemes={"http", "https", "mailto", "data"},
                     filter_style_properties=STYLES, strip_comments=True)


def markdown_html(source, attachments=None):
    """Markdown rendered as nbconvert renders it (attachments embedded), then sanitized."""
    return clean_html(MarkdownWithMath(renderer=IPythonRenderer(escape=False, attachments=attachments or {}))
                      .render(source))


def as_markdown(html):
    """Markdown that renders as exactly ``html``: one HTML block of one line, which no Markdown
    renderer parses further (a blank line would end the block and let text become links)."""
    return "<div>" + html.strip().replace("\r", "").replace("\n", "&#10;") + "</div>"


def _trusted(cell) -> tuple:
    return cell.cell_type, cell.source, json.dumps(cell.get("attachments", {}), sort_keys=True)


def _metadata(output) -> dict:
    """Only numeric image sizes: the templates write them into attributes."""
    kept = {}
    for mime in IMAGES:
        sizes = output.get("metadata", {}).get(mime, {})
        sizes = {k: v for k, v in sizes.items() if k in ("width", "height") and type(v) in (int, float)}
        if sizes:
            kept[mime] = sizes
    return kept


def inert_output(output):
    """The output with nothing active left, or None where nothing is left of it."""
    kind = output.get("output_type")
    if kind == "stream":
        return new_output("stream", name=output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout",
                          text=str(output.get("text", "")))
    if kind == "error":
        return new_output("error", ename=str(output.get("ename", "")), evalue=str(output.get("evalue", "")),
                          traceback=[str(line) for line in output.get("traceback", [])])
    if kind not in ("display_data", "execute_result"):
        return None
    data, removed = {}, []
    for mime, value in output.get("data", {}).items():
        if mime in KEPT_OUTPUTS and isinstance(value, str):
            data[mime] = value
        elif mime == "text/html" and isinstance(value, str):
            data[mime] = clean_html(value)
        elif mime == "text/markdown" and isinstance(value, str):
            data.setdefault("text/html", markdown_html(value))
        elif mime == "image/svg+xml" and isinstance(value, str):   # an image, where no script runs
            encoded = base64.b64encode(value.encode()).decode()
            data.setdefault("text/html", f'<img src="data:image/svg+xml;base64,{encoded}">')
        else:
            removed.append(mime)
    if removed and set(data) <= {"text/plain"}:
        data["text/plain"] = f"[output not shown: {', '.join(sorted(removed))}]"
    if not data:
        return None
    if kind == "display_data":
        return new_output(kind, data=data, metadata=_metadata(output))
    count = output.get("execution_count")
    return new_output(kind, data=data, metadata=_metadata(output), execution_count=count if type(count) is int else None)


class InertNotebook(Preprocessor):
    """Make a submitted notebook inert (the module docstring lists what goes and what stays)."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources) -> tuple:
        for key in SHOWN_RESOURCES:
            if isinstance(resources.get(key), str):
                resources[key] = html.escape(resources[key], quote=True)
        trusted = self._released(resources)
        meta = nb.get("metadata", {})
        nb.metadata = {}
        for key, fields, needed in (("kernelspec", ("name", "display_name", "language"), 2),
                                    ("language_info", ("name",), 1)):
            kept = {f: meta[key][f] for f in fields if isinstance(meta.get(key, {}).get(f), str)
                    and NAME.match(meta[key][f])}
            if len(kept) >= needed:   # nbformat requires name and display_name; language_info's name
                nb.metadata[key] = kept
        for cell in nb.cells:
            self._cell(cell, trusted)
        return nb, resources

    def _cell(self, cell, trusted) -> None:
        meta = cell.get("metadata", {})
        nbgrader = meta.get("nbgrader")
        cell.metadata = {}
        if isinstance(nbgrader, dict) and GRADE_ID.match(str(nbgrader.get("grade_id", "x"))):
            cell.metadata["nbgrader"] = nbgrader
        if cell.cell_type == "code":
            count = cell.get("execution_count")
            cell.execution_count = count if type(count) is int else None
            cell.outputs = [o for o in map(inert_output, cell.get("outputs", [])) if o is not None]
        elif _trusted(cell) in trusted:
            return
        elif cell.cell_type == "markdown":
            cell.source = as_markdown(markdown_html(cell.source, cell.pop("attachments", None)))
        else:  # raw: shown as HTML where its format says so
            cell.source = clean_html(cell.source)
            cell.pop("attachments", None)

    def _released(self, resources) -> set:
        """Markdown and raw cells of the released notebook (the instructor's), where nbgrader names one."""
        import nbformat
        from nbgrader.coursedir import CourseDirectory

        info = resources.get("nbgrader") or {"assignment": resources.get("assignment_id"),  # formgrader's
                                             "notebook": resources.get("notebook_id")}
        if not (isinstance(info.get("assignment"), str) and isinstance(info.get("notebook"), str)):
            return set()
        coursedir = CourseDirectory(config=self.config)
        path = coursedir.format_path(coursedir.release_directory, ".", info["assignment"])
        try:
            released = nbformat.read(f"{path}/{info['notebook']}.ipynb", as_version=4)
        except (OSError, ValueError) as exc:
            self.log.info("No released notebook to compare with (%s): every Markdown cell is sanitized", exc)
            return set()
        return {_trusted(cell) for cell in released.cells if cell.cell_type != "code"}


class InertFolder(Preprocessor):
    """Delete from the notebook's folder (``autograded/``) the files a browser would run, which
    formgrader would serve from the instructor's origin; ``submitted/`` keeps them."""

    enabled = Bool(True, help="nbconvert skips preprocessors that are not enabled").tag(config=True)

    def preprocess(self, nb, resources) -> tuple:
        folder = resources.get("metadata", {}).get("path") or "."
        for top, _dirs, names in os.walk(folder):
            for name in names:
                path = os.path.join(top, name)
                kind = mimetypes.guess_type(name)[0]
                if kind in ACTIVE_FILES:
                    self.log.warning("%s (%s) removed from %s: a browser would run it", name, kind, folder)
                    os.remove(path)
        return nb, resources
