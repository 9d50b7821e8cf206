from textkit.vocab import Vocab
from textkit.embed import Embedder
