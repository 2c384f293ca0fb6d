"""Where embedding and LLM calls run: this process (``local``) or a Ray cluster (``ray``)."""
