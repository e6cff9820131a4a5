"""A framework's chat messages as camab-rag prompts (camab_rag.integration.kernel):
roles renamed, multi-part contents read as their text."""

from __future__ import annotations

from dataclasses import dataclass

from camab_rag.integration import chat_messages, content_text


@dataclass
class Said:
    """A framework's chat message."""

    type: str
    content: object


def test_contents_are_read_as_their_text_blocks() -> None:
    parts = [{"type": "text", "text": "Context: "}, {"type": "image_url", "url": "x"}, "tail"]
    assert content_text(parts) == "Context: tail"
    assert content_text("plain") == "plain"
    assert content_text(None) == ""


def test_roles_are_renamed_for_chat_templates() -> None:
    said = [Said("system", "s"), Said("human", "hi"), Said("ai", ["ok"]), Said("critic", "c")]
    assert chat_messages(said, lambda m: m.type) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "critic", "content": "c"},
    ]
