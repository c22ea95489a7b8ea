"""The one exception type rung raises for problems in the user's input.

Library code raises `RungError` with a message that names the file, the node
or op, and what to do. The command-line tools catch it, print
`<tool>: error: <message>` and exit with code 1; anything else escaping is a
bug in rung, not in the input.
"""

from __future__ import annotations


class RungError(Exception):
    """Bad input: a corrupt model, an unknown op, invalid IR, inconsistent shapes…"""

    def __init__(self, message: str, *, location: str | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}" if location else message)


class UnsupportedOpError(RungError):
    """A level cannot run an op at all: no lowering, or no implementation of it."""


class EvaluationError(RungError):
    """An op failed while being evaluated on concrete inputs."""


class InvalidModelError(RungError):
    """A model that is corrupt or malformed: unreadable bytes, text that is not UTF-8,
    an element type that names no type, an invalid graph."""
