"""A framework's chat messages as camab-rag prompts (camab_rag.integration.chat_messages through
camab_rag.integration): roles renamed, multi-part contents read as their text, prompt
values read by the framework's callable, anything else refused by name."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from camab_rag.errors import InputError
from camab_rag.integration import as_prompt, chat_messages, content_text, last_user_text


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
    assert chat_messages(said, lambda m: m.type, lambda m: m.content) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "critic", "content": "c"},
    ]


def test_a_prompt_is_a_string_a_prompt_value_or_messages() -> None:
    def chat_of(value: object) -> list[dict[str, str]] | None:
        return [{"role": "user", "content": "v"}] if isinstance(value, Said) else None

    assert as_prompt("text", chat_of) == "text"
    assert as_prompt(Said("human", "v"), chat_of) == [{"role": "user", "content": "v"}]
    assert as_prompt([{"role": "user", "content": 3}], chat_of) == [
        {"role": "user", "content": "3"}
    ]
    with pytest.raises(InputError, match="cannot use a int as a prompt: expected a Value"):
        as_prompt(3, chat_of, "a Value")


def test_the_last_user_message_is_the_question() -> None:
    chat = [{"role": "user", "content": "first"}, {"role": "user", "content": "last"}]
    assert last_user_text([*chat, {"role": "assistant", "content": "a"}]) == "last"
    assert last_user_text([{"role": "system", "content": "s"}]) == ""
    assert last_user_text(None) == ""
