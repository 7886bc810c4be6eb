"""Character card files: reading a card from JSON or a PNG's text chunks (with the limits that
keep a hostile file from costing memory or time), and writing one (JSON, or PNG with an avatar)."""

from __future__ import annotations

import base64
import binascii
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

from engine.cards import (
    AVATAR_SIZE,
    MAX_CARD_BYTES,
    PNG_SIGNATURE,
    SPEC_VERSIONS,
    V2,
    V3,
    card_from_persona,
    check_card_nesting,
    one_line,
    persona_from_card,
)
from engine.errors import CardError
from engine.personas import Persona

# -- files ------------------------------------------------------------------------------------


def _stat(path: Path) -> int:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CardError(f"{path}: no such file; check the path to the character card.") from None
    except OSError as e:
        raise CardError(f"{path}: cannot read the file ({one_line(e.strerror or e)}).") from None
    if path.is_dir():
        raise CardError(f"{path}: is a folder; give the path of a .json or .png character card.")
    if st.st_size > MAX_CARD_BYTES:
        raise CardError(
            f"{path}: {st.st_size} bytes is too large for a character card "
            f"(limit {MAX_CARD_BYTES // (1024 * 1024)} MB)."
        )
    if st.st_size == 0:
        raise CardError(f"{path}: the file is empty; export the card again from SillyTavern.")
    return st.st_size


def _json_from_bytes(raw: bytes, path: Path, what: str) -> Any:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CardError(f"{path}: {what} is not UTF-8 text; export the card again.") from None
    if not text.strip():
        raise CardError(f"{path}: {what} is empty; export the card again from SillyTavern.")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise CardError(
            f"{path}: {what} is not valid JSON (line {e.lineno}, column {e.colno}: "
            f"{e.msg}); export the card again."
        ) from None
    except RecursionError:
        raise CardError(
            f"{path}: {what} is nested too deeply to read; this is not a usable character card."
        ) from None
    check_card_nesting(data, str(path))
    return data


def _inflate(data: bytes, path: Path, kw: str) -> bytes:
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, MAX_CARD_BYTES + 1)
    except zlib.error:
        raise CardError(
            f"{path}: the compressed '{kw}' chunk is corrupt; export the card again."
        ) from None
    if len(out) > MAX_CARD_BYTES or d.unconsumed_tail:
        raise CardError(
            f"{path}: the '{kw}' chunk unpacks to more than "
            f"{MAX_CARD_BYTES // (1024 * 1024)} MB; this is not a usable card."
        )
    return out


def _chunk_payload(ctype: bytes, chunk: bytes, path: Path, kw: str) -> bytes:
    """The text of a tEXt/zTXt/iTXt chunk, as bytes."""
    bad = CardError(
        f"{path}: the '{kw}' {ctype.decode('ascii')} chunk is malformed; export the card again."
    )
    rest = chunk.split(b"\0", 1)[1]
    if ctype == b"tEXt":
        return rest
    if ctype == b"zTXt":
        if len(rest) < 1 or rest[0] != 0:
            raise bad
        return _inflate(rest[1:], path, kw)
    # iTXt: compression flag, method, language tag \0, translated keyword \0, text
    if len(rest) < 2:
        raise bad
    flag, method, tail = rest[0], rest[1], rest[2:]
    parts = tail.split(b"\0", 2)
    if len(parts) != 3:
        raise bad
    text = parts[2]
    if flag:
        if method != 0:
            raise bad
        text = _inflate(text, path, kw)
    return text


def _card_from_payload(payload: bytes, path: Path, kw: str) -> Any:
    stripped = payload.strip()
    if stripped.startswith(b"{") or stripped.startswith(b"\xef\xbb\xbf{"):
        return _json_from_bytes(stripped, path, f"the '{kw}' chunk")  # plain JSON, not base64
    b64 = b"".join(stripped.split())
    b64 += b"=" * (-len(b64) % 4)
    try:
        decoded = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        raise CardError(
            f"{path}: the '{kw}' text chunk is not valid base64; "
            "export the card again from SillyTavern."
        ) from None
    return _json_from_bytes(decoded, path, f"the card data in the '{kw}' chunk")


def _card_from_png(raw: bytes, path: Path) -> Any:
    if not raw.startswith(PNG_SIGNATURE):
        raise CardError(
            f"{path}: not a PNG image (bad signature); "
            "use a PNG or JSON character card exported from SillyTavern."
        )
    pos, found, ended = len(PNG_SIGNATURE), {}, False
    while pos < len(raw):
        if pos + 8 > len(raw):
            raise CardError(
                f"{path}: the PNG is truncated (a chunk header at byte {pos} is cut "
                "off); download or export the card again."
            )
        length, ctype = struct.unpack(">I4s", raw[pos : pos + 8])
        label = ctype.decode("ascii") if ctype.isalpha() else ctype.hex()
        end = pos + 12 + length
        if end > len(raw):
            raise CardError(
                f"{path}: the PNG is truncated (chunk '{label}' at byte {pos} is cut "
                "off); download or export the card again."
            )
        if ctype in (b"tEXt", b"zTXt", b"iTXt"):
            chunk = raw[pos + 8 : pos + 8 + length]
            if b"\0" in chunk:
                kw = chunk.split(b"\0", 1)[0].decode("latin-1").strip().lower()
                if kw in ("chara", "ccv3") and kw not in found:
                    found[kw] = (ctype, chunk)
        pos = end
        if ctype == b"IEND":
            ended = True
            break
    if not found:
        if not ended:
            raise CardError(
                f"{path}: the PNG is truncated (it ends before the IEND chunk); "
                "download or export the card again."
            )
        raise CardError(
            f"{path}: the PNG has no character card data (no 'chara' text chunk); "
            "export the card again from SillyTavern."
        )
    keys = [k for k in ("ccv3", "chara") if k in found]
    for i, kw in enumerate(keys):
        ctype, chunk = found[kw]
        try:
            return _card_from_payload(_chunk_payload(ctype, chunk, path, kw), path, kw)
        except CardError:
            if i == len(keys) - 1:
                raise
            # a broken ccv3 chunk next to a good chara chunk: use the V2 card
    raise AssertionError("unreachable")


