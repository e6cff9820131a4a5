"""Self-contained HTML (inline CSS, no scripts, no external assets): untrusted text is
cleaned and escaped, attributes hold numbers, fixed strings, escaped tooltips and http(s)
URLs only, and the full page's Content-Security-Policy forbids scripts."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from camab_rag.render.support import CITE_AT, STRONG_AT, WEAK_AT, support_level, support_words
from camab_rag.render.text import (
    DISAGREES,
    DISPUTED_MARK,
    LEGEND_TEXT,
    answer_id,
    clean,
    dispute_text,
    has_highlights,
    notices,
    says_otherwise,
    score_text,
    sentence_note,
    source_note,
    split_highlights,
    unsupported_pieces,
    verdict_detail,
)

if TYPE_CHECKING:
    from camab_rag.render.cited_answer import CitedAnswer, CitedSentence, Source

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
CSS = """
.camab-cite { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  line-height: 1.5; color: #1d1d1f; max-width: 46rem; }
.camab-cite .camab-question { color: #555; margin: 0 0 .5rem 0; }
.camab-cite .camab-label { font-weight: 600; margin-right: .35rem; }
.camab-cite .camab-answer { font-size: 1.1rem; margin: 0 0 .75rem 0; }
.camab-cite .camab-marker { color: #0b57d0; text-decoration: none; font-size: .8em;
  vertical-align: super; font-weight: 600; }
.camab-cite .camab-verdict { padding: .35rem .6rem; border-radius: .35rem; margin: 0 0 .75rem 0;
  font-size: .95rem; }
.camab-cite .camab-ok { background: #e6f4ea; color: #137333; }
.camab-cite .camab-warn { background: #fce8e6; color: #a50e0e; }
.camab-cite .camab-check { background: #fef7e0; color: #7a4a00; }
.camab-cite .camab-sources { padding-left: 1.5rem; margin: 0; }
.camab-cite .camab-source { margin-bottom: .75rem; }
.camab-cite .camab-source-head { font-weight: 600; }
.camab-cite .camab-score { color: #666; font-weight: 400; font-size: .85rem; margin-left: .4rem; }
.camab-cite .camab-support-3 { color: #7a4a00; font-weight: 600; }
.camab-cite .camab-disputes { color: #a50e0e; }
.camab-cite .camab-source-head a { color: #0b57d0; }
.camab-cite .camab-proxy { background: #fff4e5; color: #7a4a00; border: 1px solid #f0b35a;
  border-left: .3rem solid #e8710a; padding: .35rem .6rem; border-radius: .35rem;
  margin: 0 0 .75rem 0; font-size: .95rem; font-weight: 600; }
.camab-cite .camab-source-text { margin: .25rem 0 0 0; color: #333; font-size: .95rem;
  max-height: 14rem; overflow-y: auto; white-space: pre-wrap; }
.camab-cite mark { color: inherit; border-radius: .2rem; padding: 0 .1rem; }
.camab-cite .camab-hl-1 { background-color: rgba(255, 179, 0, 0.25); }
.camab-cite .camab-hl-2 { background-color: rgba(255, 179, 0, 0.5); }
.camab-cite .camab-hl-3 { background-color: rgba(255, 179, 0, 0.85); }
.camab-cite .camab-hl-disputes { background-color: rgba(217, 48, 37, 0.2); }
.camab-cite .camab-disputed { color: #b3261e; }
.camab-cite .camab-disputed a { color: inherit; text-decoration: none; }
.camab-cite .camab-footer { color: #777; font-size: .8rem; margin-top: .75rem; }
.camab-cite .camab-unsupported { text-decoration: underline dotted #a50e0e; }
.camab-cite .camab-nosupport { background-color: rgba(217, 48, 37, 0.18); color: inherit; }
.camab-cite .camab-from-chat { color: #555; font-size: .8em; margin-left: .3rem; }
.camab-cite .camab-unsupported-note { color: #a50e0e; font-size: .8em; margin-left: .3rem; }
"""
NOTICE_HTML = {
    "pass": '<p class="camab-verdict camab-ok"{tip}>{text}</p>',
    "check": '<p class="camab-verdict camab-check"{tip}>{text}</p>',
    "fail": '<p class="camab-verdict camab-warn"{tip}>{text}</p>',
    "proxy": '<p class="camab-proxy" role="note">&#9888; {text}</p>',
    "empty": '<p class="camab-verdict camab-warn">{text}</p>',
    "uncited": '<p class="camab-verdict">{text}</p>',
}


def esc(text: str) -> str:
    """Untrusted text as HTML text or a quoted attribute value."""
    return escape(clean(text), quote=True)


def _marker(page_id: str, n: int, title: str, mark: str = "", css: str = "") -> str:
    return (
        f'<a class="camab-marker{css}" href="#{page_id}-src-{n}" title="source {n}{title}">'
        f"[{mark}{n}]</a>"
    )


def _scored(source: Source) -> str:
    """What a source's tooltip figure is the score of (``to_dict()``'s "score" is the
    whole source's)."""
    return "its strongest passage" if source.highlights else "the whole source"


def _source_html(answer: CitedAnswer, page_id: str, source: Source) -> str:
    body = []
    for piece, mark in split_highlights(answer, source):
        score = getattr(mark, "score", None)  # none: a passage disagreeing with the answer
        if mark is None:
            body.append(esc(piece))
            continue
        if score is None:
            level, tip = "disputes", DISAGREES
        else:
            level = str(max(support_level(score), 1))
            tip = f"{support_words(score)} ({score_text(score)})"
        body.append(
            f'<mark class="camab-hl camab-hl-{level}" title="{esc(tip)}">{esc(piece)}</mark>'
        )
    label = esc(source.label)
    kind = "camab-disputes" if source.disputes else f"camab-support-{support_level(source.support)}"
    if source.url:
        label = f'<a href="{esc(source.url)}" rel="noopener noreferrer nofollow">{label}</a>'
    return (
        f'<li class="camab-source" id="{page_id}-src-{int(source.number)}">'
        f'<div class="camab-source-head">{label}'
        f'<span class="camab-score {kind}" '
        f'title="{score_text(source.support)} nats per answer token ({_scored(source)})">'
        f"{esc(source_note(source))}</span></div>"
        f'<p class="camab-source-text">{"".join(body).strip()}</p></li>'
    )


def _sentence_html(answer: CitedAnswer, page_id: str, sentence: CitedSentence) -> str:
    body = "".join(
        f'<mark class="camab-nosupport">{esc(piece)}</mark>' if flagged else esc(piece)
        for piece, flagged in unsupported_pieces(sentence)
    )
    note = sentence_note(sentence)
    if note is not None and sentence.supported is not False:
        body += f'<span class="camab-from-chat">{esc(note)}</span>'
    elif note is not None:
        body = f'<span class="camab-unsupported">{body}</span>'
        body += f'<span class="camab-unsupported-note">{esc(note)}</span>'
    for n, s in zip(sentence.citations, sentence.scores):
        body += _marker(page_id, int(n), f": {support_words(s)} ({score_text(s)})")
    return body + _disputed_html(answer, page_id, sentence.disputed)


def _disputed_html(answer: CitedAnswer, page_id: str, numbers: list[int]) -> str:
    """One ``[disputed by 1, 2]`` mark, each number linking to its source (as the terminal
    writes it), for the sources that disagree with a sentence."""
    tips = {n: esc(dispute_text(answer.source(n).disputes)) for n in numbers}
    if len(numbers) < 2:
        return "".join(
            _marker(page_id, int(n), f" {tips[n]}", DISPUTED_MARK, " camab-disputed")
            for n in numbers
        )
    links = ", ".join(
        f'<a href="#{page_id}-src-{int(n)}" title="source {int(n)} {tips[n]}">{int(n)}</a>'
        for n in numbers
    )
    return f'<span class="camab-marker camab-disputed">[{DISPUTED_MARK}{links}]</span>'


def render_html(
    answer: CitedAnswer, *, full_page: bool = True, title: str = "Answer with citations"
) -> str:
    """The cited answer as a standalone HTML page, or with ``full_page=False`` a fragment
    with its own scoped ``<style>`` (notebooks, chat pages)."""
    page_id = answer_id(answer)
    parts = [f'<div class="camab-cite" id="{page_id}">', f"<style>{CSS}</style>"]
    if answer.question:
        parts.append(
            f'<p class="camab-question"><span class="camab-label">Question</span>'
            f"{esc(answer.question)}</p>"
        )
    sentences = [_sentence_html(answer, page_id, sentence) for sentence in answer.sentences]
    text = " ".join(sentences) if sentences else esc(answer.answer)
    parts.append(f'<p class="camab-answer">{text}</p>')
    for kind, line in notices(answer):
        detail = verdict_detail(answer.groundedness) if kind in ("pass", "check", "fail") else None
        tip = f' title="{esc(detail)}"' if detail else ""
        parts.append(NOTICE_HTML[kind].format(tip=tip, text=esc(line)))
    if answer.sources:
        parts.append('<ol class="camab-sources">')
        parts += [_source_html(answer, page_id, source) for source in answer.sources]
        parts.append("</ol>")
    legend = [LEGEND_TEXT] if has_highlights(answer) else []
    legend += ["red marks where a source says otherwise"] if says_otherwise(answer) else []
    if legend:  # the figures for developers in the legend's tooltip
        calls = f"{int(answer.n_queries)} model call{'' if answer.n_queries == 1 else 's'}"
        detail = (
            f"{answer.method} attribution, {calls}; support scale in nats per answer token: "
            f"strong >= {STRONG_AT:.2f}, support >= {CITE_AT:.2f}, weak >= {WEAK_AT:.3f}"
        )
        told = esc("; ".join(legend))
        parts.append(f'<p class="camab-footer" title="{esc(detail)}">{told}</p>')
    parts.append("</div>")
    fragment = "\n".join(parts)
    if not full_page:
        return fragment
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(CSP, quote=True)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n"
        "<style>body { margin: 2rem; background: #fff; }</style>\n"
        f"</head><body>\n{fragment}\n</body></html>\n"
    )
