"""Crisis resources per region and the plain-language crisis message (outside the role-play)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..errors import MascotError
from ..paths import assets_dir
from .result import CATEGORIES, SafetyResult

# ---------------------------------------------------------------------------------------------
# Crisis resources
# ---------------------------------------------------------------------------------------------

_REGION_ALIASES = {
    "GB": "UK",
    "USA": "US",
    "UNITED STATES": "US",
    "UNITED KINGDOM": "UK",
    "ENGLAND": "UK",
    "SCOTLAND": "UK",
    "WALES": "UK",
    "NORTHERN IRELAND": "UK",
    "CANADA": "CA",
    "AUSTRALIA": "AU",
    "IRELAND": "IE",
    "GERMANY": "DE",
    "FRANCE": "FR",
    "INDIA": "IN",
    "NEW ZEALAND": "NZ",
    "INTERNATIONAL": "INTL",
}


def _default_path() -> Path:
    return assets_dir() / "safety" / "resources.json"


def _broken(path: Path, why: str) -> MascotError:
    why = " ".join(str(why).split())
    return MascotError(
        f"The crisis resources file {path} is broken ({why}); reinstall Mascot or fix that file."
    )


def _read_resources(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _broken(path, "file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise _broken(path, err) from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("regions"), dict)
        or not data["regions"]
    ):
        raise _broken(path, 'it needs an object with a non-empty "regions" object')
    default = data.get("default_region", "INTL")
    if default not in data["regions"]:
        raise _broken(path, f'default_region "{default}" is not one of its regions')
    for code, region in data["regions"].items():
        if not isinstance(region, dict) or not isinstance(region.get("resources"), list):
            raise _broken(path, f'region "{code}" needs a "resources" list')
        for i, res in enumerate(region["resources"]):
            if not isinstance(res, dict) or not all(
                isinstance(res.get(k), str) and res[k].strip() for k in ("name", "contact")
            ):
                raise _broken(path, f'region "{code}" resource {i + 1} needs "name" and "contact"')
            if not isinstance(res.get("for", []), list):
                raise _broken(path, f'region "{code}" resource {i + 1}: "for" must be a list')
    return data


def _region_code(region: str) -> str:
    code = region.strip().upper().replace("-", "_")
    if "_" in code and code not in _REGION_ALIASES:  # locale such as "en_GB"
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
        note = (
            f'No crisis resources are listed for region "{requested.strip()}"; '
            f"showing international ones instead."
        )
        code = fallback
    entry = regions[code]
    return {
        "region": code,
        "name": entry.get("name", code),
        "resources": [dict(r) for r in entry["resources"]],
        "note": note,
    }


def resources_for(
    result: SafetyResult | str | None, region: str | None = None, path: Path | None = None
) -> list[dict[str, Any]]:
    """The region's resources for a result: those meant for its category first, then emergency.

    With no category (``none``), every non-emergency resource comes first.
    """
    category = result if isinstance(result, str) or result is None else result.category
    resources = load_resources(region, path)["resources"]
    first = [
        r
        for r in resources
        if not r.get("emergency") and (category is None or category in r.get("for", []))
    ]
    emergency = [r for r in resources if r.get("emergency")]
    if not isinstance(result, str) and result is not None and result.level == "emergency":
        return emergency + first  # behaviour in progress: call first
    return first + emergency


# ---------------------------------------------------------------------------------------------
# Crisis message (plain language, outside the role-play)
# ---------------------------------------------------------------------------------------------

_OPENING = {
    ("suicide", "urgent"): "It sounds like you are in a lot of pain right now, and I am really"
    " glad you said it instead of keeping it to yourself.",
    ("suicide", "concern"): "It sounds like things feel really heavy right now, and that matters.",
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
    "suicide": [
        "Please reach out to a real person now: a crisis line is free, confidential, and"
        " there for exactly this, even if you are not sure it is bad enough.",
        "If you can, let someone you trust know how you are feeling, and try not to stay"
        " alone with this.",
    ],
    "self_harm": [
        "Talking to a real person now can help with the urge and with what is"
        " underneath it, and you can reach out even if you do not know what to say."
    ],
    "violence_from_others": [
        "A trained advocate can help you make a safety plan, like a safe"
        " place to go, who to call and what to keep ready, at your own pace"
        " and in confidence.",
        "Mascot keeps its history on this computer, so if someone else uses"
        " it, you may want to delete this conversation.",
    ],
    "violence_to_others": [
        "If you can, step away from the person and the situation for now and"
        " give yourself some space and time to cool down.",
        "Please reach someone now: a crisis line can talk this moment through"
        " with you without judging you.",
    ],
    None: [
        "Talking to a real person can help, and you do not have to wait for things to get"
        " worse to reach out."
    ],
}


_URGENT = {
    "suicide": "If you might act on these thoughts or are in immediate danger, {call}.",
    "self_harm": "If you are badly hurt or in immediate danger, {call}.",
    "violence_from_others": "If you are in immediate danger, {call}.",
    "violence_to_others": "If you feel you might act on this, or anyone is in immediate danger,"
    " {call}.",
    None: "If you are in immediate danger, {call}.",
}


# The same reviewed texts in German and French, for a user who writes in them (the screen reads
# both; ``language`` below). Informal "du"/"tu", as in a chat; written for the project.
_OPENING_DE = {
    (
        "suicide",
        "urgent",
    ): "Es klingt, als hättest du gerade sehr große Schmerzen, und ich bin wirklich froh, dass"
    " du es ausgesprochen hast, statt es für dich zu behalten.",
    ("suicide", "concern"): "Es klingt, als wäre gerade alles sehr schwer, und das zählt.",
    (
        "self_harm",
        "urgent",
    ): "Danke, dass du es mir sagst; dich selbst zu verletzen zeigt, wie viel du gerade"
    " trägst, und du verdienst Fürsorge, kein Urteil.",
    (
        "self_harm",
        "concern",
    ): "Danke, dass du mir das anvertraust; was du durchmachst, zählt, und du verdienst"
    " Fürsorge, kein Urteil.",
    (
        "violence_from_others",
        "urgent",
    ): "Was du beschreibst, ist nicht deine Schuld, und du verdienst es, sicher zu sein.",
    (
        "violence_from_others",
        "concern",
    ): "Was du beschreibst, klingt beängstigend, es ist nicht deine Schuld,"
    " und du verdienst es, dich sicher zu fühlen.",
    (
        "violence_to_others",
        "urgent",
    ): "Es klingt, als wärst du gerade unglaublich wütend oder verletzt, und es"
    " war ehrlich, das zu sagen.",
    (
        "violence_to_others",
        "concern",
    ): "Es klingt, als wärst du gerade sehr wütend oder verletzt, und diese"
    " Gefühle verdienen es, ernst genommen zu werden.",
    (None, "none"): "Es klingt, als würdest du gerade etwas Schweres durchmachen.",
}
_ACTION_DE = {
    "suicide": [
        "Bitte wende dich jetzt an einen echten Menschen: ein Krisentelefon ist kostenlos,"
        " vertraulich und genau dafür da, auch wenn du nicht sicher bist, ob es schlimm genug ist.",
        "Wenn du kannst, sag jemandem, dem du vertraust, wie es dir geht, und bleib damit möglichst"
        " nicht allein.",
    ],
    "self_harm": [
        "Mit einem echten Menschen zu sprechen, kann jetzt gegen den Drang helfen und bei dem, was"
        " darunter liegt, und du kannst dich melden, auch wenn du nicht weißt, was du sagen sollst."
    ],
    "violence_from_others": [
        "Eine geschulte Beraterin oder ein Berater kann dir helfen, einen Sicherheitsplan"
        " zu machen: ein sicherer Ort, wen du anrufst, was du bereithältst, in deinem"
        " Tempo und vertraulich.",
        "Mascot speichert den Verlauf auf diesem Computer; wenn ihn noch jemand benutzt,"
        " möchtest du dieses Gespräch vielleicht löschen.",
    ],
    "violence_to_others": [
        "Wenn du kannst, geh erst einmal weg von der Person und der Situation und gib dir"
        " Raum und Zeit, dich zu beruhigen.",
        "Bitte ruf jetzt jemanden an: ein Krisentelefon kann diesen Moment mit dir"
        " durchsprechen, ohne dich zu verurteilen.",
    ],
    None: [
        "Mit einem echten Menschen zu sprechen, kann helfen, und du musst nicht warten, bis es schlimmer"
        " wird."
    ],
}
_URGENT_DE = {
    "suicide": "Wenn du diesen Gedanken folgen könntest oder in unmittelbarer Gefahr bist, {call}.",
    "self_harm": "Wenn du schwer verletzt bist oder in unmittelbarer Gefahr, {call}.",
    "violence_from_others": "Wenn du in unmittelbarer Gefahr bist, {call}.",
    "violence_to_others": "Wenn du fürchtest, dass du danach handelst, oder jemand in "
    "unmittelbarer Gefahr ist, {call}.",
    None: "Wenn du in unmittelbarer Gefahr bist, {call}.",
}
_OPENING_FR = {
    (
        "suicide",
        "urgent",
    ): "On dirait que tu souffres énormément en ce moment, et je suis vraiment content"
    " que tu l'aies dit au lieu de le garder pour toi.",
    ("suicide", "concern"): "On dirait que tout est très lourd en ce moment, et ça compte.",
    (
        "self_harm",
        "urgent",
    ): "Merci de me le dire ; te faire du mal montre tout ce que tu portes, et tu mérites"
    " de l'attention, pas un jugement.",
    (
        "self_harm",
        "concern",
    ): "Merci de me confier ça ; ce que tu traverses compte, et tu mérites de"
    " l'attention, pas un jugement.",
    (
        "violence_from_others",
        "urgent",
    ): "Ce que tu décris n'est pas de ta faute, et tu mérites d'être en sécurité.",
    (
        "violence_from_others",
        "concern",
    ): "Ce que tu décris semble effrayant, ce n'est pas de ta faute, et tu"
    " mérites de te sentir en sécurité.",
    (
        "violence_to_others",
        "urgent",
    ): "On dirait que tu ressens une colère ou une douleur immense en ce moment,"
    " et il a fallu de l'honnêteté pour le dire.",
    (
        "violence_to_others",
        "concern",
    ): "On dirait que tu es très en colère ou blessé en ce moment, et ces"
    " sentiments méritent d'être pris au sérieux.",
    (None, "none"): "On dirait que tu traverses quelque chose de difficile.",
}
_ACTION_FR = {
    "suicide": [
        "S'il te plaît, parle à une vraie personne maintenant : une ligne d'écoute est gratuite,"
        " confidentielle et faite exactement pour ça, même si tu n'es pas sûr que ce soit assez grave.",
        "Si tu peux, dis à quelqu'un de confiance comment tu te sens, et essaie de ne pas rester seul"
        " avec ça.",
    ],
    "self_harm": [
        "Parler à une vraie personne maintenant peut aider face à l'envie et à ce qu'il y a"
        " dessous, et tu peux appeler même si tu ne sais pas quoi dire."
    ],
    "violence_from_others": [
        "Une personne formée peut t'aider à faire un plan de sécurité : un endroit sûr,"
        " qui appeler, quoi garder prêt, à ton rythme et en toute confidentialité.",
        "Mascot garde l'historique sur cet ordinateur ; si quelqu'un d'autre l'utilise,"
        " tu voudras peut-être supprimer cette conversation.",
    ],
    "violence_to_others": [
        "Si tu peux, éloigne-toi de la personne et de la situation pour l'instant, et"
        " donne-toi de l'espace et du temps pour te calmer.",
        "S'il te plaît, appelle quelqu'un maintenant : une ligne d'écoute peut parler de"
        " ce moment avec toi sans te juger.",
    ],
    None: [
        "Parler à une vraie personne peut aider, et tu n'as pas besoin d'attendre que ça empire."
    ],
}
_URGENT_FR = {
    "suicide": "Si tu risques de passer à l'acte ou si tu es en danger immédiat, {call}.",
    "self_harm": "Si tu es gravement blessé ou en danger immédiat, {call}.",
    "violence_from_others": "Si tu es en danger immédiat, {call}.",
    "violence_to_others": "Si tu crains de passer à l'acte, ou si quelqu'un est en danger immédiat, {call}.",
    None: "Si tu es en danger immédiat, {call}.",
}

# Everything else the messages say, per language.
_TEXT = {
    "en": {
        "call_now": "Call {number} now.",
        "call_generic": "Call your local emergency number now.",
        "phrase": "call your local emergency number ({number}) now",
        "phrase_generic": "call your local emergency number now",
        "who_named": "{name} is an AI, like every companion in Mascot, and",
        "who": "every companion in Mascot is an AI,",
        "disclosure": "Stepping out of the chat for a moment: {who} not a therapist, counsellor or"
        " emergency service, so please do not rely on this app alone right now.",
        "brave": "Reaching out is a brave and sensible thing to do, and you deserve support.",
        "contacts": "You can contact:",
        "contacts_emergency": "Contacts, emergency first:",
        "emergency_services": "Emergency services",
        "your_number": "your local emergency number",
        "emergency": [
            "Please call {number} now, or ask someone near you to call for you.",
            "This is an emergency, and you deserve help right away, even if you are not sure"
            " how bad it is.",
            "If someone else is in danger, call {number} for them now and stay with them if it"
            " is safe.",
            "Stepping out of the chat: {who} not an emergency service and cannot send help.",
            "While you wait, stay where help can reach you and let someone near you know.",
        ],
    },
    "de": {
        "call_now": "Ruf jetzt {number} an.",
        "call_generic": "Ruf jetzt den Notruf an.",
        "phrase": "ruf jetzt den Notruf an ({number})",
        "phrase_generic": "ruf jetzt den Notruf an",
        "who_named": "{name} ist eine KI, wie jede Begleitung in Mascot, und",
        "who": "jede Begleitung in Mascot ist eine KI,",
        "disclosure": "Kurz außerhalb des Chats: {who} keine Therapeutin, keine Beratungsstelle und kein"
        " Notdienst; bitte verlass dich gerade nicht allein auf diese App.",
        "brave": "Sich Hilfe zu holen ist mutig und vernünftig, und du verdienst Unterstützung.",
        "contacts": "Du kannst dich wenden an:",
        "contacts_emergency": "Kontakte, Notruf zuerst:",
        "emergency_services": "Notruf",
        "your_number": "den Notruf",
        "emergency": [
            "Bitte ruf jetzt {number} an, oder bitte jemanden in deiner Nähe, für dich anzurufen.",
            "Das ist ein Notfall, und du verdienst sofort Hilfe, auch wenn du nicht sicher bist,"
            " wie schlimm es ist.",
            "Wenn jemand anderes in Gefahr ist, ruf jetzt für diese Person {number} an und bleib"
            " bei ihr, wenn es sicher ist.",
            "Kurz außerhalb des Chats: {who} kein Notdienst und kann keine Hilfe schicken.",
            "Bleib, während du wartest, dort, wo Hilfe dich erreichen kann, und sag jemandem in"
            " deiner Nähe Bescheid.",
        ],
    },
    "fr": {
        "call_now": "Appelle le {number} maintenant.",
        "call_generic": "Appelle les secours maintenant.",
        "phrase": "appelle les secours ({number}) maintenant",
        "phrase_generic": "appelle les secours maintenant",
        "who_named": "{name} est une IA, comme chaque compagnon de Mascot, et",
        "who": "chaque compagnon de Mascot est une IA,",
        "disclosure": "Je sors un instant de la conversation : {who} pas un thérapeute, un conseiller ni un"
        " service d'urgence ; s'il te plaît, ne compte pas sur cette appli seule en ce moment.",
        "brave": "Demander de l'aide est courageux et raisonnable, et tu mérites du soutien.",
        "contacts": "Tu peux contacter :",
        "contacts_emergency": "Contacts, les secours d'abord :",
        "emergency_services": "Secours",
        "your_number": "les secours",
        "emergency": [
            "S'il te plaît, appelle le {number} maintenant, ou demande à quelqu'un près de toi"
            " d'appeler pour toi.",
            "C'est une urgence, et tu mérites de l'aide tout de suite, même si tu n'es pas sûr"
            " de la gravité.",
            "Si quelqu'un d'autre est en danger, appelle le {number} pour cette personne"
            " maintenant et reste avec elle si c'est sans danger.",
            "Je sors un instant de la conversation : {who} pas un service d'urgence et ne peut"
            " pas envoyer d'aide.",
            "En attendant, reste là où les secours peuvent te joindre et préviens quelqu'un près"
            " de toi.",
        ],
    },
}
_TABLES = {
    "en": (_OPENING, _ACTION, _URGENT),
    "de": (_OPENING_DE, _ACTION_DE, _URGENT_DE),
    "fr": (_OPENING_FR, _ACTION_FR, _URGENT_FR),
}
# The contact lines of assets/safety/resources.json are written in English ("Call 112 (free,
# 24/7)"); in a German or French message their few words are translated.
_CONTACT_WORDS = {
    "de": [
        (r"\bCall or text\b", "Anruf oder SMS:"),
        (r"\bCall\b", "Anruf:"),
        (r"\btext\b", "SMS"),
        (r"\bor\b", "oder"),
        (r"\bfree\b", "kostenlos"),
        (r"24/7", "rund um die Uhr"),
        (r"\bmany languages\b", "viele Sprachen"),
        (r"\bpolice\b", "Polizei"),
    ],
    "fr": [
        (r"\bCall or text\b", "Appel ou SMS :"),
        (r"\bCall\b", "Appel :"),
        (r"\btext\b", "SMS"),
        (r"\bor\b", "ou"),
        (r"\bfree\b", "gratuit"),
        (r"24/7", "24 h/24"),
        (r"\bmany languages\b", "plusieurs langues"),
        (r"\bpolice\b", "police"),
    ],
}


def language(lang: str | None) -> str:
    """The language of the crisis texts: ``lang`` when it is one of them, else English."""
    return lang if lang in _TEXT else "en"


def localise_name(name: str, lang: str | None = "en") -> str:
    """A resource's name in ``lang``: the generic "Emergency services" is translated, a named
    service keeps its own name."""
    if name == "Emergency services":
        return _TEXT[language(lang)]["emergency_services"]
    return name


def localise_contact(contact: str, lang: str | None = "en") -> str:
    """A resource's contact line in ``lang`` (its few English words translated)."""
    for pattern, repl in _CONTACT_WORDS.get(language(lang), ()):
        contact = re.sub(pattern, repl, contact)
    return contact


