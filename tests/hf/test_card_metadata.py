"""Every published card carries the metadata the Hub validates, parsed by ``huggingface_hub``."""

from __future__ import annotations

import pytest
from hub_api_server import validate_card
from huggingface_hub import DatasetCard

from benchsmith.hf.card import size_category
from benchsmith.hf.reader import read_build_info
from benchsmith.publish.push import HUB_FIELDS

FOLDERS = ["mmneedle", "vlicl", "mmiu", "multi", "curated/mmiu_jigsaw",
           "curated/vlicl_clevr_query", "curated/multi_questions"]  # fmt: skip


@pytest.mark.parametrize("name", FOLDERS)
def test_card_metadata_is_what_the_hub_validates(name, sample_project):
    folder = sample_project / "published" / name
    text = (folder / "README.md").read_text("utf-8")
    data = DatasetCard(text).data.to_dict()
    assert all(data.get(k) for k in HUB_FIELDS), [k for k in HUB_FIELDS if not data.get(k)]
    assert validate_card(text) == []
    info = read_build_info(folder)
    examples = sum(s["num_examples"] for c in info["configs"].values() for s in c.values())
    if not name.startswith("multi"):  # MULTI counts its selected questions
        assert data["size_categories"] == [size_category(examples)]
    if data["license"] == "other":
        assert data["license_name"] and (folder / data["license_link"]).is_file()
    names = [c["config_name"] for c in data["configs"]]
    assert names == [i["config_name"] for i in data["dataset_info"]] and set(names) == set(
        info["configs"])  # fmt: skip
    for config in data["configs"]:
        for entry in config["data_files"]:
            paths = [entry["path"]] if isinstance(entry["path"], str) else entry["path"]
            assert all(list(folder.glob(p)) for p in paths), (config["config_name"], paths)


def test_size_category_buckets():
    assert [size_category(n) for n in (0, 999, 1000, 10_000, 210_000, 10**9)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "n>1B"]  # fmt: skip


CARDS = {
    "valid": "---\nlicense: cc-by-4.0\nconfigs:\n- config_name: a\n  data_files: a/*.parquet\n---\n\n# A\n",
    "not a mapping": "---\n- license\n- cc-by-4.0\n---\n\n# A\n",
    "broken yaml": "---\nlicense: [cc-by-4.0\n---\n\n# A\n",
    "a tab in yaml": "---\nlicense:\tmit\n\tpretty_name: x\n---\n",
    "empty front matter": "---\n\n---\n\n# A\n",
}


@pytest.mark.parametrize("name", CARDS)
def test_check_card_accepts_and_refuses_what_the_hubs_card_class_does(name):
    """``check_card`` parses with libyaml; it must agree with ``DatasetCard`` on every card."""
    import yaml

    from benchsmith.hf.card import check_card

    text = CARDS[name]
    try:
        DatasetCard(text)
        hub_error = None
    except (ValueError, yaml.YAMLError, TypeError, KeyError) as exc:
        hub_error = type(exc)
    if hub_error is None:
        check_card(text)
    else:
        with pytest.raises(hub_error):
            check_card(text)
    assert (hub_error is None) == (name in {"valid", "empty front matter"})
