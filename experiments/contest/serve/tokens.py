"""Team tokens: shown once, stored as their hash.

A token is 32 random bytes (URL-safe text). Being that random, one pass of SHA-256
is enough to make the stored hash useless to a reader of the database (nothing to
guess), and a lookup by hash costs one index probe; the comparison is constant-time.
The same holds for session ids and form nonces.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets

TOKEN_BYTES = 32
# What a token can look like (token_urlsafe of 32 bytes is 43 characters); anything else is
# refused before hashing, so no odd text reaches a log or the database.
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{20,100}")


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def plausible(token: str | None) -> bool:
    return token is not None and TOKEN_RE.fullmatch(token) is not None


def same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())
