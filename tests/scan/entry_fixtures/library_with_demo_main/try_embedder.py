from textkit import Embedder, Vocab


def main():
    vocab = Vocab("some text")
    print(Embedder(vocab).cuda())


if __name__ == "__main__":
    main()
