"""The HTML renderer against an XSS corpus, statically and in a real headless Chromium.

The browser tests use Debian's ``chromium`` (installed by ``scripts/setup.sh test``). They
are skipped when it is absent on a developer machine, and fail in CI (``CI`` set), where
it must be installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from camab_rag.citations import CitedAnswer, cite
from camab_rag.groundedness import assess_groundedness
from camab_rag.render.html import CSS, render_html
from camab_rag.result import AttributionResult, StatementAttribution
from camab_rag.segments import Segment, segment_documents, to_documents

MARKER = "XSS-EXECUTED"
XSS_CORPUS = [
    f"<script>document.title='{MARKER}'</script>",
    f"<img src=x onerror=\"document.title='{MARKER}'\">",
    f"<svg onload=\"document.title='{MARKER}'\"><circle r=1></svg>",
    f"<svg><script>document.title='{MARKER}'</script></svg>",
    f"<a href=\"javascript:document.title='{MARKER}'\">click</a>",
    "<a href='jav&#x09;ascript:alert(1)'>tab</a> <a href=\"&#106;avascript:alert(1)\">x</a>",
    f"</style><script>document.title='{MARKER}'</script><style>",
    f"</textarea></title></mark></p><script>document.title='{MARKER}'</script>",
    f"\"><script>document.title='{MARKER}'</script>",
    f"' onmouseover='document.title=\"{MARKER}\"' x='",
    f"<iframe srcdoc=\"<script>parent.document.title='{MARKER}'</script>\"></iframe>",
    f"<body onload=\"document.title='{MARKER}'\">",
    f"<details open ontoggle=\"document.title='{MARKER}'\">",
    f"<math><mtext><table><mglyph><style><img src=x onerror=\"document.title='{MARKER}'\">",
    f'<meta http-equiv="refresh" content="0;url=javascript:document.title=\'{MARKER}\'">',
    f"<object data=\"javascript:document.title='{MARKER}'\"></object>",
    '<base href="javascript:alert(1)//"><link rel=stylesheet href=x>',
    "broken entities &amp &lt &#x3c;script&#x3e; &#0; &#xD800; &unknown; &",
    "<!-- comment --> <![CDATA[ x ]]> <?php echo 1 ?>",
    "unicode tricks: \u202egnp.exe \u200b\u200d\ufeff zero width, \x00 null, \x1b[31m ansi",
    "＜script＞fullwidth＜/script＞ and \ufe64script\ufe65 small form",
    "<style>body{background:url(javascript:alert(1))}</style>",
    "{{constructor.constructor('alert(1)')()}} ${alert(1)}",
]


def hostile_answer() -> CitedAnswer:
    """A cited answer whose question, answer, titles and documents are all XSS payloads."""
    # the input gate (camab_rag.text_gate) refuses NUL in documents: the question below
    # still carries it, unchecked, to the renderer
    documents = [
        {"title": payload, "text": f"Paris is the capital of France. {payload} It is big."}
        for payload in (p.replace("\x00", "") for p in XSS_CORPUS)
    ]
    docs = to_documents(documents)
    segments = segment_documents(docs, "chunk")
    n = len(segments)
    scores = np.linspace(1.0, -0.2, n)
    response = " ".join(f"Claim {i} {payload}." for i, payload in enumerate(XSS_CORPUS[:6]))
    statements = [
        StatementAttribution(f"Claim {i} {p}.", 0, 1, np.roll(scores, i))
        for i, p in enumerate(XSS_CORPUS[:6])
    ]
    result = AttributionResult(
        scores=scores,
        segments=segments,
        question=" ".join(XSS_CORPUS),
        response=response,
        statements=statements,
        n_documents=n,
        masks=np.array([np.ones(n, bool), np.zeros(n, bool)]),
        rewards=np.array([-0.5, -2.0]),
    )
    return cite(result, documents).with_groundedness(assess_groundedness(result))


class PageParser(HTMLParser):
    """Collects every element, attribute, style block and text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self.title = ""
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, name, value or "") for name, value in attrs]
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        current = self._in[-1] if self._in else ""
        if current == "style":
            self.styles.append(data)
        elif current == "title":
            self.title += data
        else:
            self.text.append(data)


def parse(html: str) -> PageParser:
    parser = PageParser()
    parser.feed(html)
    parser.close()
    return parser


ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "div", "p", "span", "a", "ol", "li",
    "mark", "hr",
}  # fmt: skip
ALLOWED_ATTRS = {"class", "id", "href", "title", "lang", "charset", "http-equiv", "content", "name"}


