from vecpack.core import normalise
