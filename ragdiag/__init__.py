"""ragdiag: which retrieval numbers predict RAG answer quality, and where retrieval breaks."""

__version__ = "0.1.0"