@pytest.mark.parametrize("full_page", [True, False])
def test_html_has_no_active_content(full_page):
    html = render_html(hostile_answer(), full_page=full_page)
    page = parse(html)
    assert set(page.tags) <= ALLOWED_TAGS, set(page.tags) - ALLOWED_TAGS
    assert "script" not in page.tags and "iframe" not in page.tags and "svg" not in page.tags
    names = {name for _, name, _ in page.attrs}
    assert names <= ALLOWED_ATTRS, names - ALLOWED_ATTRS
    assert not [name for name in names if name.startswith("on")]
    for _tag, name, value in page.attrs:
        assert "javascript:" not in value.lower().replace("\t", "")
        if name == "href":
            assert value.startswith("#camab-"), value
        if name in ("id", "class"):
            assert all(c.isalnum() or c in "- " for c in value), value
    # only our own style blocks, intact: a document's </style> did not close them early
    assert all(style.strip() in (CSS.strip(), "body { margin: 2rem; background: #fff; }")
               for style in page.styles)  # fmt: skip
    # the payloads are shown as text, verbatim (after control-character cleaning)
    text = "".join(page.text)
    assert f"<script>document.title='{MARKER}'</script>" in text
    assert "<img src=x onerror=" in text
    assert "\u202e" not in html and "\x00" not in html and "\x1b" not in html


def test_full_page_forbids_scripts_by_policy():
    html = render_html(hostile_answer())
    assert "Content-Security-Policy" in html
    assert "default-src &#x27;none&#x27;" in html  # no script-src: scripts are blocked
    assert "http://" not in html and "https://" not in html  # no external assets


def test_notebook_view():
    answer = hostile_answer()
    fragment = answer._repr_html_()
    assert fragment == answer.to_html(full_page=False)
    assert fragment.startswith('<div class="camab-cite"') and "<html" not in fragment
    assert answer.to_html().startswith("<!DOCTYPE html>")


# ----------------------------------------------------------------------------- browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("CI"),
    reason="Debian chromium is not installed (scripts/setup.sh test installs it)",
)


