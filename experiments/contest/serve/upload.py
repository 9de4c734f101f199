"""Reading an upload of the two files: streamed, bounded, and refused before anything is kept.

A request body is read part by part, never whole: a body that says it is over
MAX_BODY is refused before a byte of it is read, and one that turns out longer (a
chunked body says nothing) is cut at the first part over its limit. Each part must be
one of the fields expected; a file's name, as the browser or curl sent it, is checked
(UTF-8, no path, no control character) and then thrown away: the files are stored
as controller.hh and controller.cc whatever they were called, so no name from a
request ever reaches the file system.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.multipart import BodyPartReader

from schemes.submission.intake import MAX_SOURCE_BYTES, SOURCE_FILES
from schemes.submission.untrusted_text import reason as shown

FIELD_BYTES = 256  # a text field (a form's nonce)
MAX_PARTS = 4
# The two files at their limit, a nonce, and the multipart framing around them.
MAX_BODY = 2 * MAX_SOURCE_BYTES + 64 * 1024
NAME_BYTES = 255
CHUNK = 64 * 1024
_BAD_NAME = re.compile("[\x00-\x1f\x7f-\x9f/\\\\\ufffd\ud800-\udfff]")


class UploadRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Upload:
    files: dict[str, bytes] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)


def name_refusal(raw: str | None) -> str | None:
    """Why a sent file name is refused, or None."""
    if raw is None or raw == "":
        return "a file was sent without a name"
    if "\ufffd" in raw or any("\ud800" <= c <= "\udfff" for c in raw):
        return "a file's name is not UTF-8"
    lowered = raw.lower()
    if any(c in lowered for c in ("/", "\\", "%2f", "%5c")) or raw in (".", ".."):
        return "a file's name holds a path: send the file itself (controller.hh, controller.cc)"
    if _BAD_NAME.search(raw):
        return "a file's name holds a control character"
    if len(raw.encode("utf-8", "surrogatepass")) > NAME_BYTES:
        return f"a file's name is longer than {NAME_BYTES} bytes"
    return None


async def read_upload(request: web.Request, text_fields: tuple[str, ...] = ()) -> Upload:
    """The two files (and `text_fields`) of a multipart body, or UploadRefused."""
    length = request.content_length
    if length is not None and length > MAX_BODY:
        raise UploadRefused(413, f"the body is {length} bytes: a submission is at most "
                            f"{MAX_BODY} (two files of at most {MAX_SOURCE_BYTES} bytes)")
    if not request.content_type.startswith("multipart/form-data"):
        raise UploadRefused(415, "send multipart/form-data with the fields controller.hh and "
                            "controller.cc (curl -F controller.hh=@... -F controller.cc=@...)")
    try:
        reader = await request.multipart()
    except (ValueError, AssertionError) as e:
        raise UploadRefused(400, f"not a multipart body: {_said(e)}") from None
    got = Upload()
    parts = 0
    while True:
        try:
            part = await reader.next()
        except (ValueError, HttpProcessingError) as e:
            raise UploadRefused(400, "a malformed multipart body (a part's header holds a "
                                f"control character, or is cut): {_said(e)}") from None
        if part is None:
            break
        if not isinstance(part, BodyPartReader):
            raise UploadRefused(400, "a nested multipart body is not taken")
        parts += 1
        if parts > MAX_PARTS:
            raise UploadRefused(400, f"more than {MAX_PARTS} parts")
        name = part.name
        if part.headers.get("Content-Transfer-Encoding") or part.headers.get("Content-Encoding"):
            raise UploadRefused(400, "an encoded part is not taken: send the files as they are")
        disposition = part.headers.get("Content-Disposition", "")
        if any("\ud800" <= c <= "\udfff" for c in disposition):
            raise UploadRefused(400, "a file's name is not UTF-8")
        if name in SOURCE_FILES:
            if name in got.files:
                raise UploadRefused(400, f"{name} was sent twice")
            why = name_refusal(part.filename)
            if why:
                raise UploadRefused(400, why)
            got.files[name] = await _bounded(part, MAX_SOURCE_BYTES, name, 413)
        elif name in text_fields:
            if name in got.fields:
                raise UploadRefused(400, f"{name} was sent twice")
            raw = await _bounded(part, FIELD_BYTES, name, 400)
            try:
                got.fields[name] = raw.decode("ascii")
            except UnicodeDecodeError:
                raise UploadRefused(400, f"{name} is not plain text") from None
        else:
            raise UploadRefused(400, "unexpected field: send only controller.hh and "
                                "controller.cc" + (" and " + ", ".join(text_fields)
                                                   if text_fields else ""))
    for wanted in SOURCE_FILES:
        if wanted not in got.files:
            raise UploadRefused(400, f"{wanted} is missing: a submission is controller.hh + "
                                "controller.cc")
    return got


def _said(e: Exception) -> str:
    return shown(str(e), 200)


async def _bounded(part: BodyPartReader, limit: int, label: str, status: int) -> bytes:
    data = bytearray()
    while True:
        chunk = await part.read_chunk(CHUNK)
        if not chunk:
            return bytes(data)
        data += chunk
        if len(data) > limit:
            raise UploadRefused(status, f"{label} is more than {limit} bytes")
