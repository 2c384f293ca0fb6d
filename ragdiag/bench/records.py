"""Result documents as dataclasses that give back exactly the JSON they were read from.

:class:`JsonRecord` is a dataclass mixin: ``from_json(doc)`` fills the declared fields (``None`` when a
key is absent: files written by older versions, or a mode without that key), keeps every other key in
``extra`` and remembers the key order; ``to_json()`` writes the keys back in that order, so
``Cls.from_json(doc).to_json() == doc`` with the same key order. Nested records (a list of points,
a meta block) are named in ``NESTED``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound="JsonRecord")

_OWN = ("extra", "key_order")


class JsonRecord:
    """Mixin for dataclasses with ``extra: dict`` and ``key_order: tuple`` as their last fields."""

    NESTED: ClassVar[dict[str, type[JsonRecord]]] = {}  # key -> record type (a list of them when the value is a list)

    extra: dict[str, Any]
    key_order: tuple[str, ...]

    @classmethod
    def declared(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.name not in _OWN)  # type: ignore[arg-type]

    @classmethod
    def from_json(cls: type[T], doc: dict[str, Any]) -> T:
        names = set(cls.declared())
        values = {key: cls._read(key, value) for key, value in doc.items() if key in names}
        extra = {key: value for key, value in doc.items() if key not in names}
        return cls(**values, extra=extra, key_order=tuple(doc))  # type: ignore[call-arg]

    @classmethod
    def _read(cls, key: str, value: Any) -> Any:
        kind = cls.NESTED.get(key)
        if kind is None or value is None:
            return value
        return [kind.from_json(v) for v in value] if isinstance(value, list) else kind.from_json(value)

    def has(self, key: str) -> bool:
        """Whether the document holds ``key`` (a field can be ``None`` because it is absent or null)."""
        return key in self.key_order or key in self.extra

    def to_json(self) -> dict[str, Any]:
        declared = set(self.declared())
        order = self.key_order or tuple(k for k in self.declared() if getattr(self, k) is not None)
        order = (*order, *(k for k in self.extra if k not in order))
        return {key: _write(getattr(self, key) if key in declared else self.extra[key]) for key in order}

    def get(self, key: str, default: Any = None) -> Any:
        """A key the dataclass does not declare (``extra``), or a declared one by name."""
        if key in set(self.declared()):
            value = getattr(self, key)
            return default if value is None and not self.has(key) else value
        return self.extra.get(key, default)


def _write(value: Any) -> Any:
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, list):
        return [_write(v) for v in value]
    return value
