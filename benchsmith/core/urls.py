"""URLs as they may be written down: never with the credentials a user put in them.

``http://user:SECRET@host/v1`` or ``...?api_key=SECRET`` work as endpoints, and would then be
copied into ``build_info.json`` (which ``push`` uploads), logs and error messages. Everything
benchsmith writes gets :func:`without_credentials` of a URL; only the HTTP client sees the
original.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_QUERY_KEYS = frozenset({"api_key", "apikey", "key", "token", "access_token", "sig",
                               "signature", "password", "secret", "auth"})  # fmt: skip
HIDDEN = "***"


def without_credentials(url: str | None) -> str | None:
    """``url`` with its user and password dropped and secret-looking query values hidden."""
    if not url:
        return url
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return HIDDEN  # a URL that does not parse is not written down at all
    netloc = host if port is None else f"{host}:{port}"
    if ":" in host:  # an IPv6 literal keeps its brackets
        netloc = f"[{host}]" if port is None else f"[{host}]:{port}"
    query = urlencode(
        [(k, HIDDEN if k.lower() in SECRET_QUERY_KEYS else v)
         for k, v in parse_qsl(parts.query, keep_blank_values=True)],
        safe="*",
    )  # fmt: skip
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
