"""Applies `--key=value` pairs from the command line to the globals of the script that runs this
file with exec(); it is never imported."""
import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    key, _, value = arg.lstrip("-").partition("=")
    try:
        globals()[key] = literal_eval(value)
    except (ValueError, SyntaxError):
        globals()[key] = value
