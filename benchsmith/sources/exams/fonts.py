"""The CJK font that exam pages, figures and rendered tables are drawn with, found and
fingerprinted.

Chinese text needs a CJK font, which Pillow does not ship and a bare machine does not have. So
the font comes with the install: Noto Sans CJK (SIL Open Font License 1.1), from the
``noto-cjk-sans-otc`` wheel, pinned to one release, so every machine draws the sample exam pages
with the same font file, and they come out byte for byte the same (a system font would differ
by distribution and version). ``$BENCHSMITH_CJK_FONT`` names another ``.ttf``/``.otf``/``.ttc``
file instead. From a collection (``.ttc``) the Simplified Chinese face is taken (its name ends
in ``SC``), else the first. The file's sha256 and the face go into what is drawn with it, so a
page drawn with another font is known to be another page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_file

PACKAGE, PACKAGED_FILE = "noto_cjk_sans_otc", "NotoSansCJK-Regular.ttc"
FIX = ("reinstall benchsmith's dependencies (pip install noto-cjk-sans-otc==0.0.1), or set "
       "BENCHSMITH_CJK_FONT to a .ttf/.otf/.ttc file that has Chinese")  # fmt: skip
MAX_FACES = 32


@dataclass(frozen=True)
class CjkFont:
    path: Path
    sha256: str
    face: int  # index in a collection (0 for a single font)
    face_name: str  # family and style as the font names itself, e.g. "Noto Sans CJK SC Regular"

    @property
    def name(self) -> str:
        return self.path.name

    def load(self, size: int):
        from PIL import ImageFont

        return ImageFont.truetype(str(self.path), size, index=self.face)


def packaged_font_path() -> Path | None:
    """The Noto Sans CJK collection installed with benchsmith, or None when it is missing."""
    from importlib.resources import files

    try:
        path = Path(str(files(PACKAGE) / PACKAGED_FILE))
    except ModuleNotFoundError:
        return None
    return path if path.is_file() else None


def simplified_chinese_face(path: Path) -> tuple[int, str]:
    """(index, name) of the collection's face whose family ends in ``SC``, else of face 0."""
    from PIL import ImageFont

    faces = []
    for index in range(MAX_FACES):
        try:
            family, style = ImageFont.truetype(str(path), 12, index=index).getname()
        except OSError as exc:
            if index == 0:
                raise BenchsmithError(f"cannot load the CJK font ({exc})", path=path,
                                      fix=FIX) from exc  # fmt: skip
            break
        faces.append((index, f"{family} {style}", family or ""))
    index, name, _ = next((f for f in faces if f[2].endswith(" SC")), faces[0])
    return index, name


@cache
def cjk_font() -> CjkFont:
    configured = os.environ.get("BENCHSMITH_CJK_FONT")
    if configured:
        path = Path(configured)
        if not path.is_file():
            raise BenchsmithError("BENCHSMITH_CJK_FONT names no file", path=configured, fix=FIX)
    else:
        found = packaged_font_path()
        if found is None:
            raise BenchsmithError(f"the CJK font package {PACKAGE} is not installed", fix=FIX)
        path = found
    face, face_name = simplified_chinese_face(path)
    return CjkFont(path, sha256_file(path), face, face_name)
