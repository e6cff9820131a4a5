"""The logged-record format: JSONL and Parquet reading, and errors naming line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from camab_cli.records import Record, RecordError, parse_record, read_records
from camab_rag.errors import InputError

GOOD = {
    "id": "q1",
    "question": "Who wrote Dune?",
    "documents": [
        "Dune is a 1965 novel by Frank Herbert.",
        {"text": "Paris is in France.", "metadata": {"source": "wiki"}, "title": "Paris"},
        {"page_content": "The Nile is long."},
    ],
    "response": "Frank Herbert wrote it.",
    "model": "gpt-x",
}


def write_jsonl(path: Path, rows: list[object]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


def test_good_record_is_normalised() -> None:
    record = parse_record(GOOD, 1)
    assert record.id == "q1"
    assert record.question == "Who wrote Dune?"
    assert [d.text for d in record.documents] == [
        "Dune is a 1965 novel by Frank Herbert.",
        "Paris is in France.",
        "The Nile is long.",
    ]
    assert record.documents[1].metadata == {"source": "wiki", "title": "Paris"}
    assert record.response == "Frank Herbert wrote it."
    assert record.extra == {"model": "gpt-x"}
    assert parse_record(record.to_dict(), 1) == record


def test_id_defaults_to_line_number_and_integers_become_strings() -> None:
    data = {k: v for k, v in GOOD.items() if k != "id"}
    assert parse_record(data, 12).id == "12"
    assert parse_record({**data, "id": 7}, 1).id == "7"


@pytest.mark.parametrize(
    ("patch", "field", "message"),
    [
        ({"question": None}, "question", "field 'question' is null; it must be a string"),
        ({"response": None}, "response", "field 'response' is null; it must be a string"),
        ({"answer": None}, "answer", "field 'answer' is null; it must be a string"),
        (
            {"documents": None},
            "documents",
            "field 'documents' is null; it must be a list of documents",
        ),
        (
            {"documents": [{"text": None}]},
            "documents[0].text",
            "field 'documents[0].text' is null; it must be a string",
        ),
    ],
)
def test_a_null_field_is_named_null_not_missing(
    patch: dict[str, object], field: str, message: str
) -> None:
    """Review 7, finding 10: ``"question": null`` was reported as missing."""
    data = {**GOOD, **patch}
    if "answer" in patch:
        del data["response"]
    result = read_records(write_jsonl(Path(_tmp()) / "r.jsonl", [data]))
    [(_, error)] = list(result)
    assert isinstance(error, RecordError)
    assert (error.field, str(error)) == (field, f"line 1: {message}")


@pytest.mark.parametrize(
    ("patch", "field", "message"),
    [
        ({"documents": 5}, "documents", "line 7: field 'documents' must be a list, got a number"),
        ({"documents": "  "}, "documents", "line 7: field 'documents' holds no text"),
        ({"documents": []}, "documents", "line 7: field 'documents' is empty"),
        ({"documents": ["  "]}, "documents", "line 7: field 'documents' holds no text"),
        ({"documents": ["ok", 3]}, "documents[1]", "line 7: field 'documents[1]' must be"),
        ({"documents": [{"title": "x"}]}, "documents[0]", "has no 'text' or 'page_content'"),
        ({"documents": [{"text": 5}]}, "documents[0].text", "'documents[0].text' must be a str"),
        (
            {"documents": [{"text": "a", "metadata": [1]}]},
            "documents[0].metadata",
            "'documents[0].metadata' must be an object",
        ),
        ({"question": None}, "question", "line 7: field 'question' is missing"),
        ({"question": 3}, "question", "line 7: field 'question' must be a string, got a number"),
        ({"question": " "}, "question", "line 7: field 'question' is empty"),
        ({"response": None}, "response", "line 7: field 'response' is missing"),
        ({"response": ["x"]}, "response", "field 'response' must be a string, got a list"),
        ({"response": "   "}, "response", "field 'response' is empty"),
        ({"id": True}, "id", "field 'id' must be a string or an integer"),
        ({"id": {"a": 1}}, "id", "field 'id' must be a string or an integer, got an object"),
    ],
)
def test_bad_fields_are_named_with_the_line(
    patch: dict[str, object], field: str, message: str
) -> None:
    data = {**GOOD, **patch}
    data = {k: v for k, v in data.items() if v is not None}
    with pytest.raises(InputError) as info:
        parse_record(data, 7)
    assert message in str(info.value)
    assert str(info.value).startswith("line 7: ")
    # the non-raising reader reports the same field
    [(line, error)] = list(read_records(write_jsonl(Path(_tmp()) / "r.jsonl", [data])))
    assert isinstance(error, RecordError)
    assert (line, error.field) == (1, field)


def _tmp() -> str:
    import tempfile

    return tempfile.mkdtemp()


def test_langchain_field_names_and_a_single_string_document() -> None:
    data = {"question": "q?", "context": "One document.", "answer": "A."}
    record = parse_record(data, 3)
    assert [d.text for d in record.documents] == ["One document."]
    assert record.response == "A." and record.extra == {}
    with pytest.raises(InputError, match="line 3: field 'context\\[0\\]' must be"):
        parse_record({**data, "context": [4]}, 3)
    with pytest.raises(InputError, match="field 'answer' is empty"):
        parse_record({**data, "answer": ""}, 3)


def test_response_is_optional_for_attribute() -> None:
    data = {k: v for k, v in GOOD.items() if k != "response"}
    assert parse_record(data, 1, require_response=False).response is None


def test_jsonl_reader_reports_bad_lines_and_goes_on(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "in.jsonl",
        [
            GOOD,
            "{not json",
            "",
            [1, 2],
            {**GOOD, "id": "q2", "documents": {"text": "x"}},
            {**GOOD, "id": "q1"},
            {**GOOD, "id": "q3"},
        ],
    )
    results = list(read_records(path))
    assert [line for line, _ in results] == [1, 2, 4, 5, 6, 7]  # the blank line 3 is skipped
    kinds = [type(r).__name__ for _, r in results]
    assert kinds == ["Record", "RecordError", "RecordError", "RecordError", "RecordError", "Record"]
    messages = [str(r) for _, r in results if isinstance(r, RecordError)]
    assert messages[0].startswith("line 2: not valid JSON")
    assert messages[1] == "line 4: a record must be a JSON object, got a list"
    assert messages[2] == "line 5: field 'documents' must be a list, got an object"
    assert messages[3] == "line 6: field 'id' 'q1' repeats line 1"
    assert isinstance(results[-1][1], Record) and results[-1][1].id == "q3"


def test_a_json_list_file_is_refused_as_jsonl_with_how_to_convert(tmp_path: Path) -> None:
    """`camab attribute` reads a JSON list; the batch reader takes one record per line:
    a list file used to yield only bad lines (0 records, exit 0)."""
    path = tmp_path / "rec.json"
    path.write_text(json.dumps([GOOD], indent=2), encoding="utf-8")
    with pytest.raises(InputError, match=r"holds a JSON list .* jq -c '\.\[\]' rec.json"):
        list(read_records(path))


def test_invalid_utf8_is_a_line_error(tmp_path: Path) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe{}\n")
    results = list(read_records(path))
    assert isinstance(results[0][1], Record)
    assert str(results[1][1]).startswith("line 2: not valid UTF-8")


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such input file"):
        list(read_records(tmp_path / "absent.jsonl"))


def test_parquet_rows_read_like_jsonl(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "question": ["Who wrote Dune?", "Where is Paris?", None],
            "documents": [
                ["Dune is by Frank Herbert.", "Other."],
                ["Paris is in France."],
                ["x"],
            ],
            "response": ["Frank Herbert.", "France.", "y"],
        }
    )
    path = tmp_path / "in.parquet"
    pq.write_table(table, path)
    results = list(read_records(path))
    assert [line for line, _ in results] == [1, 2, 3]
    first = results[0][1]
    assert isinstance(first, Record)
    assert (first.id, [d.text for d in first.documents]) == (
        "a",
        ["Dune is by Frank Herbert.", "Other."],
    )
    assert str(results[2][1]) == "line 3: field 'question' is null; it must be a string"


def test_parquet_with_document_structs(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "question": ["Q?"],
            "documents": [[{"text": "Alpha.", "title": "A"}, {"text": "Beta.", "title": None}]],
            "response": ["Alpha."],
        }
    )
    path = tmp_path / "in.pq"
    pq.write_table(table, path)
    [(_, record)] = list(read_records(path))
    assert isinstance(record, Record)
    assert record.id == "1"
    assert [d.metadata for d in record.documents] == [{"title": "A"}, {}]
