"""The contracts every registered family, stage and source keeps, checked the same way for all.

Families: the sample profile's pipeline for the family (its stages in ``dvc.yaml`` and the
source stages they read) builds and publishes it; ``load_dataset`` loads every config offline;
the audit passes for one row of every config with row ids; reference predictions (the gold
answers, in the family scorer's format) score 1.0 and empty answers score 0.0 on every scored
config. Stages: every reason code is explained in the curated card, every setting is spelled
out in ``params.yaml``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import datasets
import pytest
import yaml
from card_markdown import card_tables
from huggingface_hub import DatasetCard
from project_fixtures import ROOT, family_stages, project_params

from benchsmith.builders import FAMILIES
from benchsmith.cli import main
from benchsmith.commands._common import dataset_kind, sample_configs
from benchsmith.core.errors import BenchsmithError
from benchsmith.hf.reader import read_columns
from benchsmith.publish.audit import audit_dataset
from benchsmith.scoring import SCORERS
from benchsmith.stages import STAGES


@pytest.fixture(scope="module")
def published(sample_project) -> dict[str, Path]:
    """Every family built and published from sample sources by its own pipeline stages."""
    params = project_params(sample_project)
    return {f.name: sample_project / f.default_out(params) for f in FAMILIES}


def test_every_family_has_a_pipeline_and_a_scorer():
    assert FAMILIES.names() == SCORERS.names()
    for family in FAMILIES:
        stages = family_stages(family.name)
        assert any(s.startswith(f"{family.name}_") for s in stages), family.name
        assert f"{family.name}_publish" in stages
        assert family.steps and all(step.description for step in family.steps)


@pytest.mark.parametrize("name", FAMILIES.names())
def test_every_config_loads_offline(published, name):
    folder = published[name]
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    assert info["family"] == name and info["configs"]
    for config, splits in info["configs"].items():
        loaded = datasets.load_dataset(str(folder), config)  # every split of the config at once
        assert set(loaded) == set(splits), config
        for split, written in splits.items():
            assert loaded[split].num_rows == written["num_examples"], (config, split)
            assert "provenance" in loaded[split].column_names


@pytest.mark.parametrize("name", FAMILIES.names())
def test_every_card_renders_its_tables(published, name):
    """Every table of the card renders as a table (no pipe text split off by a blank line),
    and every published config appears in the card's config table."""
    folder = published[name]
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    tables = card_tables((folder / "README.md").read_text(encoding="utf-8"))
    cells = {cell.strip("`") for table in tables for row in table for cell in row}
    assert set(info["configs"]) <= cells, set(info["configs"]) - cells


def card_metadata(folder: Path) -> dict:
    return DatasetCard.load(folder / "README.md").data.to_dict()


@pytest.mark.parametrize("name", FAMILIES.names())
def test_every_card_links_its_licence_terms(published, name):
    """``license: other`` cards link LICENSE.md (the Hub's ``license_link``), which holds the
    same terms as the card's Licence section; no legacy field, no link to a page that is not
    there."""
    folder = published[name]
    meta = card_metadata(folder)
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert meta["license"] == "other" and meta["license_name"]
    assert meta["license_link"] == "LICENSE.md" and "license_details" not in meta
    terms = (folder / "LICENSE.md").read_text(encoding="utf-8").split("\n\n", 1)[1]
    assert terms.strip() and terms in card.split("## Licence", 1)[1]
    assert meta["language"] and meta["task_categories"] and meta["source_datasets"]
    assert "pypi.org" not in card
    assert f"{name}-vX.Y.Z" in card  # the release tag pattern the README uses


