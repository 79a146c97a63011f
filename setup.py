"""Ship the root ``cards/`` folder inside the wheel as the package ``benchsmith.cards``.

The project's layout keeps card templates at the root (they are data, like ``annotations/``),
but a card must render from a plain ``pip install`` too, so the folder is mapped into the
package namespace here; everything else is configured in ``pyproject.toml``.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["benchsmith", "benchsmith.*"]), "benchsmith.cards"],
    package_dir={"benchsmith.cards": "cards"},
    package_data={"benchsmith": ["py.typed"], "benchsmith.cards": ["*.j2"]},
)
