"""The destination folder of a source fetch: its extraction marker and links to a local copy.

Both COCO and CLEVR fetches leave a marker file recording which verified archives were
extracted, so a rerun is a no-op only when the marker matches (:func:`marker_matches`); or
they link a copy the user already has (:func:`replace_symlink`), swapping the link in
atomically and never replacing a real file or folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError


def marker_matches(marker_path: Path, expected: Mapping[str, Any]) -> bool:
    """True when the marker file holds every key of ``expected`` with the same value."""
    try:
        recorded = json.loads(marker_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(recorded, dict) and all(recorded.get(k) == v for k, v in expected.items())


def replace_symlink(link: Path, target: Path, *, fix: str) -> None:
    """Make ``link`` a symlink to the folder ``target``, replacing an older link atomically.

    ``fix`` is the advice when ``link`` is a real file or folder, which is never replaced.
    """
    if link.exists() and not link.is_symlink():
        raise SourceError(
            f"{link} exists and is not a symlink; refusing to replace it", path=link, fix=fix
        )
    tmp = link.parent / f".{link.name}.tmp-link-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target, target_is_directory=True)
    os.replace(tmp, link)  # atomically replaces an existing link


def link_folder(dest: Path, name: str, target: Path) -> Path:
    """``dest/name`` made a symlink to the folder ``target`` (a source's ``link`` verb: the
    user's copy is used where it is, never copied); ``dest`` is created if needed."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    link = dest / name
    replace_symlink(link, target, fix="remove it or choose another destination folder")
    return link