@pytest.mark.parametrize("name", FAMILIES.names())
def test_a_curated_subset_carries_its_source_card_metadata(published, name, tmp_path):
    """Every family has a curation target in params.yaml; curating it keeps the card's facts."""
    folder = published[name]
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    default_out = FAMILIES.get(name).default_out(params)
    target = next(t for t in params["curate"]["targets"] if Path(t["dataset"]) == default_out)
    out = tmp_path / "curated"
    assert main(["curate", str(folder), "--config", target["config"], "--split",
                 target.get("split", "test"), "--out", str(out), "--no-image-check"]) == 0  # fmt: skip
    source, meta = card_metadata(folder), card_metadata(out)
    for key in ("license", "license_name", "language", "task_categories"):
        assert meta[key] == source[key], key
    assert meta["license_link"] == "LICENSE.md"
    terms = (folder / "LICENSE.md").read_text().split("\n\n", 1)[1]
    assert (out / "LICENSE.md").read_text().split("\n\n", 1)[1] == terms
    info = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
    assert meta["source_datasets"] == [*source["source_datasets"], info["source"]["name"]]
    assert "curated" in meta["tags"] and set(source["tags"]) <= set(meta["tags"])
    card = (out / "README.md").read_text(encoding="utf-8")
    card_tables(card)
    assert "pypi.org" not in card


@pytest.mark.parametrize("name", FAMILIES.names())
def test_one_row_of_every_config_audits_clean(published, name, monkeypatch):
    """One audit asks for the first row id of every config (ids match across configs; read
    with the audit's own reader: that `load_dataset` loads them is the test above)."""
    monkeypatch.chdir(published[name].parents[1])  # source roots are recorded as given
    family = FAMILIES.get(name)
    folder = published[name]
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    auditor = family.auditor(folder, info, {})
    ids = set()
    for config, splits in info["configs"].items():
        column = auditor.id_column(config)
        if column is not None:
            split = sorted(splits)[0]
            ids.add(str(read_columns(folder, config, split, [column])[column][0].as_py()))
    assert ids
    report = audit_dataset(folder, family, ids=sorted(ids))
    assert report.ok, report.render()
    assert report.rows_checked >= len(ids)
    assert report.count("rows", "row(s) equal their re-derivation in every column") >= len(ids)


@pytest.mark.parametrize("name", FAMILIES.names())
def test_reference_predictions_score_one_and_empty_answers_zero(published, name, tmp_path):
    scorer = SCORERS.get(name)
    folder = published[name]
    info = json.loads((folder / "build_info.json").read_text(encoding="utf-8"))
    kind, _ = dataset_kind(folder)
    configs = sample_configs(kind, info, folder)
    scored = [c for c in configs if scorer.unscorable(c) is None]  # what `score` accepts
    assert scored
    for config in set(configs) - set(scored):  # refused, with the reason, before any file
        with pytest.raises(BenchsmithError, match=re.escape(scorer.unscorable(config))):
            scorer.score_file(folder, config, tmp_path / "absent.jsonl")
    for config in scored:
        for response, expected in ((None, 1.0), ("", 0.0)):
            rows = scorer.reference_predictions(folder, config, response)
            path = tmp_path / f"{config}-{expected}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            report = scorer.score_file(folder, config, path)
            assert scorer.headline_value(report) == expected, (config, response)


def test_every_stage_reason_is_explained_in_the_curated_card(published, tmp_path):
    out = tmp_path / "curated"
    assert main(["curate", str(published["vlicl"]), "--config", "clevr", "--split", "query",
                 "--out", str(out)]) == 0  # fmt: skip
    card = (out / "README.md").read_text(encoding="utf-8")
    card_tables(card)
    for stage in STAGES:
        for code, meaning in stage.reasons.items():
            assert f"`{code}`" in card and meaning in card, (stage.name, code)


def test_every_stage_setting_is_in_params_yaml():
    section = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["curate"]
    for stage in STAGES:
        block = section if stage.params_key is None else section[stage.params_key]
        names = {f.name for f in dataclasses.fields(stage.settings_type)}
        assert names <= set(block), (stage.name, names - set(block))
        for flag in stage.flags:
            assert flag.field in names, (stage.name, flag.flag)
