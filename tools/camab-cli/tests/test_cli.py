"""The ``camab`` command: input errors (line and field named), and real runs with SmolLM2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from camab_cli import cli
from camab_cli.cli import demo_record, main, read_records
from camab_cli.records import InputFileError
from camab_rag import AttributionSettings

GOOD = {
    "question": "Which writer was from England, Henry Roth or Robert Erskine Childers?",
    "documents": [
        {
            "title": "Henry Roth",
            "text": "Henry Roth (February 8, 1906 – October 13, 1995) was an American novelist.",
        },
        {
            "title": "Robert Erskine Childers",
            "text": "Robert Erskine Childers (25 June 1870 – 24 November 1922) was a British "
            "writer born in London.",
        },
        "Bananas are yellow. Apples can be red.",
    ],
    "response": "Robert Erskine Childers was from England.",
}


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- reading
def test_reads_json_object_list_and_jsonl(tmp_path):
    one = tmp_path / "one.json"
    one.write_text(json.dumps(GOOD), encoding="utf-8")
    (record,) = read_records(str(one))
    assert record.question == GOOD["question"] and record.response == GOOD["response"]
    assert record.documents[2].text == "Bananas are yellow. Apples can be red."
    assert record.documents[2].metadata == {}
    assert record.documents[0].metadata["title"] == "Henry Roth"

    many = tmp_path / "many.json"
    many.write_text(json.dumps([GOOD, {**GOOD, "response": None}]), encoding="utf-8")
    records = read_records(str(many))
    assert [r.where for r in records] == [f"{many}[0]", f"{many}[1]"]
    assert records[1].response is None  # to be generated

    lines = write_jsonl(tmp_path / "r.jsonl", [json.dumps(GOOD), "", json.dumps(GOOD)])
    assert [r.where for r in read_records(str(lines))] == [f"{lines}:1", f"{lines}:3"]
    # objects one per line in a .json file are read as JSONL too
    mixed = write_jsonl(tmp_path / "mixed.json", [json.dumps(GOOD), json.dumps(GOOD)])
    assert len(read_records(str(mixed))) == 2


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([json.dumps(GOOD), "{not json"], "r.jsonl:2: not valid JSON"),
        ([json.dumps(GOOD), "[1, 2]"], "r.jsonl:2: a record must be a JSON object, got a list"),
        (
            [json.dumps({**GOOD, "question": 7})],
            "r.jsonl:1: field 'question' must be a string, got a number",
        ),
        (
            [json.dumps({k: v for k, v in GOOD.items() if k != "question"})],
            "r.jsonl:1: field 'question' is missing",
        ),
        (
            ["", json.dumps({k: v for k, v in GOOD.items() if k != "documents"})],
            "r.jsonl:2: field 'documents' is missing",
        ),
        (
            [json.dumps({**GOOD, "documents": ["ok", {"text": 3}]})],
            "r.jsonl:1: field 'documents[1].text' must be a string",
        ),
        (
            [json.dumps({**GOOD, "documents": ["ok", 5]})],
            "r.jsonl:1: field 'documents[1]' must be a string or an object with 'text' or "
            "'page_content', got a number",
        ),
        (
            [json.dumps({**GOOD, "documents": [{"text": "x", "title": ["a"]}]})],
            "r.jsonl:1: field 'documents[0].title' must be a string",
        ),
        (
            [json.dumps({**GOOD, "documents": []})],
            "r.jsonl:1: field 'documents' is empty: nothing to attribute to",
        ),
        (
            [json.dumps({**GOOD, "documents": ["  ", ""]})],
            "r.jsonl:1: field 'documents' holds no text",
        ),
        (
            [json.dumps({**GOOD, "response": ""})],
            "r.jsonl:1: field 'response' is empty: there is nothing to attribute (leave it out to "
            "generate the answer)",
        ),
        (
            [json.dumps({k: v for k, v in GOOD.items() if k != "documents"} | {"context": 4})],
            "r.jsonl:1: field 'context' must be a list, got a number",
        ),
    ],
)
def test_bad_records_name_the_line_and_field(tmp_path, lines, message):
    path = write_jsonl(tmp_path / "r.jsonl", lines)
    with pytest.raises(InputFileError) as error:
        read_records(str(path))
    assert str(error.value).startswith(f"{tmp_path}/{message}")


def test_bad_files(tmp_path):
    with pytest.raises(InputFileError, match="no such file"):
        read_records(str(tmp_path / "missing.json"))
    with pytest.raises(InputFileError, match="is a directory"):
        read_records(str(tmp_path))
    empty = tmp_path / "empty.json"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(InputFileError, match=r"empty\.json: the file is empty"):
        read_records(str(empty))
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "question": "q",\n  "documents": [,]\n}', encoding="utf-8")
    with pytest.raises(InputFileError, match=r"broken.json:3: invalid JSON"):
        read_records(str(broken))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"question": "caf\xe9"}')
    with pytest.raises(InputFileError, match="not UTF-8"):
        read_records(str(latin))
    with pytest.raises(InputFileError, match=r"\[1\]: field 'question'"):
        (tmp_path / "list.json").write_text(json.dumps([GOOD, {}]), encoding="utf-8")
        read_records(str(tmp_path / "list.json"))


def test_command_reports_bad_input_before_loading_a_model(tmp_path, capsys, monkeypatch):
    def no_model(*args: object) -> None:
        raise AssertionError("the model must not load for a bad input file")

    monkeypatch.setattr(cli, "build_scorer", no_model)
    bad = json.dumps({"question": "q"})
    path = write_jsonl(tmp_path / "r.jsonl", [bad, "{oops"])
    assert main(["attribute", str(path)]) == 2  # no record to attribute: every line named
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"camab: error: {path}:1: field 'documents' is missing (a list of documents)",
        f"camab: error: {path}:2: not valid JSON (Expecting property name enclosed in double "
        "quotes, column 2)",
    ]
    assert main(["attribute", str(path), "--budget", "0"]) == 2
    assert "argument --budget: must be at least 1, got 0" in capsys.readouterr().err


def test_a_bad_line_among_good_ones_is_named_and_the_others_attributed(
    tmp_path, capsys, monkeypatch
):
    """Issue 50: on main the first bad line stopped `camab attribute` before any record."""
    from fakes import KeywordScorer

    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: KeywordScorer())
    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(GOOD), json.dumps({"question": "q"})])
    assert main(["attribute", str(path), "--format", "json", "--budget", "4", "-q"]) == 1
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert [(x["where"], x["status"]) for x in lines] == [
        (f"{path}:1", "ok"),
        (f"{path}:2", "error"),
    ]
    assert lines[1]["error"] == "field 'documents' is missing (a list of documents)"
    assert "1 of 2 records failed; the other 1 were written" in captured.err


def test_entry_point_is_installed_and_validates(tmp_path):
    camab = Path(sys.executable).with_name("camab")
    version = subprocess.run([str(camab), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("camab-rag ")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**GOOD, "documents": "   "}), encoding="utf-8")
    run = subprocess.run([str(camab), "attribute", str(bad)], capture_output=True, text=True)
    assert run.returncode == 2
    assert "field 'documents' holds no text" in run.stderr
    assert "Traceback" not in run.stderr
    module = [sys.executable, "-m", "camab_cli", "--version"]
    assert subprocess.run(module, capture_output=True, text=True, check=True).stdout == (
        version.stdout
    )


def test_attribute_defaults_to_the_library_budget():
    args = cli.build_parser(["attribute", "x.json"]).parse_args(["attribute", "x.json"])
    assert args.budget == AttributionSettings().budget == 40


def test_bundled_demo_record_is_valid():
    record = demo_record()
    assert record.response is None
    assert len(record.documents) == 4 and all(d.metadata.get("title") for d in record.documents)
    assert record.extra["license"].startswith("CC BY-SA 4.0")
    assert set(record.extra["gold_documents"]) <= {d.metadata["title"] for d in record.documents}


def test_bench_is_gone_and_says_where_it_went(capsys):
    parser = cli.build_parser(["attribute"])
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert isinstance(choices, dict) and "bench" not in choices
    assert cli.main(["bench", "--smoke"]) == 1
    assert "python -m benchmarks NAME" in capsys.readouterr().err


# ----------------------------------------------------------------------------- real model
@pytest.fixture
def real_scorer(smollm2_scorer, monkeypatch):
    """The CLI's scorer is the real embedded SmolLM2 (loaded once per test session)."""
    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: smollm2_scorer)
    return smollm2_scorer