def _emergency_phrase(resources: list[dict[str, Any]], lang: str = "en") -> str:
    t = _TEXT[language(lang)]
    for res in resources:
        if res.get("emergency"):
            number = str(res.get("number", "")).strip()
            if number:
                return t["phrase"].format(number=number)
            break
    return t["phrase_generic"]


def emergency_call(resources: list[dict[str, Any]], lang: str | None = "en") -> dict[str, str]:
    """The region's emergency number as ``{"number", "name", "text"}``, for the first line of an
    emergency response ("Call 112 now."; in German "Ruf jetzt 112 an."); without a listed number,
    a generic instruction."""
    t = _TEXT[language(lang)]
    for res in resources:
        number = str(res.get("number", "")).strip()
        if res.get("emergency") and number:
            return {
                "number": number,
                "name": localise_name(str(res.get("name", "")), lang),
                "text": t["call_now"].format(number=number),
            }
    return {"number": "", "name": "", "text": t["call_generic"]}


def _emergency_message(
    result: SafetyResult, resources: list[dict[str, Any]], who: str, lang: str = "en"
) -> str:
    """Behaviour in progress: the number to call comes first, then the rest."""
    t = _TEXT[language(lang)]
    call = emergency_call(resources, lang)
    number = call["number"] or t["your_number"]
    sentences = [x.format(number=number, who=who) for x in t["emergency"]]
    helplines = [r for r in resources if not r.get("emergency")][:2]
    lines = [
        f"- {call['name'] or t['emergency_services']}: {call['text'].rstrip('.')}"
        if call["number"]
        else f"- {t['emergency_services']}: {t['call_generic'].rstrip('.')}"
    ]
    for res in helplines:
        lines.append(
            f"- {localise_name(res['name'], lang)}: {localise_contact(res['contact'], lang)}"
            + (f" ({res['url']})" if res.get("url") else "")
        )
    return " ".join(sentences) + f"\n\n{t['contacts_emergency']}\n" + "\n".join(lines)


