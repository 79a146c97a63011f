"""One declaration per setting: the schema, the checks and the settings object are read from a
field declared with ``setting``."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.schema import Block, ListOf, Value, check_document
from benchsmith.core.settings import (
    check_settings,
    declared,
    output_identity,
    setting,
    settings_block,
    settings_from,
)


@dataclass(frozen=True)
class ToySettings:
    """A toy step's knobs."""

    quality: int = setting(75, "how good", minimum=1, maximum=100)
    filter: str = setting("box", "which filter", choices=("box", "bicubic"))
    angle: float = setting(15.0, "degrees", minimum=0.0)
    gap: float | None = setting(None, "optional gap", minimum=1.0)
    sizes: tuple[int, ...] = setting((1, 2), "sizes")
    workers: int = setting(2, "processes", minimum=1, shapes_output=False, flag=False)
    extra: dict = field(default_factory=dict)  # not a setting

    def __post_init__(self) -> None:
        check_settings(self, "toy.block")


def test_the_schema_is_read_from_the_declaration():
    block = settings_block(ToySettings)
    assert isinstance(block, Block) and block.doc == "A toy step's knobs."
    assert list(block.fields) == ["quality", "filter", "angle", "gap", "sizes", "workers"]
    assert block.fields["quality"] == Value("int", minimum=1, maximum=100)
    assert block.fields["filter"] == Value("str", choices=("box", "bicubic"))
    assert block.fields["gap"] == Value("float", minimum=1.0, nullable=True)
    assert isinstance(block.fields["sizes"], ListOf)
    assert "extra" not in declared(ToySettings)
    # the params check rejects what the declaration forbids, naming the key
    with pytest.raises(BenchsmithError) as error:
        check_document(Block({"toy": block}), {"toy": {"quality": 0, "filtr": "box"}}, "p.yaml")
    text = str(error.value)
    assert "toy.quality" in text and "toy.filtr" in text and "filter" in text


def test_settings_come_from_the_block_then_the_flags_given():
    made = settings_from(ToySettings, {"quality": 60, "sizes": [4, 8]}, {"filter": None, "gap": 2})
    assert (made.quality, made.filter, made.gap, made.sizes) == (60, "box", 2.0, (4, 8))
    assert isinstance(made.gap, float)  # 2 from YAML or a flag is the float setting 2.0
    assert settings_from(ToySettings, None) == ToySettings()
    # an integer written for a float setting records and hashes as the default does
    assert settings_from(ToySettings, {"angle": 15}).angle == 15.0
    assert repr(settings_from(ToySettings, {"angle": 15})) == repr(ToySettings())


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"quality": 101}, "toy.block.quality must be an integer from 1 to 100, got 101"),
        ({"filter": "lanczos"}, "unknown filter 'lanczos' (toy.block.filter)"),
        ({"gap": 0.5}, "toy.block.gap must be a number >= 1 or null, got 0.5"),
        ({"angle": -1.0}, "toy.block.angle must be a number >= 0, got -1.0"),
    ],
)
def test_a_bad_value_names_its_key_and_what_is_allowed(values, message):
    with pytest.raises(BenchsmithError) as error:
        ToySettings(**values)
    assert str(error.value).splitlines()[0] == message


def test_the_output_identity_leaves_out_where_the_work_runs():
    identity = output_identity(ToySettings())
    assert "workers" not in identity and identity["quality"] == 75
    assert list(identity) == ["quality", "filter", "angle", "gap", "sizes"]


def test_a_setting_under_sizes_profile_is_one_block_per_profile_read_for_the_one_that_runs():
    """``under="sizes.{profile}"``: the schema nests it, ``settings_from`` reads the running
    profile's value (the declared default: the full benchmark's), and a bad value names the
    key where it sits."""
    from dataclasses import dataclass

    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.schema import BlockOf
    from benchsmith.core.settings import (
        check_settings,
        key_of,
        setting,
        settings_block,
        settings_from,
    )

    @dataclass(frozen=True)
    class Sized:
        order: str = setting("canonical", "order", choices=("canonical", "legacy"))
        pool_size: int = setting(10_000, "pool", minimum=1, under="sizes.{profile}")
        items: int = setting(200, "items", minimum=1, under="sizes.{profile}",
                             profile_defaults={"sample": 12})  # fmt: skip

        def __post_init__(self) -> None:
            check_settings(self, "toy")

    block = settings_block(Sized)
    assert set(block.fields) == {"order", "sizes"}
    assert isinstance(block.fields["sizes"], BlockOf)
    assert block.fields["sizes"].keys == ("sample", "full")
    params = {"order": "legacy", "sizes": {"sample": {"pool_size": 20}}}
    assert settings_from(Sized, params, profile="sample") == Sized("legacy", 20, 12)
    assert settings_from(Sized, params, profile="full") == Sized("legacy", 10_000, 200)
    # a profile's own default stands in for its absent key; the block's value wins over it
    params["sizes"]["sample"]["items"] = 30
    assert settings_from(Sized, params, profile="sample").items == 30
    assert settings_from(Sized, params, {"pool_size": 7}, profile="sample").pool_size == 7
    assert key_of(Sized, "pool_size", "sample") == "sizes.sample.pool_size"
    with pytest.raises(BenchsmithError, match=r"toy\.sizes\.<profile>\.pool_size must be"):
        settings_from(Sized, {"sizes": {"full": {"pool_size": 0}}})


def test_a_source_folder_left_null_is_the_declared_one():
    """``vlicl.sources.miniimagenet: null`` reads the declared folder (no second default in
    the step); a folder whose declared default is null stays null."""
    from pathlib import Path

    from benchsmith.builders.vlicl.config import VliclSourceFolders
    from benchsmith.core.settings import settings_from

    folders = settings_from(VliclSourceFolders, {"miniimagenet": None, "clevr": "elsewhere"})
    assert folders.miniimagenet == Path("data/sources/miniimagenet")
    assert folders.clevr == Path("elsewhere") and folders.font is None