@pytest.mark.model
def test_attribute_a_record_with_the_real_model(tmp_path, capsys, real_scorer):
    path = tmp_path / "record.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    out = tmp_path / "out.json"
    status = main(
        [
            *("attribute", str(path), "--budget", "6", "--granularity", "chunk"),
            *("--format", "json", "--out", str(out)),
        ]
    )
    assert status == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    attribution, citations = data["attribution"], data["citations"]
    assert attribution["n_documents"] == 3 and len(attribution["scores"]) == 3
    assert 1 <= attribution["n_queries"] <= 6
    assert data["response_generated"] is False
    assert citations["answer"] == GOOD["response"]
    # the British-writer paragraph raises the answer's likelihood more than the fruit one
    scores = attribution["scores"]
    assert scores[1] > scores[2]
    cited_docs = {s["doc_index"] for s in citations["sources"]}
    # the writer's paragraph is cited unless the gate rejects the sentence: then no source
    # is listed as its support
    accepted = any(s["supported"] is not False for s in citations["sentences"])
    assert (1 in cited_docs) == accepted and 2 not in cited_docs
    grounded = citations["groundedness"]
    assert grounded["extra_queries"] <= 2 and grounded["score"] > 0
    err = capsys.readouterr().err
    assert "model calls" in err and f"wrote {out}" in err


