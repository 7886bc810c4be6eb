"""Crisis resources per region and the plain-language crisis message (outside the role-play)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import MascotError
from ..paths import assets_dir
from .result import CATEGORIES, SafetyResult

# ---------------------------------------------------------------------------------------------
# Crisis resources
# ---------------------------------------------------------------------------------------------

_REGION_ALIASES = {"GB": "UK", "USA": "US", "UNITED STATES": "US", "UNITED KINGDOM": "UK",
                   "ENGLAND": "UK", "SCOTLAND": "UK", "WALES": "UK", "NORTHERN IRELAND": "UK",
                   "CANADA": "CA", "AUSTRALIA": "AU", "IRELAND": "IE", "GERMANY": "DE",
                   "FRANCE": "FR", "INDIA": "IN", "NEW ZEALAND": "NZ", "INTERNATIONAL": "INTL"}


def _default_path() -> Path:
    return assets_dir() / "safety" / "resources.json"


def _broken(path: Path, why: str) -> MascotError:
    why = " ".join(str(why).split())
    return MascotError(f"The crisis resources file {path} is broken ({why}); "
                       f"reinstall Mascot or fix that file.")


def _read_resources(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _broken(path, "file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _broken(path, err) from None
    if not isinstance(data, dict) or not isinstance(data.get("regions"), dict) \
            or not data["regions"]:
        raise _broken(path, 'it needs an object with a non-empty "regions" object')
    default = data.get("default_region", "INTL")
    if default not in data["regions"]:
        raise _broken(path, f'default_region "{default}" is not one of its regions')
    for code, region in data["regions"].items():
        if not isinstance(region, dict) or not isinstance(region.get("resources"), list):
            raise _broken(path, f'region "{code}" needs a "resources" list')
        for i, res in enumerate(region["resources"]):
            if not isinstance(res, dict) or not all(
                    isinstance(res.get(k), str) and res[k].strip() for k in ("name", "contact")):
                raise _broken(path, f'region "{code}" resource {i + 1} needs "name" and "contact"')
            if not isinstance(res.get("for", []), list):
                raise _broken(path, f'region "{code}" resource {i + 1}: "for" must be a list')
    return data


def _region_code(region: str) -> str:
    code = region.strip().upper().replace("-", "_")
    if "_" in code and code not in _REGION_ALIASES:       # locale such as "en_GB"
        code = code.rsplit("_", 1)[1]
    return _REGION_ALIASES.get(code, code)


def load_resources(region: str | None = None, path: Path | None = None) -> dict[str, Any]:
    """Crisis resources for one region.

    The region comes from ``region``, else the ``MASCOT_REGION`` environment variable, else the
    file's ``default_region``. Codes are case-insensitive; "GB" and locales like "en_GB" work.
    Returns ``{"region", "name", "resources": [...], "note"}``; ``note`` is None, or a sentence
    saying that an unknown region fell back to the international list. A missing or malformed
    file raises ``MascotError``.
    """
    path = Path(path) if path is not None else _default_path()
    data = _read_resources(path)
    regions = data["regions"]
    default = data.get("default_region", "INTL")
    requested = region if region and region.strip() else os.environ.get("MASCOT_REGION", "")
    code = _region_code(requested) if requested.strip() else default
    note = None
    if code not in regions:
        fallback = "INTL" if "INTL" in regions else default
        note = (f'No crisis resources are listed for region "{requested.strip()}"; '
                f"showing international ones instead.")
        code = fallback
    entry = regions[code]
    return {"region": code, "name": entry.get("name", code),
            "resources": [dict(r) for r in entry["resources"]], "note": note}


def resources_for(result: SafetyResult | str | None, region: str | None = None,
                  path: Path | None = None) -> list[dict[str, Any]]:
    """The region's resources for a result: those meant for its category first, then emergency.

    With no category (``none``), every non-emergency resource comes first.
    """
    category = result if isinstance(result, str) or result is None else result.category
    resources = load_resources(region, path)["resources"]
    first = [r for r in resources if not r.get("emergency")
             and (category is None or category in r.get("for", []))]
    emergency = [r for r in resources if r.get("emergency")]
    if not isinstance(result, str) and result is not None and result.level == "emergency":
        return emergency + first                  # behaviour in progress: call first
    return first + emergency


# ---------------------------------------------------------------------------------------------
# Crisis message (plain language, outside the role-play)
# ---------------------------------------------------------------------------------------------

_OPENING = {
    ("suicide", "urgent"): "It sounds like you are in a lot of pain right now, and I am really"
                           " glad you said it instead of keeping it to yourself.",
    ("suicide", "concern"): "It sounds like things feel really heavy right now, and that"
                            " matters.",
    ("self_harm", "urgent"): "Thank you for telling me; hurting yourself is a sign of how much"
                             " you are carrying, and you deserve care, not judgement.",
    ("self_harm", "concern"): "Thank you for trusting me with this; what you are going through"
                              " matters, and you deserve care, not judgement.",
    ("violence_from_others", "urgent"): "What you are describing is not your fault, and you"
                                        " deserve to be safe.",
    ("violence_from_others", "concern"): "What you are describing sounds frightening, it is not"
                                         " your fault, and you deserve to feel safe.",
    ("violence_to_others", "urgent"): "It sounds like you are feeling a huge amount of anger or"
                                      " pain right now, and it took honesty to say it.",
    ("violence_to_others", "concern"): "It sounds like you are really angry or hurt right now,"
                                       " and those feelings deserve to be taken seriously.",
    (None, "none"): "It sounds like you are going through something hard.",
}

_ACTION = {
    "suicide": ["Please reach out to a real person now: a crisis line is free, confidential, and"
                " there for exactly this, even if you are not sure it is bad enough.",
                "If you can, let someone you trust know how you are feeling, and try not to stay"
                " alone with this."],
    "self_harm": ["Talking to a real person now can help with the urge and with what is"
                  " underneath it, and you can reach out even if you do not know what to say."],
    "violence_from_others": ["A trained advocate can help you make a safety plan, like a safe"
                             " place to go, who to call and what to keep ready, at your own pace"
                             " and in confidence.",
                             "Mascot keeps its history on this computer, so if someone else uses"
                             " it, you may want to delete this conversation."],
    "violence_to_others": ["If you can, step away from the person and the situation for now and"
                           " give yourself some space and time to cool down.",
                           "Please reach someone now: a crisis line can talk this moment through"
                           " with you without judging you."],
    None: ["Talking to a real person can help, and you do not have to wait for things to get"
           " worse to reach out."],
}


_URGENT = {
    "suicide": "If you might act on these thoughts or are in immediate danger, {call}.",
    "self_harm": "If you are badly hurt or in immediate danger, {call}.",
    "violence_from_others": "If you are in immediate danger, {call}.",
    "violence_to_others": "If you feel you might act on this, or anyone is in immediate danger,"
                          " {call}.",
    None: "If you are in immediate danger, {call}.",
}


def _emergency_phrase(resources: list[dict[str, Any]]) -> str:
    for res in resources:
        if res.get("emergency"):
            number = str(res.get("number", "")).strip()
            if number:
                return f"call your local emergency number ({number}) now"
            break
    return "call your local emergency number now"


def emergency_call(resources: list[dict[str, Any]]) -> dict[str, str]:
    """The region's emergency number as ``{"number", "name", "text"}``, for the first line of an
    emergency response ("Call 112 now"); without a listed number, a generic instruction."""
    for res in resources:
        number = str(res.get("number", "")).strip()
        if res.get("emergency") and number:
            return {"number": number, "name": str(res.get("name", "")),
                    "text": f"Call {number} now."}
    return {"number": "", "name": "", "text": "Call your local emergency number now."}


def _emergency_message(result: SafetyResult, resources: list[dict[str, Any]], who: str) -> str:
    """Behaviour in progress: the number to call comes first, then the rest."""
    call = emergency_call(resources)
    number = call["number"] or "your local emergency number"
    sentences = [
        f"Please call {number} now, or ask someone near you to call for you.",
        "This is an emergency, and you deserve help right away, even if you are not sure how bad"
        " it is.",
        f"If someone else is in danger, call {number} for them now and stay with them if it is"
        " safe.",
        f"Stepping out of the chat: {who} not an emergency service and cannot send help.",
        "While you wait, stay where help can reach you and let someone near you know.",
    ]
    helplines = [r for r in resources if not r.get("emergency")][:2]
    lines = [f"- {call['name'] or 'Emergency services'}: {call['text'].rstrip('.')}"
             if call["number"] else "- Emergency services: call your local emergency number"]
    for res in helplines:
        lines.append(f"- {res['name']}: {res['contact']}" + (f" ({res['url']})" if res.get("url")
                                                              else ""))
    return " ".join(sentences) + "\n\nContacts, emergency first:\n" + "\n".join(lines)


def crisis_message(result: SafetyResult, resources: list[dict[str, Any]],
                   companion_name: str | None = None) -> str:
    """A warm, plain message (not role-play) that points to real people and lists resources.

    ``resources`` is normally ``resources_for(result)``; the 2-4 most relevant are listed. For an
    *emergency* (behaviour in progress) the message opens with the local emergency number.
    """
    if companion_name and companion_name.strip():
        who = f"{companion_name.strip()} is an AI, like every companion in Mascot, and"
    else:
        who = "every companion in Mascot is an AI,"
    if result.level == "emergency":
        return _emergency_message(result, resources, who)
    category = result.category if result.category in CATEGORIES else None
    level = result.level if category and result.level in ("concern", "urgent") else "none"
    opening = _OPENING.get((category, level), _OPENING[(None, "none")])
    disclosure = (f"Stepping out of the chat for a moment: {who} not a therapist, counsellor or"
                  f" emergency service, so please do not rely on this app alone right now.")
    sentences = [opening, disclosure, *_ACTION[category]]

    helplines = [r for r in resources if not r.get("emergency")][:3]
    emergency = [r for r in resources if r.get("emergency")]
    listed = helplines + (emergency[:1] if level == "urgent" or len(helplines) < 2 else [])
    if level == "urgent":
        sentences.append(_URGENT[category].format(call=_emergency_phrase(resources)))
    sentences.append("Reaching out is a brave and sensible thing to do, and you deserve support.")
    lines = []
    for res in listed[:4]:
        line = f"- {res['name']}: {res['contact']}"
        if res.get("url"):
            line += f" ({res['url']})"
        lines.append(line)
    if not lines:
        return " ".join(sentences)
    return " ".join(sentences) + "\n\nYou can contact:\n" + "\n".join(lines)
