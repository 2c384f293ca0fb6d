"""Every result a command writes, as a typed record on one base (:class:`ragdiag.results.base.JsonRecord`):
``from_json(doc)`` reads a file of this or an earlier version, ``to_json()`` gives back the JSON on disk,
key order included. One module per command family; nothing here computes, reads or writes a file."""
