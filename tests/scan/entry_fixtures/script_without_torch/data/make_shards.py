"""Splits a text corpus into shards; needs no torch."""
import sys


def main(path, shards=4):
    lines = open(path).read().splitlines()
    for i in range(shards):
        with open(f"{path}.{i}", "w") as out:
            out.write("\n".join(lines[i::shards]))


if __name__ == "__main__":
    main(sys.argv[1])
