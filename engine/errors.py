"""Errors meant for users.

Every error the engine raises on purpose is a ``MascotError``; its message is one line that says
what is wrong and what to do. The CLI and the GUI show that line and never a traceback.
"""


class MascotError(Exception):
    """Base class: ``str(err)`` is a complete, user-facing sentence."""


class PersonaError(MascotError):
    """A persona or persona-set file is invalid (the message names the field)."""


class CardError(PersonaError):
    """A Character Card (JSON or PNG) cannot be read or written."""


class ModelError(MascotError):
    """A model file is missing, broken or unsupported."""


class StorageError(MascotError):
    """The history database cannot be read or written."""


class NotFound(MascotError):
    """A conversation, persona set or model that the user named does not exist."""


class InputError(MascotError):
    """A message or option the user gave cannot be used as it is."""


class Cancelled(MascotError):
    """A round was cancelled by the user."""
