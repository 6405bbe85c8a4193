"""trinogen: Trino cluster documents in MongoDB -> the GitOps repository Argo CD deploys from."""

__version__ = "0.1.0"
