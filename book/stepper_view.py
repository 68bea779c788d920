"""The step-through view of a recorded pass: one HTML block per ``stepper`` lesson block.

A ``Recorder`` (``minifx.passes.infra.recorder``) keeps every step of a pass
as data: both graphs node by node, with an id that follows each node, and
what was added, erased, replaced or changed. This module turns that data
into what a reader steps through on the page, at build time:

- each step's graph before and after, drawn by Graphviz into inline SVG,
  with the step's nodes marked. The *before* picture marks what the step
  erased (and the nodes it edited in place); the *after* picture marks what
  it added or put in an erased node's place (and, again, the edited nodes).
  Every node's ``<g>`` carries its recorder id, so a test can read which
  nodes a picture marks and compare them with the data;
- the generated code before and after as one diff, lines removed and
  added marked;
- with torch.fx's recording of the same pass, a mark on each step saying
  whether the graph after it is the graph torch.fx had after its step
  (torch.fx's text with ``torch`` read as ``tensor``);
- the recording itself as JSON inside the page, which the page's small
  script (``lessons/javascripts/stepper.js``) reads for the step count, and
  the browser tests for the ids.

The drawing is made from the recorded data, not from a live GraphModule:
the graphs of earlier steps no longer exist when the pass has finished.
"""

from __future__ import annotations

import difflib
import html
import json
import re
import shutil
import subprocess
from typing import Any

from minifx.passes.graph_drawer import label_text, quote_id

# Box colours by opcode, and the marks of a step (border and fill).
OP_FILL = {"placeholder": "#e8f0fe", "output": "#eeeeee", "get_attr": "#fff4d6"}
DEFAULT_FILL = "#ffffff"
MARKS = {
    "added": ("#1b873f", "#c9f2d4"),  # added, or put in an erased node's place
    "erased": ("#c62828", "#fbd3d3"),
    "changed": ("#b26a00", "#ffe3b0"),  # target, args or kwargs edited in place
    "meta": ("#3949ab", None),  # only node.meta changed: a border, no fill
}
SIDES = ("before", "after")


def marks(step: dict[str, Any]) -> dict[str, dict[int, str]]:
    """Which node of each picture gets which mark: ``{"before": {id: mark}, "after": ...}``.

    An erased node shows in the picture before (it is gone after); an added
    node, or one that now stands where an erased node stood, in the picture
    after. A node edited in place, or whose meta changed, shows in both.
    """
    before: dict[int, str] = {}
    after: dict[int, str] = {}
    for entry in step["meta_changes"]:
        before[entry["node"]] = after[entry["node"]] = "meta"
    for entry in step["changed"]:
        before[entry["node"]] = after[entry["node"]] = "changed"
    for node in step["erased"]:
        before[node] = "erased"
    for node in step["added"]:
        after[node] = "added"
    for entry in step["replaced"]:
        for node in entry["by"]:
            after[node] = "added"
    return {"before": before, "after": after}


def _shape_of(meta: dict[str, Any]) -> str | None:
    data = meta.get("tensor_meta")
    if isinstance(data, dict) and "shape" in data:
        return "shape=(" + ", ".join(str(d) for d in data["shape"]) + ")"
    return None


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def node_label(entry: dict[str, Any]) -> str:
    """A box's label: name, opcode and target, arguments, and the shape when known."""
    fields = [f"%{entry['name']}", entry["op"]]
    if entry["op"] not in ("placeholder", "output"):
        fields.append(_short(f"target={entry['target']}"))
    if entry["op"] != "placeholder" and entry["args"] not in ("()", "[]"):
        fields.append(_short(f"args={entry['args']}"))
    shape = _shape_of(entry["meta"])
    if shape:
        fields.append(shape)
    return "{" + "|".join(label_text(f) for f in fields) + "}"


