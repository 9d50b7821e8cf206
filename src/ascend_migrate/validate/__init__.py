"""Validation of a port: the checklist as data, static checks over the ported tree, golden-output
capture and comparison, loss curves, a two-process DDP smoke run, and one verdict.

Nothing here imports torch at import time; the dynamic parts import it when they run.
"""