@pytest.mark.model
def test_generates_the_response_and_renders_html(tmp_path, capsys, real_scorer):
    path = tmp_path / "record.jsonl"
    path.write_text(json.dumps({**GOOD, "response": None}) + "\n", encoding="utf-8")
    out = tmp_path / "page.html"
    status = main(
        [
            *("attribute", str(path), "--budget", "4", "--granularity", "chunk"),
            *("--format", "html", "--out", str(out), "--max-new-tokens", "16", "--no-groundedness"),
        ]
    )
    assert status == 0
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "camab-sources" in html
    assert "generating the answer" in capsys.readouterr().err


@pytest.mark.model
def test_demo_prints_citations_and_writes_html(tmp_path, capsys, monkeypatch, real_scorer):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    out = tmp_path / "demo.html"
    status = main(
        [
            "demo",
            "--budget",
            "6",
            "--granularity",
            "chunk",
            "--max-new-tokens",
            "24",
            "--out",
            str(out),
        ]
    )
    assert status == 0
    captured = capsys.readouterr()
    assert "Question:" in captured.out and "Sources" in captured.out
    assert "[1]" in captured.out
    assert "\x1b" not in captured.out  # captured output is not a terminal
    assert "Henry Roth" in out.read_text(encoding="utf-8")
    assert "demo finished" in captured.err
    assert "budget: 6 model calls, plus 1 or 2 for the groundedness verdict" in captured.err
    # the calls are the developer's figure: on stderr's progress line, not in the answer
    assert "model call" not in captured.out
    calls = re.search(r": (\d+) model calls(?: \(of the [^)]*\))? in ", captured.err)
    assert calls is not None and 6 <= int(calls.group(1)) <= 10, captured.err


def test_server_options_are_checked(tmp_path, capsys):
    path = tmp_path / "record.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    assert main(["attribute", str(path), "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "--base-url needs --model-name" in capsys.readouterr().err
    assert main(["attribute", str(path), "--base-url", "ftp://x", "--model-name", "m"]) == 2
    assert "--base-url must be an http(s) URL" in capsys.readouterr().err  # the flag


