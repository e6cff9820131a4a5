"""LlamaIndex chat messages as camab-rag prompts (camab_rag.integration.chat_messages):
the role by name, the content as its text."""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage, ImageBlock, TextBlock

from camab_rag.integration import chat_messages


def test_llamaindex_messages_are_read_as_role_and_text() -> None:
    said = [
        ChatMessage(role="system", content="s"),
        ChatMessage(
            role="user",
            blocks=[TextBlock(text="Context: "), ImageBlock(url="https://example.org/x.png")],
        ),
        ChatMessage(role="assistant", content=None),
    ]
    assert chat_messages(said) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "Context: "},
        {"role": "assistant", "content": ""},
    ]
