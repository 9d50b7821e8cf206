"""The Python analyser's parts: one walk of a module's tree, shared name resolution and context,
and one module per rule family (see ARCHITECTURE.md).

Floors, lowest first; a module imports only from floors below its own:
`visitor`, `registry`, `nodes` -> `source`, `resolver` -> `reporting` -> `context` -> the
family modules -> `scan/python_ast.py`, which composes them into `PythonAnalyzer`.
"""