def step_dot(snapshot: dict[str, Any], marked: dict[int, str], prefix: str) -> str:
    """DOT for one recorded graph; node ``<g>`` ids are ``{prefix}-n{recorder id}``."""
    lines = [
        f"digraph {quote_id(prefix)} {{",
        f"  id={quote_id(prefix)}; rankdir=TB; bgcolor=\"transparent\";",
        '  node [shape=record, style="filled,rounded", fontname="Helvetica", fontsize=11, '
        'color="#555555", penwidth=1];',
        '  edge [color="#555555", arrowsize=0.7];',
    ]
    for entry in snapshot["nodes"]:
        mark = marked.get(entry["id"])
        border, fill = MARKS[mark] if mark else ("#555555", None)
        fill = fill or OP_FILL.get(entry["op"], DEFAULT_FILL)
        classes = f"fx-node fx-{mark}" if mark else "fx-node"
        width = 3 if mark else 1
        node_id = f"{prefix}-n{entry['id']}"
        lines.append(
            f"  {quote_id(str(entry['id']))} [id={quote_id(node_id)}, "
            f"class={quote_id(classes)}, label=\"{node_label(entry)}\", fillcolor=\"{fill}\", "
            f"color=\"{border}\", penwidth={width}];")
    edge = 0
    for entry in snapshot["nodes"]:
        for source in entry["inputs"]:
            lines.append(f"  {quote_id(str(source))} -> {quote_id(str(entry['id']))} "
                         f"[id={quote_id(f'{prefix}-e{edge}')}];")
            edge += 1
    lines.append("}")
    return "\n".join(lines) + "\n"


_XML_PROLOGUE = re.compile(r"^.*?(?=<svg)", re.DOTALL)
_COMMENTS = re.compile(r"<!--.*?-->", re.DOTALL)


def draw_svg(dot_text: str) -> str:
    """Graphviz's SVG for ``dot_text``, ready to put inline (no XML prologue or comments)."""
    executable = shutil.which("dot")
    if executable is None:
        raise RuntimeError("drawing a stepper needs Graphviz's dot program "
                           "(apt-get install graphviz)")
    done = subprocess.run([executable, "-Tsvg"], input=dot_text.encode("utf-8"),
                          capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed on a stepper graph: {done.stderr.decode(errors='replace')}")
    svg = _COMMENTS.sub("", _XML_PROLOGUE.sub("", done.stdout.decode("utf-8"), count=1))
    return svg.strip()


_SIZE = re.compile(r'<svg width="(?P<w>[\d.]+)pt" height="(?P<h>[\d.]+)pt"')
TALLEST_PT = 480  # about 40rem: a step's pictures fit one screen, both at one scale


def same_scale(svgs: list[str]) -> list[str]:
    """The pictures of one step shrunk by one factor, so a box is as big before as after
    and the taller picture fits about one screen (the viewBox keeps the drawing whole)."""
    sizes = [_SIZE.search(svg) for svg in svgs]
    if not all(sizes):
        return svgs
    factor = min(1.0, TALLEST_PT / max(float(m.group("h")) for m in sizes))
    return [_SIZE.sub(f'<svg width="{float(m.group("w")) * factor:.0f}pt" '
                      f'height="{float(m.group("h")) * factor:.0f}pt"', svg, count=1)
            for svg, m in zip(svgs, sizes)]


def code_diff(before: str, after: str) -> list[tuple[str, str]]:
    """The code as ``(kind, line)`` pairs: ``" "`` kept, ``"-"`` removed, ``"+"`` added."""
    old, new = before.strip("\n").splitlines(), after.strip("\n").splitlines()
    lines: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new).get_opcodes():
        if tag == "equal":
            lines += [(" ", line) for line in old[i1:i2]]
        else:
            lines += [("-", line) for line in old[i1:i2]]
            lines += [("+", line) for line in new[j1:j2]]
    return lines


def summary(step: dict[str, Any]) -> str:
    """What the step did, in words, nodes by name."""
    names = {e["id"]: e["name"] for e in step["before"]["nodes"] + step["after"]["nodes"]}
    by = {r["node"]: r["by"] for r in step["replaced"]}
    replacements = {n for r in step["replaced"] for n in r["by"]}
    groups = [
        ("replaced", [f"{names[n]} by {', '.join(names[b] for b in by[n])}"
                      for n in step["erased"] if n in by]),
        ("erased", [names[n] for n in step["erased"] if n not in by]),
        ("added", [names[n] for n in step["added"] if n not in replacements]),
        ("edited", [f"{names[c['node']]} ({', '.join(f for f in c['fields'] if f != 'inputs')})"
                    for c in step["changed"]]),
        ("meta of", sorted({names[m["node"]] for m in step["meta_changes"]})),
    ]
    parts = [f"{label} {'; '.join(items)}" for label, items in groups if items]
    return ". ".join(p[0].upper() + p[1:] for p in parts) or "No change"