def test_several_records_render_into_one_output(tmp_path, capsys, monkeypatch):
    from fakes import KeywordScorer

    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: KeywordScorer())
    record = json.dumps({**GOOD, "response": "He was British, born in London."})
    path = write_jsonl(tmp_path / "r.jsonl", [record, record])
    assert main(["attribute", str(path), "--budget", "8", "--format", "json", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["where"] for line in lines] == [f"{path}:1", f"{path}:2"]
    out = tmp_path / "page.html"
    assert (
        main(["attribute", str(path), "--budget", "8", "--format", "html", "--out", str(out)]) == 0
    )
    page = out.read_text(encoding="utf-8")
    assert page.count("<html") == 1 and page.count('<div class="camab-cite"') == 2
    err = capsys.readouterr().err
    assert "record 1/2: attributing" in err and "record 2/2: attributing" in err
    assert main(["attribute", str(path), "--budget", "8", "--format", "markdown", "-q"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.count("**Sources**") == 2
    assert "**Robert Erskine Childers**" in markdown and "upported by the sources" in markdown


# ----------------------------------------------------------------------- output files (#37)
def no_model(*args: object) -> None:
    raise AssertionError("the model must not load when --out cannot be written")


def test_the_input_is_never_the_output(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "build_scorer", no_model)
    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(GOOD)])
    before = path.read_bytes()
    assert main(["attribute", str(path), "--out", str(path), "-q"]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("out", "message"),
    [("a_file/x.jsonl", "a_file is not a directory"), ("no_dir/x.jsonl", "does not exist")],
)
def test_an_unwritable_out_is_found_before_the_work(tmp_path, capsys, monkeypatch, out, message):
    """On main: a raw FileExistsError / FileNotFoundError after all the work."""
    monkeypatch.setattr(cli, "build_scorer", no_model)
    (tmp_path / "a_file").write_text("keep me", encoding="utf-8")
    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(GOOD)])
    assert main(["attribute", str(path), "--out", str(tmp_path / out), "-q"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert (tmp_path / "a_file").read_text(encoding="utf-8") == "keep me"


def test_an_existing_out_is_never_replaced_without_force(tmp_path, capsys, monkeypatch):
    """On main `camab attribute --out precious.txt` replaced a file camab never wrote."""
    from fakes import KeywordScorer

    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(GOOD)])
    precious = tmp_path / "precious.txt"
    precious.write_text("PRECIOUS DATA\n", encoding="utf-8")
    monkeypatch.setattr(cli, "build_scorer", no_model)
    assert main(["attribute", str(path), "--out", str(precious), "-q"]) == 2
    err = capsys.readouterr().err
    assert "already exists: refusing to replace it (pass --force" in err
    assert "--force" in err
    assert precious.read_text(encoding="utf-8") == "PRECIOUS DATA\n"
    assert main(["demo", "--out", str(precious), "-q"]) == 2
    assert precious.read_text(encoding="utf-8") == "PRECIOUS DATA\n"
    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: KeywordScorer())
    code = main(["attribute", str(path), "--budget", "8", "--out", str(precious), "--force", "-q"])
    assert code == 0 and "PRECIOUS" not in precious.read_text(encoding="utf-8")
    page = tmp_path / "camab-demo.html"
    page.write_text(cli.demo_page('<html><div class="camab-cite" id="x"></div></html>'))
    assert cli.is_demo_page(page) and not cli.is_demo_page(path)
    cli.check_out(str(page), ours=cli.is_demo_page)  # a second demo replaces its own page
    # a page holding cited answers that no demo wrote is the user's (the fresh-user review
    # lost a hand-written dashboard and an `attribute --format html` report this way)
    for text in (
        '<html><h1>My dashboard</h1><div class="camab-cite">pasted</div></html>',
        "<html><head><title>camab: answer with citations</title></head>"
        '<div class="camab-cite"></div></html>',
    ):
        page.write_text(text, encoding="utf-8")
        assert not cli.is_demo_page(page)
        assert main(["demo", "--out", str(page), "-q"]) == 2
        assert page.read_text(encoding="utf-8") == text


def test_a_failing_record_is_named_and_the_others_are_written(tmp_path, capsys, monkeypatch):
    """On main one failing record discarded every finished one, wrote nothing and did not
    say which record failed."""
    from fakes import KeywordScorer

    from camab_rag.errors import InputError

    class ShortContextScorer(KeywordScorer):
        def score(self, requests):
            if any("too long" in r.response for r in requests):
                raise InputError("the prompt is longer than the model's context")
            return super().score(requests)

    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: ShortContextScorer())
    rows = [
        {**GOOD, "id": "a"},
        {**GOOD, "id": "b", "response": "This answer is too long."},
        {**GOOD, "id": "c"},
    ]
    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(row) for row in rows])
    out = tmp_path / "o.jsonl"
    code = main(["attribute", str(path), "--format", "json", "--out", str(out), "-q"])
    assert code == 1
    err = capsys.readouterr().err
    assert f"{path}:2 (id 'b'): the prompt is longer than the model's context" in err
    assert "1 of 3 records failed; the other 2 were written" in err
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(w["id"], w["status"]) for w in written] == [("a", "ok"), ("b", "error"), ("c", "ok")]
    assert written[1]["error"] == "the prompt is longer than the model's context"