def chromium(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.fail("chromium is missing: CI must run the browser tests (scripts/setup.sh test)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def dump_dom(path: Path) -> PageParser:
    run = chromium("--virtual-time-budget=2000", "--dump-dom", path.as_uri())
    assert run.returncode == 0, run.stderr[-2000:]
    assert "<body" in run.stdout, run.stderr[-2000:]
    return parse(run.stdout)


@needs_browser
def test_browser_detects_an_executing_script(tmp_path):
    """The check can fail: a page that does run a script changes its title."""
    page = tmp_path / "control.html"
    page.write_text(
        f"<!DOCTYPE html><html><head><title>safe</title></head><body>"
        f"<img src=x onerror=\"document.title='{MARKER}'\"></body></html>",
        encoding="utf-8",
    )
    assert dump_dom(page).title == MARKER


@needs_browser
def test_nothing_executes_in_a_real_browser(tmp_path):
    page = tmp_path / "answer.html"
    page.write_text(render_html(hostile_answer(), title="safe title"), encoding="utf-8")
    dom = dump_dom(page)
    assert dom.title == "safe title"
    assert MARKER not in dom.title
    assert "script" not in dom.tags and "img" not in dom.tags and "svg" not in dom.tags
    assert not [name for _, name, _ in dom.attrs if name.startswith("on")]
    assert "camab-source" in {value for _, name, value in dom.attrs if name == "class"}
    # the notebook fragment, embedded in a page without any policy, is inert as well
    bare = tmp_path / "fragment.html"
    bare.write_text(
        "<!DOCTYPE html><html><head><title>fragment</title></head><body>"
        + hostile_answer()._repr_html_()
        + "</body></html>",
        encoding="utf-8",
    )
    dom = dump_dom(bare)
    assert dom.title == "fragment"
    assert "script" not in dom.tags and "img" not in dom.tags


DEMO_DOCUMENTS = [
    {"title": "Eiffel Tower", "text": "The Eiffel Tower is in Paris. It opened in 1889."},
    {"title": "Fruit", "text": "Bananas are yellow. Apples can be red."},
    {"title": "Gustave Eiffel", "text": "Gustave Eiffel's company designed the tower."},
]


def demo_answer(metadata: list[dict[str, str]] | None = None) -> CitedAnswer:
    """A cited answer over three documents (``metadata``: more keys for each of them)."""
    documents = [{**d, **m} for d, m in zip(DEMO_DOCUMENTS, metadata or [{}, {}, {}])]
    segments = [
        Segment("The Eiffel Tower is in Paris.", 0, 0, 29),
        Segment("It opened in 1889.", 0, 30, 48),
        Segment("Bananas are yellow.", 1, 0, 19),
        Segment("Apples can be red.", 1, 20, 38),
        Segment("Gustave Eiffel's company designed the tower.", 2, 0, 44),
    ]
    response = "It stands in Paris. Gustave Eiffel's company designed it."
    result = AttributionResult(
        scores=np.array([0.8, 0.3, -0.05, 0.0, 0.6]),
        segments=segments,
        question="Where is the Eiffel Tower and who designed it?",
        response=response,
        n_documents=3,
        n_queries=16,
        statements=[
            StatementAttribution(response[:19], 0, 19, np.array([0.9, 0.1, 0.0, 0.0, 0.05])),
            StatementAttribution(response[20:], 20, 57, np.array([0.05, 0.0, 0.0, 0.0, 0.7])),
        ],
    )
    return cite(result, documents)


def screenshot(html: str, path: Path) -> np.ndarray:
    """The page as an 800x600 RGB array, rendered by headless Chromium (kept at ``path``)."""
    image_module = pytest.importorskip("PIL.Image")
    page = path.with_suffix(".html")
    page.write_text(html, encoding="utf-8")
    run = chromium(
        "--hide-scrollbars",
        "--window-size=800,600",
        f"--screenshot={path}",
        page.as_uri(),
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert path.exists() and path.stat().st_size > 5000
    with image_module.open(path) as image:
        assert image.size == (800, 600)
        return np.asarray(image.convert("RGB"), dtype=float)


def near(pixels: np.ndarray, rgb: tuple[int, int, int], tolerance: float = 12.0) -> int:
    """How many pixels are within ``tolerance`` of the colour ``rgb``."""
    return int((np.abs(pixels - np.asarray(rgb, dtype=float)).max(axis=-1) <= tolerance).sum())


@needs_browser
def test_screenshot_of_a_rendered_answer(tmp_path):
    pixels = screenshot(demo_answer().to_html(), tmp_path / "answer.png")
    assert pixels.std() > 10.0  # not blank
    top, bottom = pixels[:300], pixels[300:]
    assert top.std() > bottom.std()  # the content sits at the top of a white page
    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    amber = (red > 230) & (green > 150) & (green < 225) & (blue < 140)
    assert amber.sum() > 500  # the strongest support is highlighted
    link_blue = (blue > 150) & (red < 60) & (green < 120)
    assert link_blue.sum() > 20  # the citation markers


@needs_browser
def test_the_proxy_label_stands_out_in_a_screenshot(tmp_path):
    """The proxy note is a badge (pale orange box, orange bar on its left), not a line of
    body text that a reader misses: its colours are on the page only when a proxy scored."""
    from dataclasses import replace

    from camab_rag.scorers.base import ScoredBy

    plain = demo_answer()
    proxied = replace(plain, scored_by=ScoredBy("smollm2", proxy=True, reason="chat API"))
    own = screenshot(plain.to_html(), tmp_path / "own.png")
    badge = screenshot(proxied.to_html(), tmp_path / "proxy.png")
    box, bar = (255, 244, 229), (232, 113, 10)
    assert near(badge, box, 4) > 8000 and near(badge, bar, 20) > 100
    assert near(own, box, 4) < 100 and near(own, bar, 20) < 20
    assert "Attributed by a proxy model (smollm2)" in proxied.to_html()


@needs_browser
def test_sources_link_out_and_strength_reads_as_words_in_a_browser(tmp_path):
    answer = demo_answer(
        [{"url": "https://example.org/eiffel?a=1&b=<2>"}, {}, {"source": "javascript:alert(1)"}]
    )
    page = tmp_path / "links.html"
    page.write_text(answer.to_html(), encoding="utf-8")
    dom = dump_dom(page)
    hrefs = [value for _tag, name, value in dom.attrs if name == "href"]
    assert "https://example.org/eiffel?a=1&b=<2>" in hrefs  # escaped in the file, intact here
    assert not [h for h in hrefs if "javascript" in h]
    assert all(h.startswith(("#camab-", "https://example.org/")) for h in hrefs)
    text = " ".join(dom.text)
    assert "strong support" in text and "score +" not in text  # numbers only in tooltips
    titles = [value for _tag, name, value in dom.attrs if name == "title"]
    assert any(t.startswith("source 1: strong support (score +") for t in titles)
