"""Result documents as dataclasses that give back exactly the JSON they were read from.

:class:`JsonRecord` is the one base of every typed result (correlate, evaluate, robustness, sweep,
probes, LLM run manifests …) and its two methods are the only way in and out: ``from_json(doc)``
fills the declared fields, keeps every other key in ``extra`` and remembers the file's key order in
``present``; ``to_json()`` writes the keys back in that order, so ``Cls.from_json(doc).to_json() ==
doc``, key order included. A declared field whose key the file did not hold stays at its default
(``None`` for a field without one) and is not written back (``has`` tells the two apart).

A record built in code (``present`` empty) writes its declared fields in declaration order, or the
keys of ``layout`` when a class names them (a key there that is no field is computed by
``field_value``). ``optional`` says which ``None`` fields it leaves out: ``None`` (the default) leaves
out every ``None`` field, a set only those named (the others are written as ``null``).

Class attributes: ``nested`` maps a key to the record type of its value (a list is read item by
item); ``nested_map`` maps a key to the record type of the values of its object (``{"P": {...}}``);
``per_kind = (field, type)`` collects every other object-valued key into that dict field
(correlate's per-correlation-kind entries: ``spearman``, ``pearson`` …); ``flat = (field, type)``
reads the keys of that record type from this object itself (an LLM summary's call counters).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from pathlib import PurePath
from typing import Any, ClassVar, TypeVar

T = TypeVar("T", bound="JsonRecord")

_OWN = frozenset({"present", "extra"})


def plain(value: Any) -> Any:
    """``value`` as JSON: every record in it (at any depth of lists and dicts) turned into its JSON,
    tuples into lists, paths into strings."""
    if isinstance(value, JsonRecord):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, PurePath):
        return str(value)
    return value


@dataclass(kw_only=True)
class JsonRecord:
    """A JSON object with named fields: the keys it had (``present``, in order) and the unnamed ones (``extra``)."""

    present: tuple[str, ...] = field(default=(), repr=False, compare=False)
    extra: dict[str, Any] = field(default_factory=dict, repr=False)
    nested: ClassVar[dict[str, type[JsonRecord]]] = {}
    nested_map: ClassVar[dict[str, type[JsonRecord]]] = {}
    per_kind: ClassVar[tuple[str, type[JsonRecord]] | None] = None
    flat: ClassVar[tuple[str, type[JsonRecord]] | None] = None
    optional: ClassVar[frozenset[str] | None] = None
    layout: ClassVar[tuple[str, ...] | None] = None

    @classmethod
    def named(cls) -> tuple[str, ...]:
        """The declared fields, in declaration order (the per-kind dict and the flat record aside)."""
        skip = _OWN | {part[0] for part in (cls.per_kind, cls.flat) if part}
        return tuple(f.name for f in fields(cls) if f.name not in skip and f.init)

    @classmethod
    def from_json(cls: type[T], doc: dict[str, Any]) -> T:
        """The record of ``doc`` (a file of this or an earlier version; a missing field is its default or None)."""
        named, values, extra, kinds = set(cls.named()), {}, {}, {}
        flat_keys = set(cls.flat[1].named()) if cls.flat else set()
        for key, value in doc.items():
            if key in named:
                values[key] = cls.read(key, value)
            elif key in flat_keys:
                continue
            elif cls.per_kind and isinstance(value, dict):
                kinds[key] = cls.per_kind[1].from_json(value)
            else:
                extra[key] = value
        if cls.per_kind:
            values[cls.per_kind[0]] = kinds
        if cls.flat:
            values[cls.flat[0]] = cls.flat[1].from_json({k: v for k, v in doc.items() if k in flat_keys})
        for f in fields(cls):
            if f.init and f.name not in values and f.default is MISSING and f.default_factory is MISSING:
                values[f.name] = None
        return cls(present=tuple(doc), extra=extra, **values)

    @classmethod
    def read(cls, key: str, value: Any) -> Any:
        """A declared key's value as stored: a nested record (or a list or an object of them) when
        ``nested`` or ``nested_map`` says so."""
        if value is None:
            return None
        if key in cls.nested_map:
            of = cls.nested_map[key]
            return {name: None if v is None else of.from_json(v) for name, v in value.items()}
        kind = cls.nested.get(key)
        if kind is None:
            return value
        return [kind.from_json(v) for v in value] if isinstance(value, list) else kind.from_json(value)

    def field_value(self, key: str) -> Any:
        """The value written for a key: a declared field, a key of the flat record, or (in a subclass)
        a computed one."""
        if self.flat and key not in self.named() and key in self.flat[1].named():
            return getattr(getattr(self, self.flat[0]), key)
        return getattr(self, key)

    def fresh_keys(self) -> tuple[str, ...]:
        """The keys a record built in code writes, in order (``layout``, else the declared fields and
        the flat record's keys where the flat field is declared); ``optional`` ``None`` fields left out."""
        if self.layout is not None:
            keys = self.layout
        else:
            keys = ()
            for f in fields(self):
                if self.flat and f.name == self.flat[0]:
                    keys = (*keys, *self.flat[1].named())
                elif f.name not in _OWN and f.init and not (self.per_kind and f.name == self.per_kind[0]):
                    keys = (*keys, f.name)
        leave_out = self.optional
        return tuple(k for k in keys if not (self.field_value(k) is None and (leave_out is None or k in leave_out)))

    def to_json(self) -> dict[str, Any]:
        """The JSON document: the keys read, in their order, or a fresh record's keys; ``extra`` after them."""
        kinds = getattr(self, self.per_kind[0]) if self.per_kind else {}
        order = self.present or self.fresh_keys()
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
