"""A module the Ray engine tests look up but must never import: the package check finds modules
without importing them (a worker importing torch only to check cost seconds per run)."""

raise RuntimeError("tests.engine.import_refused was imported: the package check must only look modules up")
