"""Credentials kept out of everything camab-rag says (:class:`Secrets`)."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+")
# header and query parameter names that carry a credential (``code``: Azure Functions')
_SENSITIVE_HEADER = re.compile(
    r"(?i)auth|key|token|secret|cookie|pass|credential|sig|session|^code$"
)
_SHORTEST = 4  # a shorter "secret" would mask ordinary words


def public_url(url: str) -> str:
    """``url`` as it may be shown: no user-info, no fragment, credential query values masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode(
        [(k, MASK if carries_credential(k) else v) for k, v in query_parameters(url)],
        safe="*",
    )
    return urlunsplit((parts.scheme, host, parts.path, query, ""))


_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/?#@\s]*@")


def shown_url(value: object) -> str:
    """``value`` (a URL) quoted as :func:`public_url` shows it; a non-URL by its type alone."""
    if not isinstance(value, str):
        return f"a {type(value).__name__}"
    return repr(public_url(_USERINFO.sub(lambda m: f"{m.group(1) or ''}{MASK}@", value)))


def carries_credential(name: str) -> bool:
    return bool(_SENSITIVE_HEADER.search(name))


def query_parameters(url: str) -> list[tuple[str, str]]:
    try:
        return parse_qsl(urlsplit(url).query, keep_blank_values=True)
    except ValueError:
        return []


def url_credentials(url: str) -> list[str]:
    """The credentials ``url`` carries, in every form a server may echo them (user-info as
    written, decoded, re-encoded, as a Basic token; credential-looking query values)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    query = [v for k, v in query_parameters(url) if carries_credential(k)]
    if "@" not in parts.netloc:
        return query
    userinfo = parts.netloc.rsplit("@", 1)[0]
    user, _, password = userinfo.partition(":")
    user, password = unquote(user), unquote(password)
    forms = [*_spellings(userinfo), *_spellings(user), *_spellings(password)]
    return [*dict.fromkeys(forms + _basic_tokens(user, password)), *query]


def _spellings(value: str) -> list[str]:
    """``value`` as written, percent-decoded and percent-encoded (both hex cases)."""
    decoded = unquote(value)
    encoded = [quote(decoded, safe=""), quote(decoded), quote_plus(decoded)]
    lower = [re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), form) for form in encoded]
    return [form for form in dict.fromkeys([value, decoded, *encoded, *lower]) if form]


def _basic_tokens(user: str, password: str) -> list[str]:
    """The ``Authorization: Basic`` token of a URL's user-info, with and without padding."""
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    return [token, token.rstrip("=")]


class Secrets:
    """The credentials one scorer holds (``None`` and empty ones ignored), to mask in any text."""

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        kept = {v for v in values if isinstance(v, str) and len(v) >= _SHORTEST}
        self._values = sorted(kept, key=len, reverse=True)  # longest first: no partial masks

    @classmethod
    def of(
        cls, url: str, api_key: str | None = None, headers: Mapping[str, str] | None = None
    ) -> Secrets:
        """The secrets of a server connection: its key, URL credentials and credential headers."""
        header_values = [
            value
            for name, value in (headers or {}).items()
            if carries_credential(name) and isinstance(value, str)
        ]
        for value in list(header_values):  # "Bearer <token>": the token alone too
            header_values.extend(value.split()[1:])
        return cls([api_key, *url_credentials(url), *header_values])

    def __bool__(self) -> bool:
        return bool(self._values)

    def __repr__(self) -> str:
        return f"Secrets(<{len(self._values)} hidden>)"

    def clean(self, text: str) -> str:
        """``text`` with every secret, and any ``Bearer``/``Basic`` credential, masked."""
        for value in self._values:
            text = text.replace(value, MASK)
        return _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
