"""A table of lowering handlers, keyed by op class, shared by every level crossing.

Each lowering pass owns one `HandlerTable`: the handlers of its source ops,
registered with `@table.lowers(OpClass, ...)` by the package itself and with
`table.add(...)` by plugins. The pass finds an op's handler with
`table.lookup(op)`. Ops that carry their own name, such as ONNX's custom-domain
`onnx.Custom "com.example" "Twice"`, are keyed by a `(domain, op_type)` pair
instead, which the table reads from the op with the `custom_key` it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from xdsl.ir import Operation

from rung.errors import RungError

Key = type[Operation] | tuple[str, str]
"""What a handler is registered for: an op class, or a custom op's (domain, op_type)."""

H = TypeVar("H", bound=Callable[..., Any])


def key_name(key: Key) -> str:
    """`onnx.Relu` for an op class, `com.example::Twice` for a custom key."""
    if isinstance(key, tuple):
        return f"{key[0]}::{key[1]}"
    return key.name


class HandlerTable(Generic[H]):
    """Handlers by op class (and by custom key) for one lowering pass.

    `op_classes` are the base classes of the ops this table lowers (a handler
    for any other op could never run); `custom_key` gives the (domain,
    op_type) of an op that is looked up by name, or None for the others.
    """

    def __init__(
        self,
        what: str,
        op_classes: tuple[type[Operation], ...],
        custom_key: Callable[[Operation], tuple[str, str] | None] | None = None,
    ) -> None:
        self.what = what
        self.op_classes = op_classes
        self.custom_key = custom_key
        self._handlers: dict[Key, H] = {}

    # ---- registration ----------------------------------------------------------------

    def lowers(self, *keys: Key) -> Callable[[H], H]:
        """Decorator: register the handler for every one of `keys`."""

        def register(handler: H) -> H:
            for key in keys:
                self.add(key, handler)
            return handler

        return register

    def add(self, key: Key, handler: H, *, replace: bool = False) -> H | None:
        """Register `handler` for `key`; gives the handler it replaced, if any.

        A key that already has a handler is an error unless `replace` is set:
        two lowerings of one op would otherwise depend on import order.
        """
        self.check_key(key)
        if not callable(handler):
            raise RungError(
                f"a {self.what} lowering must be callable, not {type(handler).__name__}"
            )
        old = self._handlers.get(key)
        if old is not None and not replace:
            raise RungError(
                f"{key_name(key)} already has a {self.what} lowering "
                "(pass replace=True to override it)"
            )
        self._handlers[key] = handler
        return old

    def remove(self, key: Key) -> H:
        """Unregister the handler of `key` and give it back."""
        try:
            return self._handlers.pop(key)
        except (KeyError, TypeError):
            raise RungError(f"{_describe(key)} has no {self.what} lowering to remove") from None

    def check_key(self, key: Key) -> None:
        """Refuse keys this table can never look up, with a message saying what it takes."""
        if isinstance(key, tuple):
            if self.custom_key is None:
                raise RungError(f"{self.what} lowerings are keyed by op class, not {key!r}")
            if len(key) != 2 or not all(isinstance(k, str) and k for k in key):
                raise RungError(f"a custom op key is (domain, op_type), not {key!r}")
            return
        if not (isinstance(key, type) and issubclass(key, self.op_classes)):
            kinds = ", ".join(c.__name__ for c in self.op_classes)
            raise RungError(
                f"{self.what} lowerings are registered for op classes ({kinds}), "
                f"not {_describe(key)}"
            )

    # ---- lookup --------------------------------------------------------------------

    def lookup(self, op: Operation) -> H | None:
        """The handler for `op`: by its custom key, else by its class (or a base class)."""
        if self.custom_key is not None:
            key = self.custom_key(op)
            if key is not None and key in self._handlers:
                return self._handlers[key]
        for cls in type(op).__mro__:
            handler = self._handlers.get(cls)
            if handler is not None:
                return handler
        return None

    def get(self, key: Key) -> H | None:
        return self._handlers.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._handlers

    def __iter__(self) -> Iterator[Key]:
        return iter(list(self._handlers))

    def __len__(self) -> int:
        return len(self._handlers)


def _describe(key: object) -> str:
    if isinstance(key, type) and issubclass(key, Operation):
        return key_name(key)
    if isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key):
        return key_name(key)  # type: ignore[arg-type]
    if isinstance(key, type):
        return f"class {key.__name__}"
    return repr(key)


__all__ = ["HandlerTable", "Key", "key_name"]