BIKE_SHOP = {
    "question": "What do tune-ups cost, and when does the shop open?",
    "documents": [
        "Tune-ups cost 59 euros and take one day. They are quick.",
        "We sell city bikes and cargo bikes. Many.",
        "Helmets are sold in three sizes.",
        "Our mechanics trained in Utrecht.",
        "Gift cards never expire.",
        "The shop opens at 9am on Saturdays.",
    ],
    "response": "Tune-ups cost 59 euros. The shop opens at 9am.",
}


@pytest.mark.parametrize(
    ("record", "budget", "early"),
    [(GOOD, "5", True), (GOOD, "24", False), (BIKE_SHOP, "40", True)],
)
def test_the_progress_total_never_changes_and_an_early_stop_is_said(
    tmp_path, capsys, monkeypatch, record, budget, early
):
    """With the groundedness verdict's two calls, `make demo` used to print `25/24 model
    calls`: the bar counts the calls the attribution will make, verdict included. A run
    that needs fewer calls than planned (auto stops early on the bike shop) used to count
    `.../42`, then end `21/21`: the total now stays, and the bar and summary say so."""
    import re

    from fakes import KeywordScorer

    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: KeywordScorer())
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert main(["attribute", str(path), "--budget", budget, "--format", "json"]) == 0
    err = capsys.readouterr().err
    bars = [(int(a), int(b)) for a, b in re.findall(r"\] (\d+)/(\d+) model calls", err)]
    assert bars and all(done <= total for done, total in bars), err
    assert len({total for _, total in bars}) == 1, err  # one total for the whole run
    summary = re.search(r"attributing: (\d+) model calls(.*) in ", err)
    assert summary and int(summary.group(1)) == bars[-1][0], err
    done, total = bars[-1]
    if early:
        assert done < total and err.rstrip().splitlines()[-2].endswith("needed fewer"), err
        # not "stopped early" (fresh-user review 10): a shared subset is no early stop
        assert summary.group(2) == f" (of the {total} planned: subsets shared)"
    else:
        assert done == total and summary.group(2) == "", err


def test_auto_is_the_default_method_of_every_command() -> None:
    from camab_cli.cli import build_parser

    for command in (["attribute", "in.jsonl"], ["demo"]):
        assert build_parser(command).parse_args(command).method == "auto"


def test_the_tools_package_ships_the_command() -> None:
    assert callable(cli.main)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--grounded-threshold", "nan"], "--grounded-threshold must be a number in [0, 1]"),
        (["--grounded-threshold", "7"], "--grounded-threshold must be a number in [0, 1]"),
        (["--threshold", "inf"], "--threshold must be a finite number"),
        (["--seed", "-1"], "argument --seed: must be at least 0, got -1"),  # not every record
    ],
)
def test_threshold_flags_are_checked_before_any_model_loads(tmp_path, capsys, flags, message):
    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(GOOD)])
    assert main(["attribute", str(path), *flags, "-q"]) == 2
    assert message in capsys.readouterr().err


def test_audit_threshold_is_checked_too(tmp_path, capsys):
    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(GOOD)])
    out = tmp_path / "out.jsonl"
    assert main(["audit", str(path), "--out", str(out), "--ungrounded-threshold", "2"]) == 2
    assert "--ungrounded-threshold must be a number in [0, 1]" in capsys.readouterr().err


def test_the_knob_flags_have_the_librarys_names_in_every_command() -> None:
    """--budget, --method, --granularity, --deadline-s: the keywords of attribute() and
    of every integration object, on `camab attribute`, `camab demo` and `camab audit`."""
    import argparse

    from camab_cli.audit.cli import config_from_args, configure_parser
    from camab_cli.audit.lines import attribution_settings
    from camab_cli.cli import build_parser
    from camab_cli.options import shared_parser

    flags = ["--budget", "8", "--method", "loo", "--granularity", "chunk", "--deadline-s", "5"]
    knobs = {"budget": 8, "method": "loo", "granularity": "chunk", "deadline_s": 5.0}
    for command in (["attribute", "in.jsonl"], ["demo"]):
        args = build_parser(command).parse_args([*command, *flags])
        assert {name: getattr(args, name) for name in knobs} == knobs
        assert build_parser(command).parse_args(command).deadline_s is None  # no limit
    audit = configure_parser(argparse.ArgumentParser(parents=[shared_parser()])).parse_args(
        ["in.jsonl", "--out", "o.jsonl", *flags]
    )
    settings = attribution_settings(config_from_args(audit))
    assert (settings.budget, settings.method_instance.name, settings.granularity) == (
        8,
        "loo",
        "chunk",
    )
    assert settings.deadline_s == 5.0


