"""A plugin file that forgot to define `register(registry)`."""


def setup(registry: object) -> None:
    """Misnamed: opt looks for `register`."""
