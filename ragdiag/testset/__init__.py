"""Synthetic test collections (``ragdiag testset``) and the certificate of how far one label set
ranks systems like another (``ragdiag testset certify``)."""
