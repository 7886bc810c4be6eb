import threading

from engine.personas import PersonaSet, persona_from_dict


def events_of(events, kind):
    return [e for e in events if e.type == kind]


def run_round(chat, text, cancel=None):
    """Send one message and collect the round's events."""
    return list(chat.send(text, cancel or threading.Event()))


def make_group(names=("Mia", "Theo", "Ada"), name="test"):
    members = [
        persona_from_dict(
            {
                "name": n,
                "role": f"the {r} of the group",
                "traits": [r, "kind"],
                "speaking_style": f"Talks like a {r}.",
            }
        )
        for n, r in zip(names, ["listener", "planner", "joker", "mentor", "skeptic"])
    ]
    return PersonaSet(name=name, title=name.title(), description="test group", members=members)


def varied(text):
    """A fake reply function that says ``text`` after a running number ("#1 fine", "#2 fine"):
    the chat drops a reply that repeats a recent one, as it would a real model's copy."""
    count = [0]

    def reply(req):
        count[0] += 1
        return f"#{count[0]} {text}"

    return reply
