"""One vocabulary of flags, held over every parser of every command.

- A flag that takes several values takes them both ways (``--config A B`` and ``--config A
  --config B``), and a given list replaces the default.
- "Score as the original did" is ``--legacy`` for every family; the old names (``--strict``,
  ``--legacy-normalisation``, ``--judge-cache``) still work for one release, with a warning.
- A metavar says what the value is: a one-letter placeholder only for a number.
- ``predict --split`` defaults to the config's only split.
- A build step or publish reads the earlier step's folder as an optional positional
  (``PLAN_DIR``) and writes ``--out``, both defaulting to the pipeline's paths; only an output
  the pipeline never writes is a required ``--out``.
"""

from __future__ import annotations

import argparse
import json

import pytest

from benchsmith.cli import build_parser, main
from benchsmith.commands.deprecated_flags import DEPRECATED_FLAGS, renamed
from benchsmith.commands.list_flag import ListFlag, takes_several


def subcommands(parser: argparse.ArgumentParser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def every_parser(argv: list[str] | None = None):
    """(command words, parser) for every leaf command, each built as `main` builds it."""
    argv = argv or []
    parser = build_parser(argv)
    for word in argv:
        parser = subcommands(parser).choices[word]
    found = subcommands(parser)
    if found is None:
        yield argv, parser
        return
    for name in found.choices:
        yield from every_parser([*argv, name])


PARSERS = list(every_parser())
OPTIONS = [(" ".join(words), action) for words, parser in PARSERS for action in parser._actions
           if action.option_strings and not isinstance(action, argparse._HelpAction)]  # fmt: skip


def test_the_walk_finds_every_verb_and_family_step():
    names = {" ".join(words) for words, _ in PARSERS}
    assert {"predict", "score", "audit", "export", "curate", "publish mmneedle",
            "build vlicl plan", "build multi ocr", "source prepare coco"} <= names  # fmt: skip
    assert len(names) > 30


@pytest.mark.parametrize("command,action", [o for o in OPTIONS if takes_several(o[1])],
                         ids=lambda v: v if isinstance(v, str) else v.option_strings[-1])  # fmt: skip
def test_a_flag_of_several_values_takes_them_both_ways_and_replaces_its_default(command, action):
    assert isinstance(action, ListFlag) and action.nargs == "+", (command, action.option_strings)
    values = list(action.choices)[:2] if action.choices else ["1", "2"]
    values = [action.type(v) if action.type else v for v in values]
    once, twice = argparse.Namespace(), argparse.Namespace()
    setattr(once, action.dest, action.default)
    setattr(twice, action.dest, action.default)
    action(None, once, values, action.option_strings[0])
    action(None, twice, values[:1], action.option_strings[0])
    action(None, twice, values[1:], action.option_strings[0])
    assert getattr(once, action.dest) == getattr(twice, action.dest) == values


@pytest.mark.parametrize("argv,dest,expected", [
    (["audit", "D", "--config", "a", "b", "--config", "c"], "config", ["a", "b", "c"]),
    (["export", "lmms-eval", "D", "--out", "o", "--config", "a", "--config", "b", "c"],
     "config", ["a", "b", "c"]),
    (["predict", "D", "--config", "c", "--model", "m", "--out", "o", "--shots", "0", "--shots",
      "2", "4"], "shots", [0, 2, 4]),
    (["score", "D", "--config", "c", "--predictions", "p", "--shots", "0", "4"], "shots", [0, 4]),
    (["build", "mmneedle", "plan", "--captions", "c", "--out", "o", "--grids", "2", "--grids",
      "4"], "grids", [2, 4]),
])  # fmt: skip
def test_real_command_lines_take_both_forms(argv, dest, expected):
    assert getattr(build_parser(argv).parse_args(argv), dest) == expected


def test_one_name_for_the_originals_rules_and_the_old_names_warn(capsys):
    flags = {flag for _, action in OPTIONS for flag in action.option_strings}
    old = {flag for table in DEPRECATED_FLAGS.values() for flag in table}
    assert not flags & old, "a deprecated name is still a flag of its own"
    score = next(parser for words, parser in PARSERS if words == ["score"])
    assert [a for a in score._actions if "--legacy" in a.option_strings]
    assert renamed(["score", "D", "--strict", "--judge-cache=/c", "--", "--strict"]) == [
        "score", "D", "--legacy", "--llm-cache=/c", "--", "--strict"]  # fmt: skip
    err = capsys.readouterr().err
    assert "--strict is deprecated; use --legacy" in err and "--judge-cache" in err
    assert renamed(["audit", "D", "--strict"]) == ["audit", "D", "--strict"]  # another verb


def test_a_metavar_says_what_the_value_is():
    vague = []
    for command, action in OPTIONS:
        if action.nargs == 0 or action.choices:
            continue  # a switch, or the choices are the metavar
        metavar = action.metavar or action.dest.upper()
        numeric = action.type in (int, float)
        if (len(metavar) == 1 or metavar == "VALUE") and not numeric:
            vague.append(f"{command} {action.option_strings[0]} {metavar}")
    assert not vague, vague


def test_predict_splits_default_to_the_only_split(sample_project, tmp_path, capsys):
    from benchsmith.commands.predict import default_split

    published = sample_project / "published"
    assert default_split(published / "mmiu", "jigsaw_puzzle_solving") == "test"
    assert default_split(published / "vlicl", "clevr") == "query"
    with pytest.raises(Exception, match="pass --split"):
        default_split(published / "vlicl", "episodes")  # hashed and legacy
    argv = ["predict", str(published / "multi"), "--config", "questions", "--model", "m",
            "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0", "--out",
            str(tmp_path / "p.jsonl"), "--limit", "1"]  # fmt: skip
    assert main(argv) != 0  # the server is down; the split was found
    assert "split" not in capsys.readouterr().err.lower()


def test_score_reports_several_shot_counts(sample_project, tmp_path, capsys):
    published = sample_project / "published" / "vlicl"
    from benchsmith.scoring import SCORERS

    rows = SCORERS.get("vlicl").reference_predictions(published, "clevr")
    lines = [json.dumps({**r, "n_shot": shot}) for r in rows for shot in (0, 2, 4)]
    (tmp_path / "p.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = [
        "score",
        str(published),
        "--config",
        "clevr",
        "--predictions",
        str(tmp_path / "p.jsonl"),
    ]
    assert main([*argv, "--shots", "0", "--shots", "4"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["shots"] == [0, 4] and sorted(report["per_shot"]) == ["0", "4"]


def test_a_folder_swallowed_by_a_list_flag_is_explained(capsys):
    """`--root clevr=/x PLAN_DIR` gives the folder to --root: the error says so and how to
    write it; `--` ends the list."""
    argv = ["audit", "--root", "clevr=/x", "published/vlicl"]
    with pytest.raises(SystemExit):
        build_parser(argv).parse_args(argv)
    err = capsys.readouterr().err
    assert "required: DATASET_DIR" in err and "end the flag's list with --" in err
    with pytest.raises(SystemExit):
        build_parser(["audit"]).parse_args(["audit"])
    assert "end the flag's list" not in capsys.readouterr().err  # no list flag given: no hint
    # PLAN_DIR may be left out, so the folder is read as a --root value: --root says so
    assert main(["publish", "vlicl", "--root", "clevr=/x", "data/vlicl/plan"]) != 0
    assert "put it before --root, or end the list with --" in capsys.readouterr().err
    ended = ["publish", "vlicl", "--root", "clevr=/x", "--", "data/vlicl/plan"]
    args = build_parser(ended).parse_args(ended)
    assert str(args.plan_dir) == "data/vlicl/plan" and args.root == ["clevr=/x"]


STEP_PARSERS = [(" ".join(words), parser) for words, parser in PARSERS
                if words[0] in ("build", "publish")]  # fmt: skip
FIRST_STEPS = {"build mmneedle twins", "build mmneedle plan", "build vlicl plan",
               "build mmiu plan", "build multi ocr", "build multi questions"}  # fmt: skip
NOT_PIPELINE_OUTPUTS = {"build mmiu rehydrate", "build multi elite"}


def test_every_step_reads_its_earlier_step_folder_and_writes_out_alike():
    """The same shape in every family: PLAN_DIR (optional, the pipeline's path) and --out
    (the pipeline's path); no family spells the plan folder --plan any more."""
    wrong = []
    for command, parser in STEP_PARSERS:
        positionals = [a for a in parser._actions if not a.option_strings]
        options = {flag: a for a in parser._actions for flag in a.option_strings}
        if "--plan" in options and options["--plan"].help != argparse.SUPPRESS:
            wrong.append(f"{command}: --plan is a flag (the plan folder is PLAN_DIR)")
        if command not in FIRST_STEPS and command != "build mmiu rehydrate":
            folder = [a for a in positionals if a.metavar in ("PLAN_DIR", "QUESTIONS_DIR")]
            if not folder or folder[0].nargs != "?" or not folder[0].default:
                wrong.append(f"{command}: the earlier step's folder is not an optional PLAN_DIR")
        out = options.get("--out")
        if out is not None and out.required and command not in NOT_PIPELINE_OUTPUTS:
            wrong.append(f"{command}: --out is required (default it to the pipeline's path)")
    assert not wrong, wrong


def test_the_plan_flag_of_0_1_still_works_once_and_warns(capsys):
    from benchsmith.builders.mmneedle.cli import RenderInputs
    from benchsmith.commands.setting_flags import inputs_of

    argv = ["build", "mmneedle", "render", "--plan", "old/plan"]
    inputs = inputs_of(build_parser(argv).parse_args(argv), RenderInputs)
    assert str(inputs.plan_dir) == "old/plan"
    assert "--plan is deprecated; give PLAN_DIR as the argument" in capsys.readouterr().err
    argv = ["build", "mmneedle", "render", "new/plan", "--plan", "old/plan"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "PLAN_DIR was given twice: new/plan and --plan old/plan" in err
