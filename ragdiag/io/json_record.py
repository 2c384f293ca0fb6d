"""Result documents as dataclasses that give back exactly the JSON they were read from.

:class:`JsonRecord` is the one base of every typed result (correlate, robustness, sweep, LLM run
summaries …). ``from_json(doc)`` fills the declared fields, keeps every other key in ``extra`` and
remembers the file's key order in ``present``; ``to_json()`` writes the keys back in that order, so
``Cls.from_json(doc).to_json() == doc``, key order included. A declared field whose key the file did
not hold stays at its default and is not written back (``has`` tells the two apart).

Class attributes: ``nested`` maps a key to the record type of its value (a list is read item by
item); ``per_kind = (field, type)`` collects every other object-valued key into that dict field
(correlate's per-correlation-kind entries: ``spearman``, ``pearson`` …).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound="JsonRecord")

_OWN = frozenset({"present", "extra"})


def plain(value: Any) -> Any:
    """``value`` with every record in it (at any depth of lists and dicts) turned into its JSON."""
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


@dataclass(kw_only=True)
class JsonRecord:
    """A JSON object with named fields: the keys it had (``present``, in order) and the unnamed ones (``extra``)."""

    present: tuple[str, ...] = field(default=(), repr=False, compare=False)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {}
    per_kind: ClassVar[tuple[str, type[JsonRecord]] | None] = None

    @classmethod
    def named(cls) -> tuple[str, ...]:
        """The declared fields, in declaration order (the per-kind dict aside)."""
        skip = _OWN | ({cls.per_kind[0]} if cls.per_kind else set())
        return tuple(f.name for f in fields(cls) if f.name not in skip)

    @classmethod
    def from_json(cls: type[T], doc: dict[str, Any]) -> T:
        named, values, extra, kinds = set(cls.named()), {}, {}, {}
        for key, value in doc.items():
            if key in named:
                values[key] = cls.read(key, value)
            elif cls.per_kind and isinstance(value, dict):
                kinds[key] = cls.per_kind[1].from_json(value)
            else:
                extra[key] = value
        if cls.per_kind:
            values[cls.per_kind[0]] = kinds
        return cls(present=tuple(doc), extra=extra, **values)

    @classmethod
    def read(cls, key: str, value: Any) -> Any:
        """A declared key's value as stored: a nested record (or a list of them) when ``nested`` says so."""
        kind = cls.nested.get(key)
        if kind is None or value is None:
            return value
        return [kind.from_json(v) for v in value] if isinstance(value, list) else kind.from_json(value)

    def field_value(self, key: str) -> Any:
        """The value written for a declared key (a subclass may keep it elsewhere)."""
        return getattr(self, key)

    def to_json(self) -> dict[str, Any]:
        kinds = getattr(self, self.per_kind[0]) if self.per_kind else {}
        order = self.present or tuple(k for k in self.named() if getattr(self, k) is not None)
        order = (*order, *(k for k in self.extra if k not in order))
        out = {}
        for key in order:
            if key in self.extra:
                out[key] = self.extra[key]
            elif key in kinds:
                out[key] = kinds[key].to_json()
            else:
                out[key] = plain(self.field_value(key))
        return out

    def has(self, key: str) -> bool:
        """Whether the document holds ``key`` (a field can be ``None`` because it is absent or null)."""
        return key in self.present or key in self.extra

    def get(self, key: str, default: Any = None) -> Any:
        """A key the dataclass does not declare (``extra``), or a declared one by name."""
        if key in self.named():
            value = getattr(self, key)
            return default if value is None and not self.has(key) else value
        return self.extra.get(key, default)

    def add(self, key: str, value: Any) -> None:
        """Set a declared field, appending its key after the ones already written (as ``doc[key] = value``)."""
        setattr(self, key, value)
        if key not in self.present:
            self.present = (*self.present, key)