def read_card(path: str | Path) -> Any:
    """The raw card (parsed JSON) from a ``.json`` file or a PNG card (``ccv3`` preferred over
    ``chara``). Raises CardError with one line for every problem."""
    path = Path(path)
    _stat(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CardError(f"{path}: cannot read the file ({one_line(e.strerror or e)}).") from None
    if len(raw) > MAX_CARD_BYTES:
        raise CardError(
            f"{path}: {len(raw)} bytes is too large for a character card "
            f"(limit {MAX_CARD_BYTES // (1024 * 1024)} MB)."
        )
    if not raw:
        raise CardError(f"{path}: the file is empty; export the card again from SillyTavern.")
    suffix = path.suffix.lower()
    if suffix == ".png" or raw.startswith(PNG_SIGNATURE):
        return _card_from_png(raw, path)
    if suffix == ".json" or raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
        return _json_from_bytes(raw, path, "the card file")
    raise CardError(f"{path}: not a character card; use a .json or .png card file.")


def import_card(path: str | Path) -> Persona:
    """A persona from a Character Card file (``.json`` or ``.png``)."""
    return persona_from_card(read_card(path), str(Path(path)))


def _png_chunk(ctype: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data))
        + ctype
        + data
        + struct.pack(">I", zlib.crc32(ctype + data) & 0xFFFFFFFF)
    )


def _avatar_idat(color: str, size: int = AVATAR_SIZE) -> bytes:
    """Deflated scanlines of a size x size RGB image filled with ``color`` (#rrggbb)."""
    try:
        rgb = bytes.fromhex(color.lstrip("#"))
        if len(rgb) != 3:
            raise ValueError
    except ValueError:
        rgb = bytes((0x55, 0x66, 0x77))
    row = b"\x00" + rgb * size  # filter type 0 (None) + pixels
    return zlib.compress(row * size, 9)


def card_png_bytes(p: Persona, spec: str = V2) -> bytes:
    """A PNG card: a 256x256 avatar in the persona's colour, the V2 card base64-encoded in a
    ``chara`` tEXt chunk and, for V3, the V3 card in a ``ccv3`` chunk too."""
    if spec not in SPEC_VERSIONS:
        raise CardError(f"Unknown card spec '{one_line(spec)}'; use {V2} or {V3}.")

    def text_chunk(kw: str, card: dict) -> bytes:
        payload = base64.b64encode(json.dumps(card, ensure_ascii=False).encode("utf-8"))
        return _png_chunk(b"tEXt", kw.encode("latin-1") + b"\0" + payload)

    ihdr = struct.pack(">IIBBBBB", AVATAR_SIZE, AVATAR_SIZE, 8, 2, 0, 0, 0)
    chunks = [
        _png_chunk(b"IHDR", ihdr),
        _png_chunk(b"IDAT", _avatar_idat(p.color)),
        text_chunk("chara", card_from_persona(p, V2)),
    ]
    if spec == V3:
        chunks.append(text_chunk("ccv3", card_from_persona(p, V3)))
    chunks.append(_png_chunk(b"IEND", b""))
    return PNG_SIGNATURE + b"".join(chunks)


def export_card(p: Persona, path: str | Path, spec: str = V2) -> Path:
    """Write a persona as a Character Card: ``.json`` (the card JSON) or ``.png`` (avatar image
    with the card embedded). Returns the path written."""
    path = Path(path)
    suffix = path.suffix.lower()
    if spec not in SPEC_VERSIONS:
        raise CardError(f"{path}: unknown card spec '{one_line(spec)}'; use {V2} or {V3}.")
    if suffix == ".json":
        payload = (
            json.dumps(card_from_persona(p, spec), indent=2, ensure_ascii=False) + "\n"
        ).encode("utf-8")
    elif suffix == ".png":
        payload = card_png_bytes(p, spec)
    else:
        raise CardError(
            f"{path}: cannot write a character card as "
            f"'{one_line(suffix) or 'a file without extension'}'; "
            "use a file name ending in .json or .png."
        )
    if not path.parent.is_dir():
        raise CardError(
            f"{path}: the folder {path.parent} does not exist; create it or choose another place."
        )
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_bytes(payload)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise CardError(f"{path}: cannot write the card ({one_line(e.strerror or e)}).") from None
    return path
