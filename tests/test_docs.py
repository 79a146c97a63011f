"""The guide: the README stays short and every link in it lands on a page, and the docs site
builds with ``mkdocs build --strict`` (a broken link, an anchor that is gone or a page left out
of the navigation fails it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README_LINES = 250


def test_the_readme_is_a_short_guide_whose_links_land_on_pages():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") < README_LINES
    assert text.startswith("# benchsmith\n\n```bash\npip install -e '.[dev]' && dvc repro")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert len(links) >= 15
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing


def test_every_page_is_in_the_navigation():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav) -> list[str]:
        out = []
        for entry in nav:
            for value in entry.values():
                out += pages(value) if isinstance(value, list) else [value]
        return out

    listed = set(pages(config["nav"]))
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert listed == on_disk


def test_the_docs_site_builds_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(tmp_path / "site")],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    built = {
        p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("*.html")
    }
    assert {"index.html", "families/mmiu/index.html", "audit/index.html"} <= built


def test_the_cli_reference_is_the_parsers_own_help():
    """docs/reference/cli.md is generated from the parsers: a flag or help text changed without
    regenerating it (``python scripts/make_cli_reference.py``) fails here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_cli_reference",
                                                  ROOT / "scripts" / "make_cli_reference.py")  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert module.reference() == committed, "run: python scripts/make_cli_reference.py"
    for command in ("audit", "score", "curate", "predict", "export", "build mmiu plan"):
        assert f"`benchsmith {command}`" in committed