def crisis_message(
    result: SafetyResult,
    resources: list[dict[str, Any]],
    companion_name: str | None = None,
    lang: str | None = "en",
) -> str:
    """A warm, plain message (not role-play) that points to real people and lists resources,
    in ``lang`` (en, de or fr: the language the user wrote in; anything else reads English).

    ``resources`` is normally ``resources_for(result)``; the 2-4 most relevant are listed. For an
    *emergency* (behaviour in progress) the message opens with the local emergency number.
    """
    lang = language(lang)
    t = _TEXT[lang]
    opening_of, action_of, urgent_of = _TABLES[lang]
    if companion_name and companion_name.strip():
        who = t["who_named"].format(name=companion_name.strip())
    else:
        who = t["who"]
    if result.level == "emergency":
        return _emergency_message(result, resources, who, lang)
    category = result.category if result.category in CATEGORIES else None
    level = result.level if category and result.level in ("concern", "urgent") else "none"
    opening = opening_of.get((category, level), opening_of[(None, "none")])
    sentences = [opening, t["disclosure"].format(who=who), *action_of[category]]

    helplines = [r for r in resources if not r.get("emergency")][:3]
    emergency = [r for r in resources if r.get("emergency")]
    listed = helplines + (emergency[:1] if level == "urgent" or len(helplines) < 2 else [])
    if level == "urgent":
        sentences.append(urgent_of[category].format(call=_emergency_phrase(resources, lang)))
    sentences.append(t["brave"])
    lines = []
    for res in listed[:4]:
        line = f"- {localise_name(res['name'], lang)}: {localise_contact(res['contact'], lang)}"
        if res.get("url"):
            line += f" ({res['url']})"
        lines.append(line)
    if not lines:
        return " ".join(sentences)
    return " ".join(sentences) + f"\n\n{t['contacts']}\n" + "\n".join(lines)