def test_the_deadline_flag_reaches_the_attribution(tmp_path, capsys, monkeypatch):
    from fakes import KeywordScorer

    import camab_rag.attributor

    seen: list[object] = []
    attribute = camab_rag.attributor.attribute

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs["deadline_s"])
        return attribute(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(camab_rag.attributor, "attribute", spy)
    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: KeywordScorer())
    record = json.dumps({**GOOD, "response": "He was British, born in London."})
    path = write_jsonl(tmp_path / "r.jsonl", [record])
    assert main(["attribute", str(path), "--deadline-s", "30", "--format", "json", "-q"]) == 0
    assert seen == [30.0] and json.loads(capsys.readouterr().out)["attribution"]["n_queries"]
    assert main(["attribute", str(path), "--deadline-s", "0", "-q"]) == 2
    assert "argument --deadline-s: must be a positive number, got 0" in capsys.readouterr().err


def test_every_attributing_command_shares_the_scorer_flags_and_the_knobs() -> None:
    """Issue 49: one parent parser declares --model/--base-url/--model-name/--api-key-env
    and the knobs of attribute() (same names) for attribute, demo and audit."""
    flags = [
        *("--model", "qwen2.5-0.5b", "--base-url", "http://127.0.0.1:9/v1"),
        *("--model-name", "m", "--api-key-env", "KEY_VAR", "--budget", "7"),
        *("--method", "camab", "--granularity", "chunk", "--deadline-s", "3"),
        *("--no-groundedness", "--seed", "2"),
    ]
    commands = [["attribute", "in.jsonl"], ["demo"], ["audit", "in.jsonl", "--out", "o"]]
    for command in commands:
        args = cli.build_parser().parse_args([*command, *flags])
        got = (args.model, args.base_url, args.model_name, args.api_key_env, args.budget)
        assert got == ("qwen2.5-0.5b", ["http://127.0.0.1:9/v1"], "m", "KEY_VAR", 7), command
        knobs = (args.method, args.granularity, args.deadline_s, args.groundedness, args.seed)
        assert knobs == ("camab", "chunk", 3.0, False, 2), command
    defaults = {c[0]: cli.build_parser().parse_args(c) for c in commands}
    assert [defaults[c].budget for c in ("attribute", "demo", "audit")] == [40, 24, 40]
    assert all(d.groundedness is True for d in defaults.values())


def test_attribute_block_on_facts_reads_a_reworded_answer_as_uncertain(
    tmp_path, capsys, monkeypatch
):
    """``camab attribute``: the verdict of a record whose only unchecked word is reworded
    ("authored") is uncertain by default (``--block-on facts``, issue 48) and keeps its
    source; ``--block-on any`` (the stricter rule) reads it unsupported."""
    from fakes import KeywordScorer

    monkeypatch.setattr(cli, "build_scorer", lambda args, progress: KeywordScorer())
    record = {
        "question": "Who wrote Dune?",
        "documents": ["Dune is a novel by Frank Herbert. It was published in 1965."],
        "response": "Frank Herbert authored the book Dune.",
    }
    path = write_jsonl(tmp_path / "r.jsonl", [json.dumps(record)])
    verdicts, cited = [], []
    for extra in ([], ["--block-on", "any"]):
        args = ["attribute", str(path), "--format", "json", "--budget", "4", "-q", *extra]
        assert main(args) == 0
        shown = json.loads(capsys.readouterr().out)
        verdicts.append(shown["citations"]["groundedness"]["verdict"])
        cited.append(shown["citations"]["sentences"][0]["citations"])
    assert verdicts == ["uncertain", "unsupported"]
    assert cited == [[1], []]  # an uncertain sentence keeps its source
