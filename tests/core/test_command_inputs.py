"""A step's inputs are one dataclass: its fields are the flags (positional, required,
repeatable, several values, a switch, a renamed flag), and the step gets a frozen object back."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import FrozenInstanceError, dataclass
from pathlib import Path

import pytest

from benchsmith.commands.setting_flags import add_input_flags, inputs_of
from benchsmith.core.command_inputs import (
    argument,
    declared_inputs,
    json_switch,
    metrics_file,
    params_file,
    root_overrides,
)


@dataclass(frozen=True)
class ToyInputs:
    plan_dir: Path = argument("the plan", positional=True, metavar="PLAN_DIR")
    out: Path = argument("where to write", required=True, metavar="DIR")
    report: Path = argument("optional positional", positional=True, optional=True,
                            default=Path("report.json"))  # fmt: skip
    grids: tuple[int, ...] | None = argument("grid sides", metavar="N")
    samples_per_config: int | None = argument("samples", metavar="N", flag="--samples")
    order: str | None = argument("order", choices=("canonical", "legacy"))
    root: tuple[str, ...] = root_overrides(("coco", "scannet"))
    json: bool = json_switch("summary")
    metrics: Path | None = metrics_file("toy")
    params: Path | None = params_file()
    size: int = argument("questions to draw", default=500, metavar="N")
    plan: Path = argument("plan folder", default=Path("data/plan"), metavar="DIR")


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="toy", exit_on_error=False)
    add_input_flags(made, ToyInputs)
    return made


def test_every_declared_field_is_an_argument_and_comes_back_typed():
    args = parser().parse_args(["plan", "--out", "o", "--grids", "1", "2", "--samples", "5",
                                "--root", "coco=/a", "--root", "scannet=/b", "--json",
                                "--order", "legacy"])  # fmt: skip
    made = inputs_of(args, ToyInputs)
    assert made == ToyInputs(plan_dir=Path("plan"), out=Path("o"), report=Path("report.json"),
                             grids=(1, 2), samples_per_config=5, order="legacy",
                             root=("coco=/a", "scannet=/b"), json=True)  # fmt: skip
    with pytest.raises(FrozenInstanceError):
        made.out = Path("elsewhere")  # type: ignore[misc]
    # defaults: an optional positional keeps its default, a switch is off, a list is empty
    quiet = inputs_of(parser().parse_args(["p", "r.json", "--out", "o"]), ToyInputs)
    assert (quiet.report, quiet.json, quiet.root, quiet.grids) == (Path("r.json"), False, (), None)
    assert (quiet.size, quiet.plan) == (500, Path("data/plan"))  # a flag left out: its default


def test_required_choices_and_types_are_enforced_by_the_parser(capsys):
    strict = argparse.ArgumentParser(prog="toy")
    add_input_flags(strict, ToyInputs)
    for bad in (["plan"], ["plan", "--out", "o", "--order", "random"],
                ["plan", "--out", "o", "--grids", "two"]):  # fmt: skip
        with pytest.raises(SystemExit):
            strict.parse_args(bad)
    err = capsys.readouterr().err
    assert "--out" in err and "invalid choice: 'random'" in err and "invalid int value" in err


def test_the_help_is_the_declaration_s_text():
    text = parser().format_help()
    for name, (_, info) in declared_inputs(ToyInputs).items():
        assert info.help.split(";")[0] in " ".join(text.split()), name
    assert "--samples N" in text and "--samples-per-config" not in text
    assert "--root NAME=DIR" in text and "coco, scannet" in text


def test_a_field_that_needs_a_value_has_no_default_to_hide_its_absence():
    with pytest.raises(TypeError):
        ToyInputs()  # type: ignore[call-arg]  # plan_dir and out must be given


def _step_parsers():
    from benchsmith.builders import FAMILIES

    for family in FAMILIES:
        for step in family.steps:
            yield f"build {family.name} {step.name}", ["build", family.name, step.name], step.inputs
        yield f"publish {family.name}", ["publish", family.name], family.publish_inputs


@pytest.mark.parametrize(("words", "inputs"), [(w, i) for _, w, i in _step_parsers()],
                         ids=[name for name, _, _ in _step_parsers()])  # fmt: skip
def test_every_real_step_gives_its_declared_defaults_for_the_flags_left_out(words, inputs):
    from benchsmith.cli import build_parser

    parser = build_parser([*words, "--help"])
    for word in words:
        parser = next(a for a in parser._actions
                      if isinstance(a, argparse._SubParsersAction)).choices[word]  # fmt: skip
    given = []
    for name, (_, info) in declared_inputs(inputs).items():
        if info.positional and not info.optional:
            given.append("given")
        elif info.required:
            given += [info.flag or "--" + name.replace("_", "-"), "given"]
    made = inputs_of(parser.parse_args(given), inputs)
    for name, (field, _) in declared_inputs(inputs).items():
        if field.default is not dataclasses.MISSING:
            assert getattr(made, name) == field.default, f"{' '.join(words)}: {name}"
