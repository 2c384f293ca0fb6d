"""``ragdiag triage``: interventions that attribute each failing answer to a cause, and eRAG utility labels."""