def same_as_torch_fx(step: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """Whether the graph after ``step`` prints as torch.fx's after its own step."""
    return step["after"]["graph"] == theirs["after"]["graph"].replace("torch", "tensor")


def _torch_fx_html(step: dict[str, Any], theirs: dict[str, Any] | None) -> str:
    if theirs is None:
        return ""
    if same_as_torch_fx(step, theirs):
        return ('<p class="fx-torch-fx fx-same" data-same="true">&#10003; After this step the '
                "graph is torch.fx's, line for line.</p>")
    return ('<details class="fx-torch-fx fx-differs" data-same="false"><summary>&#10007; After '
            "this step the graph differs from torch.fx's</summary><pre><code>"
            f"{html.escape(theirs['after']['graph'])}</code></pre></details>")


def _diff_html(step: dict[str, Any]) -> str:
    classes = {" ": "fx-line", "-": "fx-line fx-line-del", "+": "fx-line fx-line-add"}
    rows = [f'<span class="{classes[kind]}">{kind} {html.escape(line)}</span>'
            for kind, line in code_diff(step["before"]["code"], step["after"]["code"])]
    return ('<figure class="fx-code"><figcaption>Code</figcaption><pre class="fx-diff"><code>'
            + "".join(rows) + "</code></pre></figure>")  # each line a block: no newlines


def _step_html(name: str, step: dict[str, Any], count: int,
               theirs: dict[str, Any] | None = None) -> str:
    marked = marks(step)
    svgs = same_scale([draw_svg(step_dot(step[side], marked[side],
                                         f"{name}-s{step['index']}-{side}")) for side in SIDES])
    pictures = [f'<figure class="fx-{side}"><figcaption>{side.capitalize()}</figcaption>'
                f"{svg}</figure>" for side, svg in zip(SIDES, svgs)]
    round_ = "" if step["round"] is None else f", round {step['round']}"
    modified = "" if step["modified"] is None else f", modified={step['modified']}"
    hidden = "" if step["index"] == 0 else " hidden"
    return (
        f'<section class="fx-step" data-step="{step["index"]}"{hidden}>'
        f'<p class="fx-step-title">Step {step["index"] + 1} of {count}: '
        f"<code>{html.escape(step['name'])}</code>{round_}{modified}. "
        f"{html.escape(summary(step))}</p>{_torch_fx_html(step, theirs)}"
        f'<div class="fx-panes">{"".join(pictures)}{_diff_html(step)}</div></section>')


LEGEND = (
    '<p class="fx-legend"><span class="fx-key fx-key-added">added or put in its place</span> '
    '<span class="fx-key fx-key-erased">erased</span> '
    '<span class="fx-key fx-key-changed">edited in place</span> '
    '<span class="fx-key fx-key-meta">meta changed</span> '
    "Arrow keys or the buttons step through.</p>")


def render(name: str, caption: str, recording: dict[str, Any]) -> str:
    """The whole stepper as one HTML block (self-contained but for stepper.js and its CSS)."""
    steps = recording["steps"]
    if not steps:
        raise ValueError(f"stepper {name}: the recording has no step")
    data = json.dumps({"name": name, **recording}).replace("</", "<\\/")
    theirs = recording.get("torch_fx", {}).get("steps") or [None] * len(steps)
    body = "".join(_step_html(name, step, len(steps), other)
                   for step, other in zip(steps, theirs))
    return (
        f'<div class="fx-stepper" id="stepper-{name}" data-stepper="{name}" tabindex="0">'
        f'<script type="application/json" class="fx-stepper-data">{data}</script>'
        f'<div class="fx-stepper-bar">'
        f'<button type="button" class="md-button fx-prev" disabled>&#9664; Back</button>'
        f'<span class="fx-count">Step <b>1</b> of {len(steps)}</span>'
        f'<button type="button" class="md-button fx-next"'
        f'{" disabled" if len(steps) == 1 else ""}>Next &#9654;</button>'
        f"<span class=\"fx-caption\">{html.escape(caption)}</span></div>"
        f"{body}{LEGEND}</div>")
