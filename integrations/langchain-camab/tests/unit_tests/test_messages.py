"""LangChain prompts -> camab-rag prompts."""

from __future__ import annotations

import pytest
from langchain_camab.native import last_user_text, to_chat_messages, to_prompt
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate

from camab_rag.errors import InputError


def test_roles_and_contents() -> None:
    messages = [
        SystemMessage("sys"),
        HumanMessage("hi"),
        AIMessage("hello"),
        ChatMessage(role="critic", content="c"),
    ]
    assert to_chat_messages(messages) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "critic", "content": "c"},
    ]


def test_multipart_content_keeps_text_blocks() -> None:
    message = HumanMessage(
        content=[
            {"type": "text", "text": "Context: "},
            {"type": "image_url", "image_url": {"url": "data:"}},
            "tail",
        ]
    )
    assert message.text == "Context: tail"  # LangChain's own reading, which we use


def test_prompt_value_and_strings() -> None:
    template = ChatPromptTemplate.from_messages([("system", "s"), ("human", "{q}")])
    assert to_prompt(template.invoke({"q": "why?"})) == [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "why?"},
    ]
    assert to_prompt("plain") == "plain"
    assert to_prompt([{"role": "user", "content": "x"}]) == [{"role": "user", "content": "x"}]
    with pytest.raises(InputError, match="cannot use a int as a prompt"):
        to_prompt(3)


def test_the_last_user_message_is_the_question() -> None:
    chat = [{"role": "user", "content": "first"}, {"role": "user", "content": "last"}]
    assert last_user_text([*chat, {"role": "assistant", "content": "a"}]) == "last"
    assert last_user_text([{"role": "system", "content": "s"}]) == ""
    assert last_user_text(None) == ""
