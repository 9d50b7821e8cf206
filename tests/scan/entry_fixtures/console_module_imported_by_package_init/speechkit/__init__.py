"""Users write `import speechkit; speechkit.transcribe(...)`: the package re-exports the function."""
from speechkit.transcribe import transcribe
