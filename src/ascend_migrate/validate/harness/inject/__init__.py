"""The folder put first on a child interpreter's PYTHONPATH (harness.SITE_DIR).

It holds `sitecustomize.py` and the private package `_ascend_migrate_harness`, both standard
library only: they run inside whatever interpreter runs the project, which need not have this
toolkit installed. Importing this package does nothing.
"""
