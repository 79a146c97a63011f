"""``benchsmith report``: one self-contained HTML page per dataset, to check a build by eye.

:mod:`.items` reads a config's samples (a spread of items, the gold answers' and categories'
distributions), :mod:`.predictions` a run's verdicts, :mod:`.plots` draws the charts with
matplotlib and :mod:`.page` writes the page (every picture inline, no script, nothing fetched)
with the charts and contact sheets beside it as PNG files. What a family adds, the checks its
build ran, comes through ``Family.report_checks``.
"""
