"""A step's declared settings are its flags, its params schema, its shipped params and its
params reference, all from one declaration; the step gets the settings object."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import pytest
import yaml

from benchsmith.builders import FAMILIES
from benchsmith.cli import build_parser, main
from benchsmith.commands.params_check import params_schema
from benchsmith.commands.setting_flags import add_setting_flags, settings_of
from benchsmith.core.params import section
from benchsmith.core.settings import declared, key_of, settings_block, settings_from
from benchsmith.family.base import StepSettings

ROOT = Path(__file__).resolve().parents[2]


def declared_steps() -> list[tuple[str, str, StepSettings]]:
    return [(family.name, step.name, settings) for family in FAMILIES
            for step in family.steps for settings in step.all_settings]  # fmt: skip


def held_to_its_declaration(block: tuple[str, ...], kind: type) -> None:
    """The params check reads the declaration, and the shipped ``params.yaml`` holds every
    declared key at its default (a key under ``sizes.{profile}``: the full profile's)."""
    node = params_schema(scope=(block[0],))
    for key in block:
        node = node.fields[key]
    for key, sub in settings_block(kind).fields.items():
        assert node.fields[key] == sub, f"{'.'.join(block)}.{key}"
    if len(block) > 1:  # a sub-block holds its declaration alone (a family's top holds more)
        assert node == settings_block(kind)
    shipped = section(yaml.safe_load((ROOT / "params.yaml").read_text("utf-8")), *block)
    for name, (field, _) in declared(kind).items():
        value: object = shipped
        for part in key_of(kind, name, "full").split("."):
            assert isinstance(value, dict) and part in value, (
                f"params.yaml lacks {'.'.join(block)}.{key_of(kind, name, 'full')}"
            )
            value = value[part]
        default = list(field.default) if isinstance(field.default, tuple) else field.default
        default = str(default) if isinstance(default, Path) else default  # YAML holds a string
        assert value == default, f"params.yaml's {name} is not the declared default"


def test_a_family_declares_at_least_one_step_s_settings():
    assert ("mmneedle", "render") in {(f, s) for f, s, _ in declared_steps()}


@pytest.mark.parametrize(("family", "step", "settings"), declared_steps())
def test_one_declaration_is_the_schema_the_flags_and_the_shipped_params(family, step, settings):
    held_to_its_declaration(settings.block, settings.type)
    parser = build_parser(["build", family, step, "--help"])
    words = ["build", family, step]
    for word in words:  # down to the step's own parser
        parser = next(a for a in parser._actions
                      if isinstance(a, argparse._SubParsersAction)).choices[word]  # fmt: skip
    flags = {o for a in parser._actions for o in a.option_strings}
    for name, (_, info) in declared(settings.type).items():
        read_here = settings.only is None or name in settings.only
        assert ("--" + name.replace("_", "-") in flags) == (info.flag and read_here), name


def test_flags_override_the_params_block_and_bad_values_are_one_clear_error(tmp_path, capsys):
    from benchsmith.builders.mmneedle.config import RenderConfig

    settings = StepSettings(RenderConfig, ("mmneedle", "render"))
    params = tmp_path / "params.yaml"
    params.write_text("mmneedle:\n  render:\n    jpeg_quality: 60\n    workers: 3\n")
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=Path)
    add_setting_flags(parser, settings)
    args = parser.parse_args(["--params", str(params), "--workers", "1", "--reducing-gap", "2"])
    made = settings_of(args, settings)
    assert (made.jpeg_quality, made.workers, made.reducing_gap, made.cell_size) == (60, 1, 2.0, 256)
    with pytest.raises(SystemExit):  # argparse refuses a filter the declaration does not allow
        parser.parse_args(["--resample", "fancy"])
    assert "invalid choice: 'fancy'" in capsys.readouterr().err
    # a value out of range through the real command: exit 2, the key and what is allowed
    code = main(["build", "mmneedle", "render", str(tmp_path), "--out",
                 str(tmp_path / "out"), "--params", str(params), "--jpeg-quality", "0"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "mmneedle.render.jpeg_quality must be an integer from 1 to 100" in err
    assert not (tmp_path / "out").exists()


def test_an_older_flag_name_still_sets_its_setting(tmp_path):
    from benchsmith.builders.vlicl.config import LeakageConfig

    settings = StepSettings(LeakageConfig, ("vlicl", "leakage"))
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=Path)
    add_setting_flags(parser, settings)
    (tmp_path / "params.yaml").write_text("vlicl:\n  leakage:\n    image_threshold: 6\n")
    base = ["--params", str(tmp_path / "params.yaml")]
    assert settings_of(parser.parse_args(base), settings).image_threshold == 6
    for flag in ("--threshold", "--image-threshold"):
        assert settings_of(parser.parse_args([*base, flag, "9"]), settings).image_threshold == 9


def test_the_params_reference_is_the_declarations_own_text():
    spec = importlib.util.spec_from_file_location(
        "make_params_reference", ROOT / "scripts" / "make_params_reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "params.md").read_text(encoding="utf-8")
    assert module.rendered(page) == page, "run: python scripts/make_params_reference.py"
    for _, _, settings in declared_steps():
        block = ".".join(settings.block)
        assert f"<!-- settings: {block} -->" in page
        for name in declared(settings.type):
            assert f"| `{block}.{key_of(settings.type, name)}` |" in page
    with pytest.raises(SystemExit, match="no step declares settings block 'nope.block'"):
        module.rendered("<!-- settings: nope.block -->\n<!-- end settings -->")


def test_a_list_setting_takes_several_values_each_held_to_the_choices(tmp_path, capsys):
    """``mmiu.shortcuts.allow``: several tasks after one flag, or a list in ``params.yaml``;
    a task the declaration does not name is refused either way, naming the key."""
    from benchsmith.builders.mmiu.config import ShortcutGate

    settings = StepSettings(ShortcutGate, ("mmiu", "shortcuts"))
    parser = argparse.ArgumentParser()
    parser.add_argument("--params", type=Path)
    add_setting_flags(parser, settings)
    params = tmp_path / "params.yaml"
    params.write_text("mmiu:\n  shortcuts:\n    allow: [jigsaw_puzzle_solving]\n    max_gain: 0\n")
    base = ["--params", str(params)]
    made = settings_of(parser.parse_args(base), settings)
    assert made.allow == ("jigsaw_puzzle_solving",) and made.max_gain == 0.0
    given = parser.parse_args([*base, "--allow", "3d_depth_estimation", "3d_object_detection"])
    assert settings_of(given, settings).allow == ("3d_depth_estimation", "3d_object_detection")
    with pytest.raises(SystemExit):
        parser.parse_args(["--allow", "3d_depth_estimation", "jigsaw"])
    assert "invalid choice: 'jigsaw'" in capsys.readouterr().err
    params.write_text("mmiu:\n  shortcuts:\n    allow: [jigsaw]\n")
    code = main(["build", "mmiu", "check", str(tmp_path), "--params", str(params)])
    err = capsys.readouterr().err
    assert code == 2 and "mmiu.shortcuts.allow" in err and "jigsaw_puzzle_solving" in err


@pytest.mark.parametrize("family", FAMILIES.names())
def test_publish_settings_are_declared_once_and_the_family_gets_objects(family, tmp_path):
    """``<family>.publish``: the schema, the shipped params, the flags and the object the
    family's ``publication`` receives all come from ``Family.publish_settings``; its inputs
    (the built folders) from ``Family.publish_inputs``."""
    from benchsmith.commands.setting_flags import inputs_of
    from benchsmith.core.settings import settings_from
    from benchsmith.family.publish_settings import PublishSettings

    kind = FAMILIES.get(family)
    assert issubclass(kind.publish_settings, PublishSettings)
    node = params_schema(scope=(family,)).fields[family].fields["publish"]
    assert node == settings_block(kind.publish_settings)
    shipped = section(yaml.safe_load((ROOT / "params.yaml").read_text("utf-8")), family, "publish")
    made = settings_from(kind.publish_settings, shipped)
    for name, (field, _) in declared(kind.publish_settings).items():
        if name == "out":  # the shipped folder is where the default (null) writes
            assert (
                kind.out_of(made)
                == kind.out_of(kind.publish_settings())
                == Path("published", family)
            )
        else:
            assert getattr(made, name) == field.default, f"{family}.publish.{name}"
    parser = build_parser(["publish", family, "--help"])
    for word in ("publish", family):
        parser = next(a for a in parser._actions
                      if isinstance(a, argparse._SubParsersAction)).choices[word]  # fmt: skip
    flags = {o for a in parser._actions for o in a.option_strings}
    assert {"--out", "--max-shard-mb", "--version", "--params"} <= flags
    for name in declared(kind.publish_settings):
        assert "--" + name.replace("_", "-") in flags
    params = tmp_path / "params.yaml"
    params.write_text(f"{family}:\n  publish:\n    max_shard_mb: 8\n")
    positional = [str(tmp_path)] if any(not a.option_strings and a.dest != "help"
                                        for a in parser._actions) else []  # fmt: skip
    needed = [x for a in parser._actions if a.required and a.option_strings
              for x in (a.option_strings[0], str(tmp_path))]  # fmt: skip
    args = parser.parse_args([*positional, *needed, "--params", str(params), "--out", "x"])
    given = settings_of(args, StepSettings(kind.publish_settings, (family, "publish")))
    assert (given.max_shard_mb, kind.out_of(given)) == (8.0, Path("x"))
    inputs = inputs_of(args, kind.publish_inputs)
    assert type(inputs) is kind.publish_inputs and not isinstance(inputs, argparse.Namespace)


def declared_blocks() -> list[tuple[tuple[str, ...], type]]:
    return [(block, kind) for family in FAMILIES
            for block, kind in family.declared_settings().items() if block[-1] != "publish"]  # fmt: skip


@pytest.mark.parametrize(("block", "kind"), declared_blocks(),
                         ids=[".".join(b) for b, _ in declared_blocks()])  # fmt: skip
def test_every_declared_block_is_its_schema_its_shipped_params_and_its_reference(block, kind):
    """Blocks without a step of their own (MULTI's cleaning, near_duplicates, selection,
    elite) are held to the same: one declaration, the schema, params.yaml and the docs."""
    held_to_its_declaration(block, kind)
    shipped = section(yaml.safe_load((ROOT / "params.yaml").read_text("utf-8")), *block)
    made = settings_from(kind, shipped)  # the full profile's sizes
    for name, (field, _) in declared(kind).items():
        assert getattr(made, name) == field.default, f"{'.'.join(block)}.{name}"
    page = (ROOT / "docs" / "params.md").read_text(encoding="utf-8")
    assert f"<!-- settings: {'.'.join(block)} -->" in page


def test_a_value_the_declaration_refuses_is_one_clear_error_naming_the_key(tmp_path, capsys):
    params = tmp_path / "params.yaml"
    params.write_text("multi:\n  selection:\n    h_form: cubic\n  near_duplicates:\n    ngram: 9\n")
    code = main(["build", "multi", "select", str(tmp_path), "--params", str(params),
                 "--out", str(tmp_path / "plan")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "multi.selection.h_form" in err and "harmonic" in err
    assert "multi.near_duplicates.ngram" in err and not (tmp_path / "plan").exists()


def test_the_top_level_keys_and_every_source_option_are_declared_once():
    """profile, version, seed, images and archives (on their dataclasses) and each source's
    options (``Option``) are the schema, the shipped params.yaml and the params reference."""
    from benchsmith.commands.params_check import TOP_LEVEL_BLOCKS
    from benchsmith.sources import SOURCES

    schema = params_schema()
    shipped = yaml.safe_load((ROOT / "params.yaml").read_text("utf-8"))
    page = (ROOT / "docs" / "params.md").read_text(encoding="utf-8")
    for block, kind in TOP_LEVEL_BLOCKS.items():
        node = schema.fields[block[0]] if block else schema
        for name, (field, _) in declared(kind).items():
            key = ".".join((*block, name))
            assert node.fields[name] == settings_block(kind).fields[name], key
            assert section(shipped, *block)[name] == field.default, f"params.yaml's {key}"
            assert f"| `{key}` |" in page, key
    sources = params_schema(scope=tuple(f"sources.{n}" for n in SOURCES.names())).fields["sources"]
    for name in SOURCES.names():
        source = SOURCES.get(name)
        assert sources.fields[name] == source.params_schema()
        for profile, options in (("sample", source.sample_options), ("full", source.fetch_options)):
            for option in options:
                assert f"| `sources.{name}.{profile}.{option.name}` |" in page
        assert f"| `sources.{name}.full.local_dir` |" in page
